// Package explore runs exploration campaigns (`simrun explore`,
// docs/INTERFACE.md): one scenario over many seeds with random fault
// schedules, every run judged by the anomaly oracles and invariant checkers
// (harness.RunOracles); each finding is shrunk (harness.Shrink), deduplicated
// by a signature and written as a scenario file with its reproduction.
//
// Runs are executed by a pool of goroutines (the only concurrency: each run
// is a pure function of scenario and seed), and their results are consumed
// in seed order, so a campaign's findings, signatures and index do not
// depend on the number of workers. The campaign is resumable: its state is
// an index file in the output directory, rewritten atomically.
package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// SwarmDefault selects the generic fault mix (generic.go).
const SwarmDefault = "default"

// MaxSeeds bounds one campaign (a limit on everything).
const MaxSeeds = 100_000_000

// IndexFile is the campaign's index in the output directory.
const IndexFile = "findings.json"

// Config is one campaign.
type Config struct {
	Scenario *scenario.Scenario
	// Source and Data are the scenario file's name and text: a finding's
	// scenario.yaml is this text with the shrunk faults written in.
	Source string
	Data   []byte
	// Command is how a user reruns a finding's file, before the file
	// name: e.g. "simrun run". Sets are the campaign's --set overrides,
	// already applied to Data (so a finding's file needs none); they are
	// part of the campaign's identity in the index.
	Command string
	Sets    []string
	// Swarm is "" (the scenario's own swarm: block, if any) or
	// SwarmDefault (the generic mix). FileFaults keeps the file's faults:
	// beside the generic mix (with "" they are always kept). Without it,
	// add-partitions entries stay anyway: they are the topics' history
	// (an operator's change), part of the environment like the topics
	// themselves, not a failure the mix replaces.
	Swarm      string
	FileFaults bool
	// Without leaves these kinds out of the generic mix (GenericKinds).
	Without   []string
	FirstSeed uint64
	Seeds     int
	Workers   int
	// Out is the findings directory ("" writes nothing).
	Out string
	// Budget stops the campaign after this much wall time (0: none).
	Budget time.Duration
	// ShrinksPerOracle bounds the findings shrunk per oracle (0: 3); later
	// runs that fire an oracle whose budget is spent are counted, not shrunk.
	ShrinksPerOracle int
	// ShrinkRuns bounds the runs of one shrink (0: 1,000).
	ShrinkRuns int
	// Progress, when set, receives a progress line about every ProgressEvery.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Artifacts, when set, writes extra files for a finding into dir (the
	// CLI draws the timeline PNG).
	Artifacts func(dir string, sc *scenario.Scenario, seed uint64, res *harness.Result) error
	// Only, when set, restricts findings to these oracles (others are
	// ignored), e.g. the oracle a library bug is known by.
	Only []string
	// Clock is the wall clock for budgets and progress (nil: time.Now).
	Clock func() time.Time
	// StopAtFirst ends the campaign at the first run (in seed order) with a
	// finding, without shrinking it: the rediscovery measurement's "seeds
	// to the first finding".
	StopAtFirst bool
}

// Finding is one distinct finding of a campaign.
type Finding struct {
	Signature string   `json:"signature"`
	Oracle    string   `json:"oracle"`
	Seed      uint64   `json:"seed"`
	Message   string   `json:"message"`
	Faults    []string `json:"faults"`      // the shrunk fault list, as the file writes it
	FromFault int      `json:"from_faults"` // faults in the run before shrinking
	Runs      int      `json:"runs"`        // runs (seeds) that showed this signature
	Shrunk    bool     `json:"shrunk"`
	Repro     string   `json:"reproduce"`
}

