package experiments

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds the per-figure 95 % intervals: the one place that sweeps
// (summary.csv, plots, REPORT.md), simrun tune and simrun compare take them
// from. Each figure kind gets the interval that fits it (PREAMBLE:
// "intervals fit the figure"; docs/EXPERIMENTS.md "Intervals"). Every sweep
// figure is non-negative, and no interval here has a negative bound.

// FigureKind says which interval fits a figure.
type FigureKind int

const (
	// KindMean: a continuous per-run figure (partition-seconds,
	// member-hours); the mean over seeds with a Student-t interval, its
	// lower bound clipped at 0.
	KindMean FigureKind = iota
	// KindCount: a per-run count (evictions, rebalances); the mean count
	// per run with the exact Poisson (Garwood) interval of the total.
	KindCount
	// KindRate: a count per member-hour; the pooled rate (total count over
	// total member-hours) with the Garwood interval of the total count.
	KindRate
	// KindProportion: a 0/1 per run (stable_at_end); the proportion with
	// the Wilson score interval.
	KindProportion
	// KindQuantile: a quantile over seeds (recovery_ms.p95); the empirical
	// quantile with the distribution-free order-statistic interval.
	KindQuantile
	// KindDuration: a duration or a per-run percentile of durations
	// (recovery_ms, rebalance_duration_ms_p95); the mean over seeds with a
	// seeded percentile bootstrap interval (stats.go), which stays inside
	// the data.
	KindDuration
)

func (k FigureKind) String() string {
	switch k {
	case KindCount:
		return "Garwood exact Poisson, count per run"
	case KindRate:
		return "Garwood exact Poisson, pooled rate"
	case KindProportion:
		return "Wilson score"
	case KindQuantile:
		return "order-statistic (distribution-free)"
	case KindDuration:
		return "seeded percentile bootstrap of the mean"
	}
	return "Student-t of the mean, clipped at 0"
}

// Short is the interval's name for a legend.
func (k FigureKind) Short() string {
	switch k {
	case KindCount, KindRate:
		return "Garwood"
	case KindProportion:
		return "Wilson"
	case KindQuantile:
		return "order statistics"
	case KindDuration:
		return "bootstrap"
	}
	return "Student t"
}

// countFigures are the per-run counts (KindCount).
var countFigures = []string{"rebalance_count", "incomplete_rebalances", "rebalances_after_fault",
	"coordinator_dead_marks", "false_coordinator_dead_marks", "evictions", "false_evictions", "invariant_violations",
	"generations", "client_rebalances", "leaves", "fences", "fatal_errors", "settle_episodes", "generations_after_fault"}

// KindOf returns the kind of a figure summarised by stat ("mean", or
// "p50", "p90", "p95", "p99" for a quantile over seeds) and, for a
// quantile, its level.
func KindOf(figure, stat string) (FigureKind, float64) {
	if q, ok := quantileStat(stat); ok {
		return KindQuantile, q
	}
	switch {
	case strings.HasSuffix(figure, "_per_member_hour"):
		return KindRate, 0
	case figure == "stable_at_end" || figure == "valid":
		return KindProportion, 0
	case slices.Contains(countFigures, figure):
		return KindCount, 0
	case strings.Contains(figure, "_ms"):
		return KindDuration, 0
	}
	return KindMean, 0
}

func quantileStat(stat string) (float64, bool) {
	switch stat {
	case "p50":
		return 0.50, true
	case "p90":
		return 0.90, true
	case "p95":
		return 0.95, true
	case "p99":
		return 0.99, true
	}
	return 0, false
}

// Estimate is a figure's point estimate and two-sided 95 % interval.
// Lo may be -Inf and Hi +Inf when the data cannot bound that side (a p95
// over 20 seeds has no finite upper bound at 95 %). N counts the runs with
// a value; Missing the runs without one (NaN).
type Estimate struct {
	Value, Lo, Hi float64
	N, Missing    int
	Kind          FigureKind
	// Events is the total count (KindCount, KindRate); Exposure the total
	// member-hours (KindRate).
	Events   float64
	Exposure float64
}

