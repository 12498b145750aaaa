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
	"context"
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
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/internal/outdir"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// SwarmDefault selects the generic fault mix (generic.go).
const SwarmDefault = "default"

// SwarmNone runs the file's own faults (and swarm:, if any) on every seed:
// re-judging a finding's scenario, or a scenario whose faults are placed
// by hand, over the seeds' latency draws and phases.
const SwarmNone = "none"

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
	// Without leaves these kinds out of the generic mix (GenericKinds);
	// With adds opt-in kinds to it (OptInKinds).
	Without, With []string
	FirstSeed     uint64
	Seeds         int
	Workers       int
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
	// Ctx, when set, interrupts the campaign: Run stops judging, writes
	// the index of every seed judged so far and returns an error wrapping
	// context.Canceled. A finding being shrunk when it ends is dropped
	// (the index still names its seed as the next one), so a rerun with
	// the same --out judges it afresh and ends as the uninterrupted
	// campaign would have.
	Ctx context.Context
	// MaxMemory is each run's harness.Options.MaxMemory.
	MaxMemory int64
}

// CrashPoint, when set (tests), is called at each instant a campaign could
// be killed at: after each judged seed, in each shrink run, between the
// files of a finding and before the index is written. The kill-at-every-
// instant test (cmd/simrun) ends the process there with SIGKILL.
var CrashPoint func(point string)

func crashPoint(point string) {
	if CrashPoint != nil {
		CrashPoint(point)
	}
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
	// Class names the finding: a known bug, Kafka's behaviour, or
	// unclassified (Classify).
	Class Class `json:"class"`
}