// Index is the campaign's state (IndexFile), enough to resume it.
type Index struct {
	Version   int      `json:"version"`
	Scenario  string   `json:"scenario"`
	Swarm     string   `json:"swarm"`
	Without   []string `json:"without,omitempty"`
	Sets      []string `json:"sets"`
	FirstSeed uint64   `json:"first_seed"`
	// NextSeed: every seed in [FirstSeed, NextSeed) has been run and judged.
	NextSeed         uint64         `json:"next_seed"`
	Runs             int            `json:"runs"`
	RunsWithFindings int            `json:"runs_with_findings"`
	Shrinks          map[string]int `json:"shrinks"` // shrinks spent per oracle
	// Unshrunk counts, per oracle, the runs that fired it after its shrink
	// budget was spent.
	Unshrunk map[string]int `json:"unshrunk"`
	Findings []Finding      `json:"findings"` // distinct, in order of first seed
	// FirstFindingSeed is the first seed (in order) with any finding, 0 when none.
	FirstFindingSeed uint64 `json:"first_finding_seed"`
}

// Report is what a campaign did.
type Report struct {
	Index
	// Stopped says why it ended: "seeds" (all run), "time" (--time) or
	// "first" (StopAtFirst).
	Stopped string
	// Wall is the campaign's wall time; FirstFindingWall the wall time
	// from its start to the first finding's seed being judged (before
	// shrinking), 0 when none or when resumed past it.
	Wall, FirstFindingWall time.Duration
}

const indexVersion = 1

// SeedScenario is the scenario one seed of the campaign runs: with the
// generic mix, a copy whose faults are the file's (when kept) plus the mix
// drawn from the seed, and no swarm.
func SeedScenario(cfg *Config, seed uint64) (*scenario.Scenario, error) {
	if cfg.Swarm != SwarmDefault {
		return cfg.Scenario, nil
	}
	sc := *cfg.Scenario
	from, until, err := GenericWindow(&sc, tail(&sc))
	if err != nil {
		return nil, err
	}
	var fs []scenario.Fault
	for _, f := range sc.Faults {
		if cfg.FileFaults || f.Kind == scenario.FaultAddPartitions {
			fs = append(fs, f)
		}
	}
	fs = append(fs, GenericFaults(&sc, seed, from, until, cfg.Without...)...)
	scenario.SortFaults(fs)
	sc.Faults, sc.Swarm = fs, nil
	return &sc, nil
}

// tail is the quiet time the generic mix leaves at the end of a run: the
// oracles' settle bound (harness.SettleBound) plus a minute, so that a
// stuck group or a member that never rejoins outlasts its threshold.
func tail(sc *scenario.Scenario) time.Duration {
	return harness.SettleBound(sc) + time.Minute
}

type result struct {
	seed     uint64
	findings []harness.Finding
	faults   int
	err      error
}