// FigureInterval computes the estimate of one figure from its per-seed
// values. For KindRate, values are the per-run counts and exposure the
// per-run member-hours; q is the quantile level for KindQuantile.
func FigureInterval(kind FigureKind, q float64, values, exposure []float64) Estimate {
	nan := math.NaN()
	est := Estimate{Value: nan, Lo: nan, Hi: nan, Kind: kind}
	var v, ex []float64
	for i, x := range values {
		if math.IsNaN(x) || kind == KindRate && (i >= len(exposure) || math.IsNaN(exposure[i])) {
			est.Missing++
			continue
		}
		v = append(v, x)
		if kind == KindRate {
			ex = append(ex, exposure[i])
		}
	}
	est.N = len(v)
	if est.N == 0 {
		return est
	}
	n := float64(est.N)
	switch kind {
	case KindCount:
		k := sumFloats(v)
		lo, hi := Garwood(k)
		est.Events = k
		est.Value, est.Lo, est.Hi = k/n, lo/n, hi/n
	case KindRate:
		k, t := sumFloats(v), sumFloats(ex)
		est.Events, est.Exposure = k, t
		if t <= 0 {
			return est
		}
		lo, hi := Garwood(k)
		est.Value, est.Lo, est.Hi = k/t, lo/t, hi/t
	case KindProportion:
		k := sumFloats(v)
		est.Value = k / n
		est.Lo, est.Hi = Wilson(k, n)
	case KindQuantile:
		slices.Sort(v)
		est.Value = stat.Quantile(q, stat.Empirical, v, nil)
		est.Lo, est.Hi = QuantileInterval(v, q)
	case KindDuration:
		est.Value, est.Lo, est.Hi = BootstrapMean(v, valuesSeed(v))
	default:
		est.Value = stat.Mean(v, nil)
		if est.N >= 2 {
			sd := stat.StdDev(v, nil)
			t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
			half := t * sd / math.Sqrt(n)
			est.Lo, est.Hi = math.Max(0, est.Value-half), est.Value+half
		}
	}
	return est
}

func sumFloats(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// Garwood is the exact two-sided 95 % Poisson interval of a count k (Garwood
// 1936): [χ²(0.025; 2k)/2, χ²(0.975; 2k+2)/2], the lower bound 0 when k = 0.
// 0 events give [0, 3.689]: "0 false evictions in 3 member-hours" bounds the
// rate only below 1.23 per member-hour.
func Garwood(k float64) (lo, hi float64) {
	if k > 0 {
		lo = distuv.ChiSquared{K: 2 * k}.Quantile(0.025) / 2
	}
	hi = distuv.ChiSquared{K: 2*k + 2}.Quantile(0.975) / 2
	return lo, hi
}

// Wilson is the 95 % Wilson score interval of k successes in n trials.
func Wilson(k, n float64) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	z := distuv.UnitNormal.Quantile(0.975)
	p := k / n
	den := 1 + z*z/n
	centre := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return math.Max(0, centre-half), math.Min(1, centre+half)
}

// QuantileInterval is the distribution-free 95 % interval of the q-quantile
// from sorted values: [x(l), x(u)] with l the largest and u the smallest
// order statistics such that P(Bin(n, q) < l) <= 0.025 and
// P(Bin(n, q) >= u) <= 0.025. A side the sample cannot bound is infinite:
// 20 seeds never bound a p95 from above (1 - 0.95^20 = 0.64 < 0.975).
func QuantileInterval(sorted []float64, q float64) (lo, hi float64) {
	n := len(sorted)
	lo, hi = math.Inf(-1), math.Inf(1)
	b := distuv.Binomial{N: float64(n), P: q}
	// lower: largest l (1-based) with P(X <= l-1) <= 0.025
	for l := n; l >= 1; l-- {
		if b.CDF(float64(l-1)) <= 0.025 {
			lo = sorted[l-1]
			break
		}
	}
	// upper: smallest u with P(X <= u-1) >= 0.975
	for u := 1; u <= n; u++ {
		if b.CDF(float64(u-1)) >= 0.975 {
			hi = sorted[u-1]
			break
		}
	}
	return lo, hi
}

// FormatEstimate writes "0.35 [0.12, 0.81]" for a person (FormatShort).
func FormatEstimate(e Estimate) string {
	if math.IsNaN(e.Value) {
		return "no value"
	}
	return fmt.Sprintf("%s [%s, %s]", FormatShort(e.Value), FormatShort(e.Lo), FormatShort(e.Hi))
}

// FormatShort is the number format of tables printed for a person: 3
// significant digits, whole numbers from 100 up, no exponent for ordinary
// magnitudes; files keep FormatNumber's 6 digits.
func FormatShort(x float64) string {
	a := math.Abs(x)
	switch {
	case math.IsNaN(x):
		return "–"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case a >= 100 && a < 1e15:
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	case a == 0:
		return "0"
	case a < 1e-4:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(a)))
	return trimmedFixed(x, digits)
}

// FormatNumber is the one number format of tables and CSV summaries: at
// most 6 significant digits, no exponent for ordinary magnitudes, "-inf"
// and "inf" for unbounded sides, "" for no value.
func FormatNumber(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return fmtSummary(x)
}
