package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/internal/outdir"
)

// Num is a JSON number that writes NaN (no value) as null and an
// unbounded interval side as the string "inf" or "-inf", where
// encoding/json would fail.
type Num float64

func (n Num) MarshalJSON() ([]byte, error) {
	x := float64(n)
	switch {
	case math.IsNaN(x):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-inf"`), nil
	}
	return []byte(strconv.FormatFloat(x, 'g', -1, 64)), nil
}

// WriteTuneFiles writes DIR/tune.csv (one row per value tried and
// requirement, encoding/csv) and one plot per requirement (PNG and SVG):
// the figure's estimate with its 95 % interval against the parameter, the
// requirement's threshold drawn, the recommended value marked. It returns
// the PNG paths.
func WriteTuneFiles(r *TuneResult, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := outdir.WriteFile(dir, filepath.Join(dir, "tune.csv"), r.csv()); err != nil {
		return nil, err
	}
	var pngs []string
	for q, req := range r.Spec.Requirements {
		fig, err := r.plot(q)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", req.Text, err)
		}
		base := filepath.Join(dir, fmt.Sprintf("require-%d-%s", q+1, req.Figure))
		for _, format := range []string{"png", "svg"} {
			b, err := report.Render(fig, format)
			if err != nil {
				return nil, err
			}
			if err := outdir.WriteFile(dir, base+"."+format, b); err != nil {
				return nil, err
			}
		}
		pngs = append(pngs, base+".png")
	}
	return pngs, nil
}

func (r *TuneResult) csv() []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	h := []string{}
	for _, p := range r.Spec.Params {
		h = append(h, p.Column)
	}
	h = append(h, "requirement", "figure", "stat", "estimate", "ci95_lo", "ci95_hi", "interval", "runs", "runs_without_value", "pass", "value_pass", "invalid")
	w.Write(h)
	for _, t := range r.Trials {
		for q, c := range t.Checks {
			row := []string{}
			for i := range r.Spec.Params {
				row = append(row, strconv.FormatFloat(t.Values[i], 'f', -1, 64))
			}
			req := r.Spec.Requirements[q]
			row = append(row, req.Text, req.Figure, req.Stat, FormatNumber(c.Est.Value), FormatNumber(c.Est.Lo), FormatNumber(c.Est.Hi),
				c.Interval, strconv.Itoa(c.Runs), strconv.Itoa(c.Missing), strconv.FormatBool(c.Pass), strconv.FormatBool(t.Pass), t.Invalid)
			w.Write(row)
		}
	}
	w.Flush()
	return buf.Bytes()
}

// plot draws requirement q against the first parameter (one curve per
// combination of the other parameters).
func (r *TuneResult) plot(q int) (report.Figure, error) {
	req := r.Spec.Requirements[q]
	p0 := r.Spec.Params[0]
	stat := "mean over seeds"
	if req.Stat != "mean" {
		stat = req.Stat + " over seeds"
	}
	if k, _ := KindOf(req.Figure, req.Stat); k == KindRate {
		stat = "pooled over seeds"
	}
	st := report.Style{
		Title:  fmt.Sprintf("%s vs %s (%d seeds per value)", strings.ReplaceAll(req.Figure, "_", " "), strings.ReplaceAll(strings.TrimSuffix(p0.Column, "_ms"), "_", " "), r.Spec.Seeds),
		XLabel: axisLabel(p0.Column),
		YLabel: axisLabel(req.Figure) + ", " + stat,
	}
	var series []report.ThresholdSeries
	index := map[string]int{}
	for _, t := range r.Trials {
		key := ""
		if len(t.Values) > 1 {
			key = r.Spec.label(append([]float64{0}, t.Values[1:]...))
			key = key[strings.Index(key, " ")+1:] // drop the first parameter
		}
		i, ok := index[key]
		if !ok {
			i = len(series)
			index[key] = i
			series = append(series, report.ThresholdSeries{Name: key, BandLabel: "95% interval\n(" + kindOf(req).Short() + ")"})
		}
		s := &series[i]
		c := t.Checks[q]
		if t.Invalid != "" || math.IsNaN(c.Est.Value) || c.Missing > 0 {
			s.Bad = append(s.Bad, t.Values[0])
			continue
		}
		s.X = append(s.X, t.Values[0])
		s.Y = append(s.Y, c.Est.Value)
		s.Lo = append(s.Lo, c.Est.Lo)
		s.Hi = append(s.Hi, c.Est.Hi)
	}
	side := "upper"
	if req.Op[0] == '>' {
		side = "lower"
	}
	mark, markLabel := math.NaN(), ""
	if r.Recommended >= 0 {
		mark = r.Trials[r.Recommended].Values[0]
		markLabel = "recommended\n" + strconv.FormatFloat(mark, 'f', -1, 64)
	}
	return report.Threshold(st, series, req.Bound, fmt.Sprintf("required %s %s\n(%s bound)", req.Op, FormatShort(req.Bound), side), mark, markLabel)
}

func kindOf(req Requirement) FigureKind {
	k, _ := KindOf(req.Figure, req.Stat)
	return k
}
