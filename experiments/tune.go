package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
)

// TuneParam is one tuned setting: a scenario path and the range searched.
type TuneParam struct {
	Path   string  `json:"path"`
	Column string  `json:"column"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Step is the resolution: every value tried is Lo + k·Step, and
	// bisection stops when the bracket is one step wide.
	Step float64 `json:"step"`
	// Duration: the range was written with units (1s..25s); values are
	// passed to the scenario as "<n>ms" and shown in ms.
	Duration bool `json:"duration"`
}

// ParseTuneParam reads PATH=LO..HI[:STEP], e.g.
// groups[0].client.session.timeout.ms=6000..60000 or faults[0].for=1s..25s:500ms;
// LO = HI evaluates that one value.
// Without STEP the resolution is 1/100 of the range, rounded down to a
// 1, 2 or 5 times a power of ten (at least 1 for whole numbers).
func ParseTuneParam(s string) (TuneParam, error) {
	path, rng, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rng, "..")
	if !ok || !ok2 || path == "" {
		return TuneParam{}, fmt.Errorf("--param %q: want PATH=LO..HI[:STEP], e.g. groups[0].client.session.timeout.ms=6000..60000", s)
	}
	hi, step, hasStep := strings.Cut(hi, ":")
	p := TuneParam{Path: path}
	num := func(x string) (float64, bool, error) {
		x = strings.TrimSpace(x)
		if f, err := strconv.ParseFloat(x, 64); err == nil && finite(f) {
			return f, false, nil
		}
		if d, err := time.ParseDuration(x); err == nil {
			return float64(d) / float64(time.Millisecond), true, nil
		}
		return 0, false, fmt.Errorf("--param %s: %q is not a number or a duration", path, x)
	}
	var d1, d2, d3 bool
	var err error
	if p.Lo, d1, err = num(lo); err != nil {
		return p, err
	}
	if p.Hi, d2, err = num(hi); err != nil {
		return p, err
	}
	if d1 != d2 {
		return p, fmt.Errorf("--param %s: write both ends with units (1s..25s) or neither (1000..25000)", path)
	}
	p.Duration = d1
	if p.Hi < p.Lo {
		return p, fmt.Errorf("--param %s: want LO <= HI, got %s..%s", path, lo, hi)
	}
	if p.Hi == p.Lo {
		// LO = HI evaluates one value ("does this setting pass?"): its table, its checks and
		// its why, without a search.
		if hasStep {
			return p, fmt.Errorf("--param %s: a single value %s..%s takes no step", path, lo, hi)
		}
		p.Step = 1
	} else if hasStep {
		if p.Step, d3, err = num(step); err != nil {
			return p, err
		}
		if d3 != p.Duration || p.Step <= 0 || p.Step > p.Hi-p.Lo {
			return p, fmt.Errorf("--param %s: step %q must be positive, at most HI-LO, and in the range's units", path, step)
		}
	} else {
		p.Step = niceStep((p.Hi - p.Lo) / 100)
		if whole(p.Lo) && whole(p.Hi) && p.Step < 1 {
			p.Step = 1
		}
	}
	p.Column = defaultColumn(path)
	if p.Duration && !strings.HasSuffix(p.Column, "_ms") {
		p.Column += "_ms"
	}
	return p, nil
}

func whole(x float64) bool { return x == math.Trunc(x) }

// niceStep rounds x down to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{5, 2, 1} {
		if m*e <= x {
			return m * e
		}
	}
	return e
}

// snap puts x on the param's lattice Lo + k·Step, within [Lo, Hi].
func (p TuneParam) snap(x float64) float64 {
	k := math.Round((x - p.Lo) / p.Step)
	v := p.Lo + k*p.Step
	v = math.Round(v*1e9) / 1e9
	return math.Min(math.Max(v, p.Lo), p.Hi)
}

// yaml writes a value as the experiment file's sweep list holds it.
func (p TuneParam) yaml(v float64) string {
	if p.Duration {
		return strconv.Quote(strconv.FormatFloat(v, 'f', -1, 64) + "ms")
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Requirement is one --require: FIGURE[.STAT] OP BOUND.
type Requirement struct {
	Text   string  `json:"text"`
	Figure string  `json:"figure"`
	Stat   string  `json:"stat"` // mean, p50, p90, p95, p99
	Op     string  `json:"op"`   // <=, <, >=, >
	Bound  float64 `json:"bound"`
}

// ParseRequirement reads "false_evictions_per_member_hour <= 0.01" or
// "recovery_ms.p95 <= 30000". A figure name with "." read as "_" that is a
// figure (rebalance_duration_ms.p95, a per-run figure) is that figure's
// mean over seeds; otherwise a last ".p50/.p90/.p95/.p99" is that
// quantile over seeds and ".mean" the mean.
func ParseRequirement(s string) (Requirement, error) {
	r := Requirement{Text: strings.TrimSpace(s)}
	var lhs, rhs string
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if a, b, ok := strings.Cut(s, op); ok {
			lhs, rhs, r.Op = strings.TrimSpace(a), strings.TrimSpace(b), op
			break
		}
	}
	if r.Op == "" {
		return r, fmt.Errorf("--require %q: want FIGURE OP BOUND with OP one of <=, <, >=, >, e.g. 'false_evictions <= 0.1'", s)
	}
	b, err := strconv.ParseFloat(rhs, 64)
	if err != nil || !finite(b) {
		return r, fmt.Errorf("--require %q: bound %q is not a number", s, rhs)
	}
	r.Bound = b
	r.Stat = "mean"
	if f := strings.ReplaceAll(lhs, ".", "_"); isFigure(f) {
		r.Figure = f
	} else if base, st, ok := cutLast(lhs, "."); ok && (st == "mean" || isQuantile(st)) && isFigure(strings.ReplaceAll(base, ".", "_")) {
		r.Figure, r.Stat = strings.ReplaceAll(base, ".", "_"), st
	} else {
		return r, fmt.Errorf("--require %q: %q is not a figure (figures: %s; add .p50, .p90, .p95 or .p99 for a quantile over seeds)", s, lhs, strings.Join(FigureNames(), ", "))
	}
	if r.Stat != "mean" && strings.HasSuffix(r.Figure, "_per_member_hour") {
		return r, fmt.Errorf("--require %q: a per-member-hour rate is pooled over seeds; use it without .%s", s, r.Stat)
	}
	return r, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func isQuantile(s string) bool { _, ok := quantileStat(s); return ok }

// holds reports whether the requirement holds on the unsafe side of the
// interval: for <= and <, the upper bound; for >= and >, the lower bound.
// A figure with no value in some run (recovery_ms when no rebalance
// followed the fault) does not hold: the run did not show what is required.
func (r Requirement) holds(e Estimate) bool {
	if e.N == 0 || e.Missing > 0 || math.IsNaN(e.Lo) || math.IsNaN(e.Hi) {
		return false
	}
	switch r.Op {
	case "<=":
		return e.Hi <= r.Bound
	case "<":
		return e.Hi < r.Bound
	case ">=":
		return e.Lo >= r.Bound
	default:
		return e.Lo > r.Bound
	}
}

// bound is the side of the interval the requirement is checked on.
func (r Requirement) side(e Estimate) (string, float64) {
	if r.Op[0] == '<' {
		return "upper bound", e.Hi
	}
	return "lower bound", e.Lo
}

// margin is how far the checked bound is beyond the requirement, relative
// to it (<= 0 holds); +Inf when unbounded or missing.
func (r Requirement) margin(e Estimate) float64 {
	if e.N == 0 || e.Missing > 0 {
		return math.Inf(1)
	}
	_, b := r.side(e)
	d := b - r.Bound
	if r.Op[0] == '>' {
		d = -d
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / math.Max(math.Abs(r.Bound), 1e-9)
}

// TuneSpec is one simrun tune question.
type TuneSpec struct {
	ScenarioSource string
	ScenarioData   []byte // --set overrides already applied
	Params         []TuneParam
	Requirements   []Requirement
	// Show are figures drawn beside the requirements (a cost, --show):
	// Requirement values with Op "" and Bound NaN, never checked.
	Show     []Requirement
	Maximize bool
	Seeds    int
	Grid     int // coarse grid size per parameter (default 7)
}

// TuneOptions control where and how a tune runs (Sweep's options).
type TuneOptions struct {
	Out     string
	Workers int
	Runner  Runner
	Log     io.Writer // per-round lines and invariant warnings
}

// Check is one requirement at one value.
type Check struct {
	Requirement string   `json:"requirement"`
	Estimate    Num      `json:"estimate"`
	Lo          Num      `json:"ci95_lo"`
	Hi          Num      `json:"ci95_hi"`
	Interval    string   `json:"interval"`
	Runs        int      `json:"runs"`
	Missing     int      `json:"runs_without_value"`
	Pass        bool     `json:"pass"`
	Margin      float64  `json:"-"`
	Est         Estimate `json:"-"`
}

// Trial is one value (or grid point) tried, with its checks.
type Trial struct {
	Values []float64 `json:"values"`
	Round  int       `json:"round"`
	Seeds  int       `json:"seeds"`
	Dir    string    `json:"dir"` // sweep directory holding its runs
	Point  string    `json:"point"`
	// Invalid says why the runs do not count (a fatal configuration, a
	// group that never formed or was not stable at the end): every
	// requirement fails.
	Invalid string  `json:"invalid,omitempty"`
	Checks  []Check `json:"checks"`
	Pass    bool    `json:"pass"`
	// Config is the effective configuration at this value.
	Config Config      `json:"effective_config"`
	runs   [][]float64 // [seed][figure]
}

// TuneResult is the answer and its evidence.
type TuneResult struct {
	Spec   *TuneSpec `json:"-"`
	Trials []Trial   `json:"tried"` // sorted by value
	// Recommended is the index into Trials of the answer, -1 when no value
	// meets every requirement.
	Recommended int `json:"-"`
	// Neighbour is the tried value next to the answer on the unsafe side
	// (the largest failing value below it when minimising), -1 if none.
	Neighbour int `json:"-"`
	// Method is "bisection" (the pass/fail pattern and every required
	// figure were monotone on the coarse grid) or "grid" (and why).
	Method string `json:"method"`
	// Edge: the answer is the end of the range, so the best value may lie
	// beyond it.
	Edge bool `json:"range_edge"`
}

// Tune answers "which setting?": it runs a coarse grid over the range,
// then, when the outcome is monotone in a single parameter, bisects the
// bracket between the last failing and the first passing grid value down
// to one step. Every value is a Sweep (workers, resume, cache: run again
// and finished values are read back) in its own directory under
// opts.Out/values. The search is deterministic.
func Tune(ctx context.Context, spec *TuneSpec, opts TuneOptions) (*TuneResult, error) {
	if spec.Grid < 2 {
		spec.Grid = 7
	}
	if len(spec.Params) == 0 || len(spec.Requirements) == 0 {
		return nil, fmt.Errorf("tune: at least one --param and one --require")
	}
	// A path that names no setting, or a range the scenario rejects at
	// both ends, is bad input, not a search whose every value is invalid.
	for i, p := range spec.Params {
		at := func(x float64) error {
			v := make([]float64, len(spec.Params))
			for j, q := range spec.Params {
				v[j] = q.Lo
			}
			v[i] = x
			_, err := scenario.ParseWithOverrides(spec.ScenarioSource, spec.ScenarioData, spec.overrides(v))
			return err
		}
		if err := at(p.Lo); err != nil && at(p.Hi) != nil {
			return nil, fmt.Errorf("--param %s: %w", p.Path, err)
		}
	}
	res := &TuneResult{Spec: spec, Recommended: -1, Neighbour: -1}
	// Round 1: the coarse grid (the cartesian product for several params).
	axes := make([][]float64, len(spec.Params))
	total := 1
	for i, p := range spec.Params {
		g := spec.Grid
		if len(spec.Params) > 1 {
			g = min(g, 5)
		}
		for k := 0; k < g; k++ {
			v := p.snap(p.Lo + (p.Hi-p.Lo)*float64(k)/float64(g-1))
			if !slices.Contains(axes[i], v) {
				axes[i] = append(axes[i], v)
			}
		}
		total *= len(axes[i])
	}
	var grid [][]float64
	for n := 0; n < total; n++ {
		vals := make([]float64, len(axes))
		r := n
		for i := len(axes) - 1; i >= 0; i-- {
			vals[i] = axes[i][r%len(axes[i])]
			r /= len(axes[i])
		}
		grid = append(grid, vals)
	}
	trials, err := evaluate(ctx, spec, opts, 1, grid)
	if err != nil {
		return nil, err
	}
	res.Trials = trials
	if len(spec.Params) > 1 {
		res.Method = "grid (several parameters: no bisection)"
		res.pick()
		return res, nil
	}
	if len(trials) == 1 {
		res.Method = "one value (LO = HI)"
		res.pick()
		return res, nil
	}
	// One parameter: bisect when monotone on the grid.
	why := res.monotone()
	if why != "" {
		res.Method = "grid (" + why + ")"
		res.pick()
		return res, nil
	}
	res.Method = "bisection"
	p := spec.Params[0]
	round := 1
	for {
		res.sort()
		lo, hi := res.bracket()
		if lo < 0 || hi < 0 {
			if round == 1 {
				res.Method = "grid (pass/fail does not change on the grid: nothing to bisect)"
			}
			break
		}
		a, b := res.Trials[lo].Values[0], res.Trials[hi].Values[0]
		if math.Abs(b-a) <= p.Step*1.000001 {
			break
		}
		mid := p.snap((a + b) / 2)
		if mid == a || mid == b {
			break
		}
		round++
		t, err := evaluate(ctx, spec, opts, round, [][]float64{{mid}})
		if err != nil {
			return nil, err
		}
		res.Trials = append(res.Trials, t...)
	}
	res.pick()
	return res, nil
}

func (r *TuneResult) sort() {
	slices.SortStableFunc(r.Trials, func(a, b Trial) int {
		for i := range a.Values {
			if c := cmpFloat(a.Values[i], b.Values[i]); c != 0 {
				return c
			}
		}
		return 0
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bracket returns the trials around the pass/fail switch of one parameter
// on the safe direction: when minimising, the largest failing value below
// the smallest passing one. -1 when there is none.
func (r *TuneResult) bracket() (fail, pass int) {
	fail, pass = -1, -1
	n := len(r.Trials)
	if !r.Spec.Maximize {
		for i := 0; i < n; i++ {
			if r.Trials[i].Pass {
				pass = i
				break
			}
		}
		if pass > 0 {
			fail = pass - 1
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			if r.Trials[i].Pass {
				pass = i
				break
			}
		}
		if pass >= 0 && pass < n-1 {
			fail = pass + 1
		}
	}
	if fail < 0 {
		return -1, -1
	}
	return fail, pass
}

// monotone checks, on the coarse grid of one parameter, that pass/fail
// switches at most once in the searched direction and that each required
// figure moves one way only (a move against the trend counts only when
// the two intervals do not overlap). It returns "" or why not.
func (r *TuneResult) monotone() string {
	r.sort()
	switches := 0
	for i := 1; i < len(r.Trials); i++ {
		if r.Trials[i].Pass != r.Trials[i-1].Pass {
			switches++
		}
	}
	if switches > 1 {
		return "pass/fail changes more than once on the grid"
	}
	for q, req := range r.Spec.Requirements {
		up, down := false, false
		for i := 1; i < len(r.Trials); i++ {
			a, b := r.Trials[i-1].Checks[q].Est, r.Trials[i].Checks[q].Est
			if r.Trials[i-1].Invalid != "" || r.Trials[i].Invalid != "" || math.IsNaN(a.Value) || math.IsNaN(b.Value) {
				continue
			}
			if b.Lo > a.Hi {
				up = true
			}
			if b.Hi < a.Lo {
				down = true
			}
		}
		if up && down {
			return fmt.Sprintf("%s is not monotone in %s on the grid", req.Text, r.Spec.Params[0].Column)
		}
	}
	return ""
}

// pick sets Recommended and Neighbour: the smallest (largest when
// maximising) passing value, by the first parameter, then the next.
func (r *TuneResult) pick() {
	r.sort()
	r.Recommended, r.Neighbour = -1, -1
	order := make([]int, len(r.Trials))
	for i := range order {
		order[i] = i
	}
	if r.Spec.Maximize {
		slices.Reverse(order)
	}
	for _, i := range order {
		if r.Trials[i].Pass {
			r.Recommended = i
			break
		}
	}
	if r.Recommended < 0 {
		return
	}
	rec := r.Trials[r.Recommended].Values
	// The neighbour: the nearest tried value on the unsafe side with the
	// other parameters equal.
	best := math.Inf(1)
	for i, t := range r.Trials {
		if !sameOthers(t.Values, rec) {
			continue
		}
		d := rec[0] - t.Values[0]
		if r.Spec.Maximize {
			d = -d
		}
		if d > 0 && d < best {
			best, r.Neighbour = d, i
		}
	}
	p := r.Spec.Params[0]
	r.Edge = !r.Spec.Maximize && rec[0] == p.Lo || r.Spec.Maximize && rec[0] == p.Hi
}

func sameOthers(a, b []float64) bool {
	for i := 1; i < len(a); i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Closest returns, when nothing passes, the trial and requirement that
// came closest: the trial failing the fewest requirements, then by the
// smallest margin of its worst failure.
func (r *TuneResult) Closest() (trial, req int) {
	trial, req = -1, -1
	bestFails, bestMargin := math.MaxInt, math.Inf(1)
	for i, t := range r.Trials {
		if t.Invalid != "" {
			continue
		}
		fails, worst, worstQ := 0, math.Inf(-1), -1
		for q, c := range t.Checks {
			if !c.Pass {
				fails++
				if c.Margin > worst {
					worst, worstQ = c.Margin, q
				}
			}
		}
		if fails < bestFails || fails == bestFails && worst < bestMargin {
			bestFails, bestMargin, trial, req = fails, worst, i, worstQ
		}
	}
	return trial, req
}

// evaluate runs one round: each value is a one-point sweep (seeds
// 1..Seeds) in its own directory, DIR/values/<column=value,...>, so a value
// tried before (by this search, an interrupted one, or another range or
// grid over the same scenario) is read back instead of run again; then
// every requirement is checked at each value.
func evaluate(ctx context.Context, spec *TuneSpec, opts TuneOptions, round int, values [][]float64) ([]Trial, error) {
	if opts.Log != nil {
		var vs []string
		for _, v := range values {
			vs = append(vs, spec.label(v))
		}
		fmt.Fprintf(opts.Log, "tune round %d: %s (%d seeds each)\n", round, strings.Join(vs, "; "), spec.Seeds)
	}
	var out []Trial
	for _, v := range values {
		// A value the scenario rejects (heartbeat.interval.ms not below
		// session.timeout.ms, say) is an invalid trial, not bad input.
		if _, err := scenario.ParseWithOverrides(spec.ScenarioSource, spec.ScenarioData, spec.overrides(v)); err != nil {
			out = append(out, spec.invalidTrial(v, round, "the scenario rejects this value: "+err.Error()))
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "name: tune-value\nseeds: %d\nscenario: base\nsweep:\n", spec.Seeds)
		for i, p := range spec.Params {
			fmt.Fprintf(&b, "  %s: {values: [%s], column: %s}\n", strconv.Quote(p.Path), p.yaml(v[i]), p.Column)
		}
		e, err := parse("tune "+spec.label(v), []byte(b.String()), &resolvedScenario{source: spec.ScenarioSource, data: spec.ScenarioData})
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(opts.Out, "values", strings.ReplaceAll(spec.label(v), " ", ","))
		if _, err := Sweep(ctx, e, Options{Out: dir, Workers: opts.Workers, Runner: opts.Runner, Log: opts.Log}); err != nil {
			return nil, err
		}
		rs, err := LoadResults(e, dir)
		if err != nil {
			return nil, err
		}
		pt := rs.Points[0]
		t := Trial{Values: v, Round: round, Seeds: spec.Seeds, Dir: dir, Point: pt.ID, runs: rs.Runs[0]}
		if sc, err := e.Scenario(pt); err == nil {
			t.Config = EffectiveConfig(sc)
		}
		t.Invalid = invalidRuns(rs.Runs[0])
		t.Pass = t.Invalid == ""
		for _, req := range spec.Requirements {
			est := requirementEstimate(req, rs.Runs[0])
			c := Check{Requirement: req.Text, Estimate: Num(est.Value), Lo: Num(est.Lo), Hi: Num(est.Hi), Interval: est.Kind.String(),
				Runs: est.N, Missing: est.Missing, Est: est, Margin: req.margin(est)}
			c.Pass = t.Invalid == "" && req.holds(est)
			t.Pass = t.Pass && c.Pass
			t.Checks = append(t.Checks, c)
		}
		out = append(out, t)
	}
	return out, nil
}

// requirementEstimate computes a requirement's figure at one value.
func requirementEstimate(req Requirement, runs [][]float64) Estimate {
	kind, q := KindOf(req.Figure, req.Stat)
	fig := req.Figure
	var exposure []float64
	if kind == KindRate {
		fig = strings.TrimSuffix(fig, "_per_member_hour")
		exposure = column(runs, figureIndex("member_hours"))
	}
	return FigureInterval(kind, q, column(runs, figureIndex(fig)), exposure)
}

func column(runs [][]float64, f int) []float64 {
	out := make([]float64, len(runs))
	for s := range runs {
		out[s] = runs[s][f]
	}
	return out
}

// invalidRuns says why a value's runs are not a valid configuration: a
// group that never formed a generation (a fatal configuration error such
// as INVALID_SESSION_TIMEOUT) or was not Stable at the end of a run.
func invalidRuns(runs [][]float64) string {
	gen, stable := figureIndex("final_generation"), figureIndex("stable_at_end")
	never, unstable := 0, 0
	for _, r := range runs {
		if r[gen] == 0 {
			never++
		} else if r[stable] == 0 {
			unstable++
		}
	}
	var why []string
	if never > 0 {
		why = append(why, fmt.Sprintf("%d of %d runs never formed a group (a fatal configuration?)", never, len(runs)))
	}
	if unstable > 0 {
		why = append(why, fmt.Sprintf("%d of %d runs not stable at the end", unstable, len(runs)))
	}
	return strings.Join(why, "; ")
}

// label is "session_timeout_ms=12000".
func (s *TuneSpec) label(v []float64) string {
	var parts []string
	for i, p := range s.Params {
		parts = append(parts, p.Column+"="+strconv.FormatFloat(v[i], 'f', -1, 64))
	}
	return strings.Join(parts, " ")
}

// Label describes a trial's values.
func (r *TuneResult) Label(t Trial) string { return r.Spec.label(t.Values) }

// ValueText writes one parameter value as --set takes it.
func (p TuneParam) ValueText(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if p.Duration {
		return s + "ms"
	}
	return s
}

// DecisiveSeed is the seed of a trial's run that shows its failure of a
// requirement most: the largest value (smallest for >= requirements), the
// first such seed on ties; 0 when no run has a value.
func (r *TuneResult) DecisiveSeed(t Trial, q int) int {
	req := r.Spec.Requirements[q]
	fig := req.Figure
	if strings.HasSuffix(fig, "_per_member_hour") {
		fig = strings.TrimSuffix(fig, "_per_member_hour")
	}
	f := figureIndex(fig)
	best, seed := math.NaN(), 0
	for s, run := range t.runs {
		v := run[f]
		if math.IsNaN(v) {
			return s + 1 // a run without a value is decisive
		}
		if req.Op[0] == '>' {
			v = -v
		}
		if math.IsNaN(best) || v > best {
			best, seed = v, s+1
		}
	}
	return seed
}

func (s *TuneSpec) overrides(v []float64) []scenario.Override {
	out := make([]scenario.Override, len(s.Params))
	for i, p := range s.Params {
		var val any = v[i]
		if p.Duration {
			val = p.ValueText(v[i])
		} else if whole(v[i]) {
			val = int64(v[i])
		}
		out[i] = scenario.Override{Path: p.Path, Value: val}
	}
	return out
}

// Overrides returns the --set overrides of a trial's values.
func (s *TuneSpec) Overrides(v []float64) []scenario.Override { return s.overrides(v) }

func (s *TuneSpec) invalidTrial(v []float64, round int, why string) Trial {
	t := Trial{Values: v, Round: round, Invalid: why}
	for _, req := range s.Requirements {
		nan := math.NaN()
		kind, _ := KindOf(req.Figure, req.Stat)
		est := Estimate{Value: nan, Lo: nan, Hi: nan, Kind: kind}
		t.Checks = append(t.Checks, Check{Requirement: req.Text, Estimate: Num(nan), Lo: Num(nan), Hi: Num(nan), Interval: kind.String(), Est: est, Margin: math.Inf(1)})
	}
	return t
}
