package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"

	"github.com/rebalsim/rebalsim/internal/outdir"
)

// writeTidy writes the notebook-friendly files beside points.csv:
//
//	points_long.csv         one row per point, seed and figure ("tidy" or
//	                        long form: point, the swept columns, seed,
//	                        figure, value), encoding/csv, values in
//	                        points.csv's round-trip format, no value = ""
//	effective_config.jsonl  one JSON object per point: the point, its swept
//	                        values and the effective configuration of its
//	                        scenario (every profile default filled in)
//
// Both depend only on the point files, like every other result file.
func (r *Results) writeTidy(dir string) error {
	e := r.Exp
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	h := append([]string{"point"}, e.columns()...)
	h = append(h, "seed", "figure", "value")
	w.Write(h)
	figs := FigureNames()
	for i, pt := range r.Points {
		head := []string{pt.ID}
		for j, p := range e.Params {
			head = append(head, p.Values[pt.Values[j]].Text)
		}
		for s, run := range r.Runs[i] {
			seed := strconv.Itoa(s + 1)
			for f, name := range figs {
				row := append(append([]string{}, head...), seed, name, fmtExact(run[f]))
				w.Write(row)
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := outdir.WriteFile(dir, filepath.Join(dir, "points_long.csv"), buf.Bytes()); err != nil {
		return err
	}
	var cfg bytes.Buffer
	for _, pt := range r.Points {
		sc, err := e.Scenario(pt)
		if err != nil {
			return err
		}
		values := map[string]any{}
		for j, p := range e.Params {
			v := p.Values[pt.Values[j]]
			if v.IsNum {
				values[p.Column] = v.Num
			} else {
				values[p.Column] = v.Text
			}
		}
		line, err := json.Marshal(struct {
			Point  string         `json:"point"`
			Values map[string]any `json:"values"`
			Config Config         `json:"effective_config"`
		}{pt.ID, values, EffectiveConfig(sc)})
		if err != nil {
			return err
		}
		cfg.Write(line)
		cfg.WriteByte('\n')
	}
	return outdir.WriteFile(dir, filepath.Join(dir, "effective_config.jsonl"), cfg.Bytes())
}
