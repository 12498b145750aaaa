package calibrate

import (
	"fmt"
	"math"
	"slices"

	"github.com/rebalsim/rebalsim/experiments"
)

// MinRealReps is the number of real repetitions a row needs before it is
// judged; with fewer it is pending.
const MinRealReps = 3

// Tolerances: how near the simulated mean must be to the real one (docs/CALIBRATE.md).
const (
	TimingRelative    = 0.10  // timing: within 10 % ...
	TimingAbsoluteMs  = 300.0 // ... or 300 ms, whichever is larger
	CountShare        = 0.90  // counts: equal in ≥ 90 % of repetitions
	PartitionRelative = 0.25  // partition-seconds: within 25 %
)

// Verdict is a row's judgement.
type Verdict string

const (
	Agree    Verdict = "agree"
	Disagree Verdict = "disagree"
	Pending  Verdict = "pending" // fewer than MinRealReps real repetitions, or values
)

// Row is one (scenario, version, figure): both sides' estimates and the
// verdict.
type Row struct {
	Scenario, Version string
	Figure            Figure
	Sim, Real         experiments.Estimate
	SimRuns, RealReps int // runs made (with a value or not)
	Diff              float64
	Verdict           Verdict
	Why               string // how the verdict was reached, one line
	// SoFar is a pending row's verdict from the real repetitions made so
	// far ("" when there are none, or the row is judged).
	SoFar Verdict
	// Explanation: the matching explanations.yaml entry of a disagreement.
	Explanation *Explanation
}

// Judge compares one figure's runs. sim and real are the runs (Run.Values
// read at index fi); realReps counts the real repetitions made.
func Judge(f Figure, fi int, sim, real []Run) Row {
	row := Row{Figure: f, SimRuns: len(sim), RealReps: len(real)}
	kind := experiments.KindMean
	if f.Class == Count {
		kind = experiments.KindCount
	}
	col := func(runs []Run) []float64 {
		out := make([]float64, len(runs))
		for i, r := range runs {
			out[i] = r.Values[fi]
		}
		return out
	}
	row.Sim = experiments.FigureInterval(kind, 0, col(sim), nil)
	row.Real = experiments.FigureInterval(kind, 0, col(real), nil)
	row.Diff = row.Sim.Value - row.Real.Value
	row.Verdict, row.Why = judge(f, fi, sim, real, row.Sim, row.Real, len(real) < MinRealReps)
	if n := len(real); n < MinRealReps {
		so := ""
		if n > 0 && row.Verdict != Pending {
			so = fmt.Sprintf("; so far %s: %s", row.Verdict, row.Why)
			row.SoFar = row.Verdict
		}
		row.Verdict, row.Why = Pending, fmt.Sprintf("%d of %d real repetitions%s", n, MinRealReps, so)
	}
	return row
}

// judge is the verdict by the tolerance rule and how it was reached. few:
// fewer real repetitions than a verdict needs (Judge then reports the
// verdict so far as pending).
func judge(f Figure, fi int, sim, real []Run, se, re experiments.Estimate, few bool) (Verdict, string) {
	share := func(e experiments.Estimate) float64 {
		if e.N+e.Missing == 0 {
			return 0
		}
		return float64(e.N) / float64(e.N+e.Missing)
	}
	switch {
	case len(real) == 0:
		return Pending, "no real repetition"
	case se.N == 0 && re.N == 0:
		return Pending, "no value on either side"
	case math.Abs(share(se)-share(re)) > 0.5:
		return Disagree, fmt.Sprintf("a value in %.0f %% of simulated runs, %.0f %% of real repetitions", 100*share(se), 100*share(re))
	case re.N < MinRealReps && !few:
		return Pending, fmt.Sprintf("a value in %d real repetitions (needs %d)", re.N, MinRealReps)
	case se.N == 0:
		return Disagree, "no simulated value"
	case re.N == 0:
		return Disagree, "no real value"
	}
	s, r := se.Value, re.Value
	switch f.Class {
	case Timing:
		tol := math.Max(TimingRelative*math.Abs(r), TimingAbsoluteMs)
		return verdict(math.Abs(s-r) <= tol), fmt.Sprintf("|%s| ms vs tolerance %s ms", experiments.FormatShort(s-r), experiments.FormatShort(tol))
	case PartitionSeconds:
		tol := PartitionRelative * math.Abs(r)
		return verdict(math.Abs(s-r) <= tol), fmt.Sprintf("|%s| vs tolerance %s (25 %%)", experiments.FormatShort(s-r), experiments.FormatShort(tol))
	}
	// Count: each real repetition against the most common count of the
	// simulated runs matched to it (all simulated runs when unmatched).
	eq, n := 0, 0
	for _, rr := range real {
		v := rr.Values[fi]
		if math.IsNaN(v) {
			continue
		}
		n++
		var matched, all []float64
		for _, sr := range sim {
			if x := sr.Values[fi]; !math.IsNaN(x) {
				all = append(all, x)
				if sr.Rep == rr.Rep {
					matched = append(matched, x)
				}
			}
		}
		if len(matched) == 0 {
			matched = all
		}
		if m, ok := mode(matched); ok && m == v {
			eq++
		}
	}
	return verdict(n > 0 && float64(eq) >= CountShare*float64(n)), fmt.Sprintf("equal in %d of %d repetitions", eq, n)
}

func verdict(ok bool) Verdict {
	if ok {
		return Agree
	}
	return Disagree
}

// mode is the most common value (the smallest of equally common ones).
func mode(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	best, bestN := s[0], 0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > bestN {
			best, bestN = s[i], j-i
		}
		i = j
	}
	return best, true
}