// Index is the campaign's state (IndexFile), enough to resume it.
type Index struct {
	Version   int      `json:"version"`
	Scenario  string   `json:"scenario"`
	Swarm     string   `json:"swarm"`
	Without   []string `json:"without,omitempty"`
	With      []string `json:"with,omitempty"`
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
	fs = append(fs, GenericFaultsWith(&sc, seed, from, until, cfg.With, cfg.Without)...)
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
	if cfg.Ctx == nil {
		cfg.Ctx = context.Background()
	}
	if _, err := SeedScenario(&cfg, cfg.FirstSeed); err != nil {
		return nil, err
	}
	for _, k := range cfg.Without {
		if !slices.Contains(GenericKinds(), k) {
			return nil, fmt.Errorf("explore: unknown fault kind %q; the generic mix has %s", k, strings.Join(GenericKinds(), ", "))
		}
	}
	for _, k := range cfg.With {
		if !slices.Contains(OptInKinds(), k) {
			return nil, fmt.Errorf("explore: --with: unknown opt-in fault kind %q; the opt-in kinds are %s", k, strings.Join(OptInKinds(), ", "))
		}
	}
	rep := &Report{Index: Index{Version: indexVersion, Scenario: cfg.Source, Swarm: cfg.Swarm, Without: cfg.Without, With: cfg.With, Sets: cfg.Sets,
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
		if cfg.Ctx.Err() != nil {
			err = cfg.Ctx.Err()
			break
		}
		r, ok := pending[rep.NextSeed]
		if !ok {
			select {
			case r = <-results:
				pending[r.seed] = r
			case <-cfg.Ctx.Done():
			}
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
		wrote, e := rep.judge(&cfg, r, bySig)
		if e != nil {
			err = e
			break
		}
		rep.NextSeed++
		rep.Runs++
		// The index is saved with the seed counted as judged: saved
		// before (as it was), a resumed campaign judged the seed again,
		// spending its shrink budget twice.
		if wrote {
			if err = rep.save(&cfg); err != nil {
				break
			}
		}
		crashPoint("judged")
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
	if err != nil && errors.Is(err, context.Canceled) && cfg.Out != "" {
		// Interrupted: keep every seed judged so far.
		if serr := rep.save(&cfg); serr != nil {
			return nil, serr
		}
	}
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
	fs, err := judgeRun(sc, seed, cfg.MaxMemory)
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
func judgeRun(sc *scenario.Scenario, seed uint64, maxMemory int64) (fs []harness.Finding, err error) {
	defer func() {
		if p := recover(); p != nil {
			fs, err = []harness.Finding{{Oracle: OraclePanic, Message: fmt.Sprint(p)}}, nil
		}
	}()
	_, fs, err = harness.RunOracles(sc, seed, harness.Options{MaxMemory: maxMemory})
	return fs, err
}

// judge handles one seed's result, in seed order: the run's first finding
// (findings are sorted) is shrunk while its oracle has budget, and recorded
// under its signature. It reports whether it wrote a new finding's files
// (the caller then saves the index). The report is changed only once the
// shrink is done: an interrupt during it leaves the index as it was.
func (rep *Report) judge(cfg *Config, r result, bySig map[string]int) (bool, error) {
	if len(r.findings) == 0 {
		return false, nil
	}
	f := r.findings[0]
	count := func() {
		rep.RunsWithFindings++
		if rep.FirstFindingSeed == 0 {
			rep.FirstFindingSeed = r.seed
		}
	}
	if rep.Shrinks[f.Oracle] >= cfg.ShrinksPerOracle {
		count()
		rep.Unshrunk[f.Oracle]++
		return false, nil
	}
	sc, err := SeedScenario(cfg, r.seed)
	if err != nil {
		return false, err
	}
	holds := func(s *scenario.Scenario) bool {
		crashPoint("shrink")
		if cfg.Ctx.Err() != nil {
			return false // interrupted: the shrink ends at once, and is dropped
		}
		fs, err := judgeRun(s, r.seed, cfg.MaxMemory)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(fs, func(x harness.Finding) bool { return x.Oracle == f.Oracle })
	}
	faults := harness.ExpandFaults(sc, r.seed)
	shrunk, shrinkErr := harness.ShrinkScenario(sc, r.seed, holds, cfg.ShrinkRuns)
	if err := cfg.Ctx.Err(); err != nil {
		return false, err
	}
	count()
	rep.Shrinks[f.Oracle]++
	ok := shrinkErr == nil
	if ok {
		faults = shrunk.Faults
	}
	sig := Signature(f.Oracle, faults)
	if i, seen := bySig[sig]; seen {
		rep.Findings[i].Runs++
		return false, nil
	}
	fd := Finding{Signature: sig, Oracle: f.Oracle, Seed: r.seed, Message: f.Message, FromFault: r.faults, Runs: 1, Shrunk: ok}
	for _, x := range faults {
		fd.Faults = append(fd.Faults, scenario.FormatFault(x))
	}
	fd.Repro = cfg.repro(sig, f.Oracle, r.seed)
	if f.Oracle != OraclePanic {
		if fd.Class, err = Classify(cfg.Source, cfg.Data, r.seed, faults, f.Oracle, f.Message); err != nil {
			return false, err
		}
	}
	bySig[sig] = len(rep.Findings)
	rep.Findings = append(rep.Findings, fd)
	if cfg.Out == "" {
		return false, nil
	}
	if err := cfg.write(fd, sc, faults); err != nil {
		return false, err
	}
	return true, nil
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

// repro is the command that shows a finding to whoever it is handed to:
// the run judged by the oracle, exiting 4 when it fires.
func (cfg *Config) repro(sig, oracle string, seed uint64) string {
	file := filepath.Join(cfg.Out, sig, "scenario.yaml")
	if cfg.Out == "" {
		if cfg.Swarm != SwarmNone || cfg.Source == "" {
			// The finding's faults are in no file: only --out writes one.
			return ""
		}
		// The file's own faults are the finding's.
		file = strings.TrimPrefix(cfg.Source, "builtin:")
		for _, s := range cfg.Sets {
			file += " --set " + s
		}
	}
	if oracle == OraclePanic || !slices.Contains(scenario.OracleNames, oracle) {
		// A panic, or an invariant violation (exit 1 by itself).
		return fmt.Sprintf("%s %s --seed %d", cfg.Command, file, seed)
	}
	return fmt.Sprintf("%s %s --seed %d --fail-on %s", cfg.Command, file, seed, oracle)
}

// write puts a finding's files in DIR/<signature>/: scenario.yaml (the
// scenario with the shrunk faults, its header saying what fired and how to
// rerun it), explain.txt (`simrun explain` of the run) and whatever
// Artifacts adds.
func (cfg *Config) write(fd Finding, sc *scenario.Scenario, faults []scenario.Fault) error {
	dir := cfg.dir(fd.Signature)
	if err := outdir.MkdirAll(cfg.Out, dir); err != nil {
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
	head := fmt.Sprintf("# simrun explore finding %s\n# oracle %s fired with seed %d: %s\n# %s\n# faults: %d drawn, %d kept (%s)\n# reproduce: %s\n",
		fd.Signature, fd.Oracle, fd.Seed, oneLine(fd.Message), classText(fd), fd.FromFault, len(faults), shrunk, fd.Repro)
	if err := outdir.WriteFile(cfg.Out, filepath.Join(dir, "scenario.yaml"), append([]byte(head), body...)); err != nil {
		return err
	}
	crashPoint("write")
	rsc := *sc
	rsc.Faults, rsc.Swarm = faults, nil
	if fd.Oracle == OraclePanic {
		return nil // no trace to explain or draw: the run does not finish
	}
	res, err := harness.Run(&rsc, fd.Seed, harness.Options{KeepTrace: true, MaxMemory: cfg.MaxMemory})
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
	fmt.Fprintf(&b, "%s\n\nscenario %s, seed %d: oracle %s: %s\n%d evictions and coordinator-dead marks explained", classText(fd), sc.Name, fd.Seed, fd.Oracle, fd.Message, len(xs))
	if len(tr) < len(res.Trace) {
		fmt.Fprintf(&b, " (the first ones of the trace; run simrun explain for all)")
	}
	b.WriteString("\n")
	for _, x := range xs {
		b.WriteString("\n")
		b.WriteString(x.String())
	}
	if err := outdir.WriteFile(cfg.Out, filepath.Join(dir, "explain.txt"), []byte(b.String())); err != nil {
		return err
	}
	crashPoint("write")
	if cfg.Artifacts != nil {
		return cfg.Artifacts(dir, &rsc, fd.Seed, res)
	}
	return nil
}

// classText is a finding's classification line.
func classText(fd Finding) string {
	if fd.Class.Text == "" {
		return "unclassified: a panic in the models is a simulator bug"
	}
	return oneLine(fd.Class.Text)
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
	crashPoint("save")
	return outdir.WriteFile(cfg.Out, filepath.Join(cfg.Out, IndexFile), append(b, '\n'))
}

// resume loads the index of an earlier run of the same campaign.
func (rep *Report) resume(cfg *Config) error {
	if err := outdir.Check(cfg.Out, filepath.Join(cfg.Out, IndexFile)); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, IndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		// simrun writes the index atomically: a damaged one was cut or
		// edited by something else.
		return fmt.Errorf("explore: %s is damaged (%v): it is this campaign's index, which simrun writes whole; delete it to run the campaign again from its first seed (the findings' directories are written again as they are found), or give another --out",
			filepath.Join(cfg.Out, IndexFile), err)
	}
	if ix.Version != indexVersion || ix.Scenario != rep.Scenario || ix.Swarm != rep.Swarm || !slices.Equal(ix.Without, rep.Without) || !slices.Equal(ix.With, rep.With) ||
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