// Run runs the campaign.
func Run(cfg Config) (*Report, error) {
	if cfg.Seeds <= 0 || cfg.Seeds > MaxSeeds {
		return nil, fmt.Errorf("explore: --seeds %d: want 1..%d", cfg.Seeds, MaxSeeds)
	}
	if cfg.FirstSeed > math.MaxUint64-uint64(cfg.Seeds) {
		return nil, fmt.Errorf("explore: --first-seed %d + --seeds %d overflows", cfg.FirstSeed, cfg.Seeds)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.ShrinksPerOracle <= 0 {
		cfg.ShrinksPerOracle = 3
	}
	if cfg.ShrinkRuns <= 0 {
		cfg.ShrinkRuns = 1000
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 2 * time.Second
	}
	if cfg.FirstSeed == 0 {
		cfg.FirstSeed = 1
	}
	if _, err := SeedScenario(&cfg, cfg.FirstSeed); err != nil {
		return nil, err
	}
	for _, k := range cfg.Without {
		if !slices.Contains(GenericKinds(), k) {
			return nil, fmt.Errorf("explore: unknown fault kind %q; the generic mix has %s", k, strings.Join(GenericKinds(), ", "))
		}
	}
	rep := &Report{Index: Index{Version: indexVersion, Scenario: cfg.Source, Swarm: cfg.Swarm, Without: cfg.Without, Sets: cfg.Sets,
		FirstSeed: cfg.FirstSeed, NextSeed: cfg.FirstSeed, Shrinks: map[string]int{}, Unshrunk: map[string]int{}}}
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return nil, err
		}
		if err := rep.resume(&cfg); err != nil {
			return nil, err
		}
	}
	last := cfg.FirstSeed + uint64(cfg.Seeds) // exclusive
	start := cfg.Clock()
	bySig := map[string]int{}
	for i, f := range rep.Findings {
		bySig[f.Signature] = i
	}

	// The pool: seeds go out in order; at most window results wait.
	window := 4 * cfg.Workers
	seeds := make(chan uint64)
	results := make(chan result, window)
	stop := make(chan struct{})
	done := make(chan struct{})
	for w := 0; w < cfg.Workers; w++ {
		go func() {
			for s := range seeds {
				results <- runSeed(&cfg, s)
			}
			done <- struct{}{}
		}()
	}
	go func() {
		defer close(seeds)
		for s := rep.NextSeed; s < last; s++ {
			select {
			case seeds <- s:
			case <-stop:
				return
			}
		}
	}()
	// Bound the lookahead: a worker may only take a seed when fewer than
	// window results are waiting (results is buffered by window).
	pending := map[uint64]result{}
	rep.Stopped = "seeds"
	lastProgress := start
	var err error
	for rep.NextSeed < last {
		r, ok := pending[rep.NextSeed]
		if !ok {
			r = <-results
			pending[r.seed] = r
			continue
		}
		delete(pending, rep.NextSeed)
		if r.err != nil {
			err = fmt.Errorf("seed %d: %w", r.seed, r.err)
			break
		}
		if cfg.StopAtFirst && len(r.findings) > 0 {
			rep.RunsWithFindings++
			rep.FirstFindingSeed = r.seed
			rep.NextSeed++
			rep.Runs++
			rep.FirstFindingWall = cfg.Clock().Sub(start)
			rep.Stopped = "first"
			rep.Findings = append(rep.Findings, Finding{Signature: Signature(r.findings[0].Oracle, nil), Oracle: r.findings[0].Oracle,
				Seed: r.seed, Message: r.findings[0].Message, FromFault: r.faults, Runs: 1})
			break
		}
		if e := rep.judge(&cfg, r, bySig); e != nil {
			err = e
			break
		}
		rep.NextSeed++
		rep.Runs++
		if rep.FirstFindingSeed == r.seed {
			rep.FirstFindingWall = cfg.Clock().Sub(start)
		}
		now := cfg.Clock()
		if cfg.Progress != nil && now.Sub(lastProgress) >= cfg.ProgressEvery {
			lastProgress = now
			rep.progress(cfg.Progress, now.Sub(start), int(last-rep.NextSeed))
		}
		if cfg.Out != "" && (rep.Runs%500 == 0) {
			if err = rep.save(&cfg); err != nil {
				break
			}
		}
		if cfg.Budget > 0 && now.Sub(start) >= cfg.Budget {
			rep.Stopped = "time"
			break
		}
	}
	close(stop)
	go func() { // drain so the workers end
		for range results {
		}
	}()
	for w := 0; w < cfg.Workers; w++ {
		<-done
	}
	close(results)
	rep.Wall = cfg.Clock().Sub(start)
	if err != nil {
		return nil, err
	}
	if cfg.Out != "" {
		if err := rep.save(&cfg); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func runSeed(cfg *Config, seed uint64) result {
	sc, err := SeedScenario(cfg, seed)
	if err != nil {
		return result{seed: seed, err: err}
	}
	fs, err := judgeRun(sc, seed)
	if err != nil {
		return result{seed: seed, err: err}
	}
	if len(cfg.Only) > 0 {
		fs = slices.DeleteFunc(fs, func(f harness.Finding) bool { return !slices.Contains(cfg.Only, f.Oracle) })
	}
	return result{seed: seed, findings: fs, faults: len(harness.ExpandFaults(sc, seed))}
}

// OraclePanic names the finding of a run in which the models panicked
// (a simulator bug: scenario files must never make it panic).
const OraclePanic = "panic"

// judgeRun runs one seed with the oracles; a panic in the models is a
// finding (OraclePanic), not the end of the campaign.
func judgeRun(sc *scenario.Scenario, seed uint64) (fs []harness.Finding, err error) {
	defer func() {
		if p := recover(); p != nil {
			fs, err = []harness.Finding{{Oracle: OraclePanic, Message: fmt.Sprint(p)}}, nil
		}
	}()
	_, fs, err = harness.RunOracles(sc, seed, harness.Options{})
	return fs, err
}

// judge handles one seed's result, in seed order: the run's first finding
// (findings are sorted) is shrunk while its oracle has budget, and recorded
// under its signature.
func (rep *Report) judge(cfg *Config, r result, bySig map[string]int) error {
	if len(r.findings) == 0 {
		return nil
	}
	rep.RunsWithFindings++
	if rep.FirstFindingSeed == 0 {
		rep.FirstFindingSeed = r.seed
	}
	f := r.findings[0]
	if rep.Shrinks[f.Oracle] >= cfg.ShrinksPerOracle {
		rep.Unshrunk[f.Oracle]++
		return nil
	}
	rep.Shrinks[f.Oracle]++
	sc, err := SeedScenario(cfg, r.seed)
	if err != nil {
		return err
	}
	holds := func(s *scenario.Scenario) bool {
		fs, err := judgeRun(s, r.seed)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(fs, func(x harness.Finding) bool { return x.Oracle == f.Oracle })
	}
	faults := harness.ExpandFaults(sc, r.seed)
	shrunk, shrinkErr := harness.ShrinkScenario(sc, r.seed, holds, cfg.ShrinkRuns)
	ok := shrinkErr == nil
	if ok {
		faults = shrunk.Faults
	}
	sig := Signature(f.Oracle, faults)
	if i, seen := bySig[sig]; seen {
		rep.Findings[i].Runs++
		return nil
	}
	fd := Finding{Signature: sig, Oracle: f.Oracle, Seed: r.seed, Message: f.Message, FromFault: r.faults, Runs: 1, Shrunk: ok}
	for _, x := range faults {
		fd.Faults = append(fd.Faults, scenario.FormatFault(x))
	}
	fd.Repro = cfg.repro(sig, r.seed)
	bySig[sig] = len(rep.Findings)
	rep.Findings = append(rep.Findings, fd)
	if cfg.Out == "" {
		return nil
	}
	if err := cfg.write(fd, sc, faults); err != nil {
		return err
	}
	return rep.save(cfg)
}

// Signature names a finding by its oracle and the shape of its (shrunk)
// fault list: the fault kinds in time order, targets left out, so the same
// bug reached through different members or instants is one finding. Broker
// crashes and host-downs are told from member ones.
func Signature(oracle string, faults []scenario.Fault) string {
	var kinds []string
	for _, f := range faults {
		k := string(f.Kind)
		if (f.Kind == scenario.FaultCrash || f.Kind == scenario.FaultHostDown) &&
			(f.Target == scenario.CoordinatorName || strings.HasPrefix(f.Target, "broker-")) {
			k = "broker-" + k
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return oracle + "--no-faults"
	}
	return oracle + "--" + strings.Join(kinds, "+")
}

func (cfg *Config) dir(sig string) string { return filepath.Join(cfg.Out, sig) }

func (cfg *Config) repro(sig string, seed uint64) string {
	file := filepath.Join(sig, "scenario.yaml")
	if cfg.Out != "" {
		file = filepath.Join(cfg.Out, file)
	}
	return fmt.Sprintf("%s %s --seed %d", cfg.Command, file, seed)
}

// write puts a finding's files in DIR/<signature>/: scenario.yaml (the
// scenario with the shrunk faults, its header saying what fired and how to
// rerun it), explain.txt (`simrun explain` of the run) and whatever
// Artifacts adds.
func (cfg *Config) write(fd Finding, sc *scenario.Scenario, faults []scenario.Fault) error {
	dir := cfg.dir(fd.Signature)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	body, err := scenario.WithFaults(cfg.Source, cfg.Data, faults)
	if err != nil {
		return err
	}
	shrunk := "shrunk"
	if !fd.Shrunk {
		shrunk = "NOT shrunk (shrink gave up)"
	}
	head := fmt.Sprintf("# simrun explore finding %s\n# oracle %s fired with seed %d: %s\n# faults: %d drawn, %d kept (%s)\n# reproduce: %s\n",
		fd.Signature, fd.Oracle, fd.Seed, oneLine(fd.Message), fd.FromFault, len(faults), shrunk, fd.Repro)
	if err := atomicfile.WriteFile(filepath.Join(dir, "scenario.yaml"), append([]byte(head), body...)); err != nil {
		return err
	}
	rsc := *sc
	rsc.Faults, rsc.Swarm = faults, nil
	if fd.Oracle == OraclePanic {
		return nil // no trace to explain or draw: the run does not finish
	}
	res, err := harness.Run(&rsc, fd.Seed, harness.Options{KeepTrace: true})
	if err != nil {
		return err
	}
	var b strings.Builder
	// Explain's cost grows with evictions × trace length: explain the
	// trace up to the maxExplained-th eviction or dead mark.
	tr, total := res.Trace, 0
	for i := range res.Trace {
		if k := res.Trace[i].Kind; k == protocol.EvMemberRemoved || k == protocol.EvCoordinatorDead {
			if total++; total == maxExplained+1 {
				tr = res.Trace[:i]
			}
		}
	}
	obs := res.Observations
	for len(obs) > 0 && obs[len(obs)-1].Seq >= int64(len(tr)) {
		obs = obs[:len(obs)-1]
	}
	xs := tracing.Explain(&rsc, tr, obs, "")
	fmt.Fprintf(&b, "scenario %s, seed %d: oracle %s: %s\n%d evictions and coordinator-dead marks explained", sc.Name, fd.Seed, fd.Oracle, fd.Message, len(xs))
	if len(tr) < len(res.Trace) {
		fmt.Fprintf(&b, " (the first ones of the trace; run simrun explain for all)")
	}
	b.WriteString("\n")
	for _, x := range xs {
		b.WriteString("\n")
		b.WriteString(x.String())
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "explain.txt"), []byte(b.String())); err != nil {
		return err
	}
	if cfg.Artifacts != nil {
		return cfg.Artifacts(dir, &rsc, fd.Seed, res)
	}
	return nil
}

// maxExplained bounds the evictions and dead marks a finding's explain.txt
// covers.
const maxExplained = 20

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

func (rep *Report) save(cfg *Config) error {
	b, err := json.MarshalIndent(&rep.Index, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(cfg.Out, IndexFile), append(b, '\n'))
}

// resume loads the index of an earlier run of the same campaign.
func (rep *Report) resume(cfg *Config) error {
	b, err := os.ReadFile(filepath.Join(cfg.Out, IndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return fmt.Errorf("explore: %s: %w", filepath.Join(cfg.Out, IndexFile), err)
	}
	if ix.Version != indexVersion || ix.Scenario != rep.Scenario || ix.Swarm != rep.Swarm || !slices.Equal(ix.Without, rep.Without) ||
		!slices.Equal(ix.Sets, rep.Sets) || ix.FirstSeed != rep.FirstSeed {
		return fmt.Errorf("explore: %s holds another campaign (scenario %s, swarm %q, sets %v, first seed %d); use another --out",
			filepath.Join(cfg.Out, IndexFile), ix.Scenario, ix.Swarm, ix.Sets, ix.FirstSeed)
	}
	if ix.Shrinks == nil {
		ix.Shrinks = map[string]int{}
	}
	if ix.Unshrunk == nil {
		ix.Unshrunk = map[string]int{}
	}
	rep.Index = ix
	return nil
}

func (rep *Report) progress(w io.Writer, wall time.Duration, left int) {
	rate := float64(rep.Runs) / wall.Seconds()
	eta := "?"
	if rate > 0 {
		eta = durfmt.Human(time.Duration(float64(left) / rate * float64(time.Second)))
	}
	fmt.Fprintf(w, "explore: %d runs (next seed %d), %.1f runs/s, %d runs with findings, %d distinct, ETA %s\n",
		rep.Runs, rep.NextSeed, rate, rep.RunsWithFindings, len(rep.Findings), eta)
}
