package experiments

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/outdir"
	"github.com/rebalsim/rebalsim/scenario"
)

// Directory layout of a sweep:
//
//	DIR/.sweep/experiment.yaml   the experiment file, as read
//	DIR/.sweep/scenario.yaml     the base scenario, as read
//	DIR/.sweep/meta.json         sources and names (for merge and report)
//	DIR/.points/<point>.csv      one finished point: a key line, the header,
//	                             one row per seed (written atomically)
//	DIR/points.csv, DIR/summary.csv, DIR/<plot>.png, DIR/<plot>.svg
const (
	sweepDir  = ".sweep"
	pointsDir = ".points"
)

type meta struct {
	Name           string `json:"name"`
	Source         string `json:"source"`
	ScenarioSource string `json:"scenario_source"`
	Format         int    `json:"format"`
}

const formatVersion = 1

// writeSweepMeta stores the experiment's inputs in DIR/.sweep so merge and
// report can rebuild it from the directory alone.
func writeSweepMeta(e *Experiment, dir string) error {
	sd := filepath.Join(dir, sweepDir)
	if err := outdir.MkdirAll(dir, sd); err != nil {
		return err
	}
	m, _ := json.MarshalIndent(meta{Name: e.Name, Source: e.Source, ScenarioSource: e.ScenarioSource, Format: formatVersion}, "", "  ")
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"experiment.yaml", e.Data},
		{"scenario.yaml", e.ScenarioData},
		{"meta.json", append(m, '\n')},
	} {
		p, data := filepath.Join(sd, f.name), f.data
		if old, err := os.ReadFile(p); err == nil && string(old) == string(data) {
			continue
		}
		if err := outdir.WriteFile(dir, p, data); err != nil {
			return err
		}
	}
	return nil
}

// checkOwner refuses an output directory that holds another experiment's
// sweep: its plots and tables would stay beside the new ones.
func checkOwner(e *Experiment, dir string) error {
	mb, err := os.ReadFile(filepath.Join(dir, sweepDir, "meta.json"))
	if err != nil {
		return nil // a new directory, or not a sweep's
	}
	var m meta
	if json.Unmarshal(mb, &m) != nil || m.Name == e.Name {
		return nil
	}
	return fmt.Errorf("%s holds the results of experiment %s, not %s: give another --out, or delete the directory first",
		dir, scenario.Quote(m.Name), scenario.Quote(e.Name))
}

// LoadDir rebuilds the experiment of a sweep directory from DIR/.sweep.
func LoadDir(dir string) (*Experiment, error) {
	sd := filepath.Join(dir, sweepDir)
	mb, err := os.ReadFile(filepath.Join(sd, "meta.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a sweep directory (no %s/meta.json): %w", dir, sweepDir, err)
	}
	var m meta
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(sd, "meta.json"), err)
	}
	if m.Format != formatVersion {
		return nil, fmt.Errorf("%s: sweep format %d, this simrun reads %d", dir, m.Format, formatVersion)
	}
	ed, err := os.ReadFile(filepath.Join(sd, "experiment.yaml"))
	if err != nil {
		return nil, err
	}
	scd, err := os.ReadFile(filepath.Join(sd, "scenario.yaml"))
	if err != nil {
		return nil, err
	}
	return parse(m.Source, ed, &resolvedScenario{source: m.ScenarioSource, data: scd})
}

// header is the CSV header of points.csv and of every point file.
func (e *Experiment) header() []string {
	h := []string{"point"}
	h = append(h, e.columns()...)
	h = append(h, "seed")
	h = append(h, FigureNames()...)
	return append(h, "trace_sha256")
}

// pointKey identifies what a point file holds: the base scenario, the
// point's overrides, the seed count and the column layout. A point file
// with another key (the experiment changed) is stale and runs again.
func (e *Experiment) pointKey(pt Point) string {
	h := sha256.New()
	fmt.Fprintf(h, "format %d\nengine %s\n%d:%s\n", formatVersion, engineIdentity(), len(e.ScenarioData), e.ScenarioData)
	for _, o := range e.Overrides(pt) {
		b, _ := json.Marshal(o.Value)
		fmt.Fprintf(h, "%s=%s\n", o.Path, b)
	}
	fmt.Fprintf(h, "seeds %d\n%s\n", e.Seeds, strings.Join(e.header(), ","))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// canaryScenarios are run once per process to fingerprint the simulator:
// one per model area (classic client and broker, loss through TCP, lookup
// and reconnect, the consumer protocol). A fix that changes none of them
// keeps old point files (the ensureCoordinatorReady backoff fix changed
// only bug-kafka-12890 and lossy points, hence those two).
var canaryScenarios = []string{"crash-one-member", "gc-pause", "coordinator-failover", "kip62-slow-poll", "bug-kafka-13214", "rolling-restart-dynamic", "lossy-network", "bug-kafka-12890", "consumer-crash-one-member"}

var engineOnce = sync.OnceValue(func() string {
	h := sha256.New()
	for _, name := range canaryScenarios {
		sc, err := scenario.Load(name)
		if err != nil {
			panic("experiments: canary scenario " + name + ": " + err.Error())
		}
		res, err := harness.Run(sc, 1, harness.Options{})
		if err != nil {
			panic("experiments: canary scenario " + name + ": " + err.Error())
		}
		// The whole summary, not only the trace hash: a metric fix changes
		// figures without changing the trace.
		b, err := json.Marshal(res.Summary)
		if err != nil {
			panic("experiments: canary summary: " + err.Error())
		}
		fmt.Fprintf(h, "%s %s\n", name, b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
})

// engineIdentity fingerprints the simulator's behaviour: the summaries
// (trace hash and every figure) of a few built-in scenarios. It is part of every point's key, so a sweep
// resumed with a simulator that behaves differently (a model fix) runs its
// points again instead of mixing old and new results.
func engineIdentity() string { return engineOnce() }

func pointPath(dir string, pt Point) string {
	return filepath.Join(dir, pointsDir, pt.ID+".csv")
}

// readPoint returns the rows of a finished point file, or ok=false when it
// is missing, stale or malformed.
func (e *Experiment) readPoint(dir string, pt Point) (rows []string, ok bool) {
	b, err := os.ReadFile(pointPath(dir, pt))
	if err != nil {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2+e.Seeds || lines[0] != "# key="+e.pointKey(pt) || lines[1] != strings.Join(e.header(), ",") {
		return nil, false
	}
	return lines[2:], true
}

// pointFile renders a finished point: the key line, the header, and one
// row per seed in seed order.
func (e *Experiment) pointFile(pt Point, rows []string) []byte {
	var b strings.Builder
	b.WriteString("# key=" + e.pointKey(pt) + "\n")
	b.WriteString(strings.Join(e.header(), ",") + "\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	return []byte(b.String())
}

// row renders one run as a CSV row.
func (e *Experiment) row(pt Point, seed uint64, figs []float64, traceSHA string) string {
	cells := []string{pt.ID}
	for j, p := range e.Params {
		cells = append(cells, p.Values[pt.Values[j]].Text)
	}
	cells = append(cells, strconv.FormatUint(seed, 10))
	for _, f := range figs {
		cells = append(cells, fmtExact(f))
	}
	cells = append(cells, traceSHA)
	return csvLine(cells)
}

// csvLine encodes one CSV record (encoding/csv: cells with commas or
// quotes are quoted), without the line end.
func csvLine(cells []string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(cells)
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// csvCells decodes one CSV record written by csvLine.
func csvCells(line string) []string {
	r := csv.NewReader(strings.NewReader(line))
	r.FieldsPerRecord = -1
	cells, err := r.Read()
	if err != nil {
		return strings.Split(line, ",")
	}
	return cells
}

// fmtExact writes a float so that parsing it gives the same float back
// (shortest round-trip form); NaN is an empty cell.
func fmtExact(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// fmtSummary writes a summary number with at most 6 significant digits and
// no exponent for ordinary magnitudes; NaN is an empty cell.
func fmtSummary(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	a := math.Abs(x)
	if a >= 1e15 || a < 1e-6 {
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	digits := 5 - int(math.Floor(math.Log10(a)))
	if digits < 0 {
		digits = 0
	}
	return trimmedFixed(x, digits)
}

// trimmedFixed formats x with digits decimals, then drops trailing zeros
// and a trailing point; a negative number that rounds to zero is "0".
func trimmedFixed(x float64, digits int) string {
	s := strconv.FormatFloat(x, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func parseCell(s string) float64 {
	if s == "" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// EngineFingerprint is the simulator's behavioural fingerprint (what keys
// every sweep point): `simrun version` prints it, so two builds can be
// compared by what they compute rather than by their version strings.
func EngineFingerprint() string { return engineIdentity() }

// Point checksums (a resumed sweep must not trust a truncated or edited
// point): every point file a sweep or merge
// writes gets a line "ID SHA256" appended to DIR/.sweep/points.sha256, and
// a resumed sweep runs again a point whose file does not match (edited by
// hand or damaged) instead of trusting it. The log is append-only: a kill
// between a point file and its line costs that point's runs on resume,
// never a wrong result; a torn last line is ignored; the last line of an ID
// wins. A directory without the log (written before it existed) is trusted
// as before.
const sumsFile = "points.sha256"

// loadSums reads DIR's point checksums; ok is false when there is no log.
func loadSums(dir string) (sums map[string]string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, sweepDir, sumsFile))
	if err != nil {
		return nil, false
	}
	sums = map[string]string{}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		id, sum, found := strings.Cut(strings.TrimSuffix(l, "\n"), " ")
		if !strings.HasSuffix(l, "\n") || !found || len(sum) != 64 {
			continue
		}
		sums[id] = sum
	}
	return sums, true
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// appendSum records a point file's checksum.
func appendSum(dir, id string, data []byte) error {
	p := filepath.Join(dir, sweepDir, sumsFile)
	if err := outdir.Check(dir, p); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(id + " " + sha(data) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pointTrusted reports whether pt's file in dir matches its checksum
// (true when the directory keeps no checksums).
func pointTrusted(dir string, pt Point, sums map[string]string, haveSums bool) bool {
	if !haveSums {
		return true
	}
	b, err := os.ReadFile(pointPath(dir, pt))
	return err == nil && sums[pt.ID] == sha(b)
}

// outputNames are the files a sweep's Finalize and report write at the
// top of its directory.
func (e *Experiment) outputNames() []string {
	names := []string{"points.csv", "points_long.csv", "summary.csv", "effective_config.jsonl", "REPORT.md", "scenarios"}
	for _, p := range e.Plots {
		names = append(names, p.File+".png", p.File+".svg")
	}
	return names
}

// checkForeign refuses a directory simrun never swept (no .sweep/meta.json)
// that already holds a file a sweep writes: a user's own summary.csv or
// REPORT.md was replaced without a word.
//
// A directory of a finished sweep whose state was left behind (a clone of
// the repository's committed results/NAME: the state is not committed) is
// simrun's too: its effective_config.jsonl, a file only a sweep writes,
// starts with a point's record.
func (e *Experiment) checkForeign(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, sweepDir, "meta.json")); err == nil {
		return nil
	}
	if f, err := os.Open(filepath.Join(dir, "effective_config.jsonl")); err == nil {
		head := make([]byte, len(`{"point":"`))
		n, _ := io.ReadFull(f, head)
		f.Close()
		if string(head[:n]) == `{"point":"` {
			return nil
		}
	}
	for _, n := range e.outputNames() {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return fmt.Errorf("%s already exists, and %s holds no simrun sweep (no %s/meta.json), so simrun did not write it and would replace it: move it away, or give another --out",
				filepath.Join(dir, n), dir, sweepDir)
		}
	}
	return nil
}

// canonicalSums rewrites the checksum log of a complete sweep as one line
// per point in point order, so that the directory does not depend on the
// order points finished in (workers, shards and merges, resumes).
func (e *Experiment) canonicalSums(dir string) error {
	var b strings.Builder
	for _, pt := range e.Points() {
		data, err := os.ReadFile(pointPath(dir, pt))
		if err != nil {
			return err
		}
		b.WriteString(pt.ID + " " + sha(data) + "\n")
	}
	return outdir.WriteFile(dir, filepath.Join(dir, sweepDir, sumsFile), []byte(b.String()))
}
