package experiments

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rebalsim/rebalsim/internal/outdir"
	"github.com/rebalsim/rebalsim/scenario"
)

// ReportOptions name how the report cites commands.
type ReportOptions struct {
	// Dir is the sweep directory as the reader should type it (e.g.
	// results/quickstart); it prefixes the scenario files in commands.
	Dir string
	// Ref is how to name the experiment on the command line (a built-in
	// name or the experiment file path).
	Ref string
}

// WriteReport writes DIR/REPORT.md and DIR/scenarios/<point>.yaml (the
// scenario of every point with its overrides applied, runnable with
// `simrun run FILE --seed N`). The sweep must be complete.
func WriteReport(e *Experiment, dir string, o ReportOptions) error {
	r, err := LoadResults(e, dir)
	if err != nil {
		return err
	}
	if o.Dir == "" {
		o.Dir = dir
	}
	if o.Ref == "" {
		o.Ref = e.Name
	}
	sd := filepath.Join(dir, "scenarios")
	if err := outdir.MkdirAll(dir, sd); err != nil {
		return err
	}
	files := make([]string, len(r.Points))
	for i, pt := range r.Points {
		b, err := e.PointYAML(pt)
		if err != nil {
			return err
		}
		if err := outdir.WriteFile(dir, filepath.Join(sd, pt.ID+".yaml"), b); err != nil {
			return err
		}
		files[i] = filepath.ToSlash(filepath.Join(o.Dir, "scenarios", pt.ID+".yaml"))
	}
	return outdir.WriteFile(dir, filepath.Join(dir, "REPORT.md"), []byte(r.markdown(o, files)))
}

func (r *Results) markdown(o ReportOptions, files []string) string {
	e := r.Exp
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s\n\n", e.Title)
	if e.Question != "" {
		w("**Question.** %s\n\n", oneLine(e.Question))
	}
	if e.Description != "" {
		w("%s\n\n", e.Description)
	}
	w("Reproduce everything: `simrun report %s --out %s` (runs the sweep, resuming finished points, then writes this file).\n\n", o.Ref, o.Dir)

	w("## Set-up\n\n")
	base := e.ScenarioRef
	if base == "" {
		base = "inline in the experiment file"
	}
	w("- Base scenario: `%s`; experiment file: `%s`.\n", base, e.Source)
	w("- Seeds 1..%d for each of %d points: %d runs.\n", e.Seeds, len(r.Points), e.Seeds*len(r.Points))
	w("- Statistics over seeds: mean, empirical p50/p95/p99, and a 95%% interval that fits the figure (docs/EXPERIMENTS.md, \"Intervals\"): counts get Garwood's exact Poisson interval on the total over seeds, rates per member-hour the same on total events over total member-hours (the mean shown is the pooled rate), 0/1 figures Wilson's interval, durations a seeded bootstrap of the mean, other figures a t interval clipped at 0 (experiments/interval.go).\n\n")
	if len(e.Params) > 0 {
		w("| parameter (scenario path) | column | values |\n|---|---|---|\n")
		for _, p := range e.Params {
			var vs []string
			for _, v := range p.Values {
				vs = append(vs, v.Text)
			}
			w("| `%s` | `%s` | %s |\n", p.Path, p.Column, strings.Join(vs, ", "))
		}
		w("\n")
	}

	w("## Plots\n\n")
	for _, p := range e.Plots {
		title := p.Title
		if title == "" {
			title = defaultTitle(&p, e)
		}
		w("![%s](%s.png)\n\n*%s* — [SVG](%s.svg)\n\n", title, p.File, title, p.File)
	}

	figs := r.keyFigures()
	if warns := r.Warnings(); len(warns) > 0 {
		w("## Warnings\n\n")
		for _, x := range warns {
			w("- **%s**\n", x)
		}
		w("\n")
	}
	w("## Key numbers\n\n")
	untrusted := 0
	for i := range r.Points {
		if !r.trusted(i) {
			untrusted++
		}
	}
	if untrusted > 0 {
		w("%d of %d points had an invalid run or a group not Stable at the end; they are never named lowest or highest below.\n\n", untrusted, len(r.Points))
	}
	for _, f := range figs {
		fi := figureIndex(f)
		lo, hi := -1, -1
		for i := range r.Points {
			if !r.trusted(i) {
				continue
			}
			m := r.Stats[i][fi].Mean
			if math.IsNaN(m) {
				continue
			}
			if lo < 0 || m < r.Stats[lo][fi].Mean {
				lo = i
			}
			if hi < 0 || m > r.Stats[hi][fi].Mean {
				hi = i
			}
		}
		if lo < 0 {
			w("- `%s`: no value in any valid, stable point.\n", f)
			continue
		}
		w("- `%s` (%s): lowest mean %s at %s (%s); highest %s at %s (%s).\n", f, FigureDoc(f),
			r.meanCI(lo, fi), r.Points[lo].ID, e.Label(r.Points[lo]), r.meanCI(hi, fi), r.Points[hi].ID, e.Label(r.Points[hi]))
	}
	viol := 0
	var first []string
	vi := figureIndex("invariant_violations")
	for i := range r.Points {
		for s, run := range r.Runs[i] {
			if run[vi] > 0 {
				viol++
				if len(first) < 5 {
					first = append(first, fmt.Sprintf("`simrun run %s --seed %d`", files[i], s+1))
				}
			}
		}
	}
	if viol == 0 {
		w("- Invariants held in every run.\n\n")
	} else {
		w("- **%d runs violated an invariant**; reproduce with %s.\n\n", viol, strings.Join(first, ", "))
	}

	w("### Per point (mean over seeds [95%% interval])\n\n")
	w("| point |")
	for _, p := range e.Params {
		w(" %s |", p.Column)
	}
	for _, f := range figs {
		w(" %s |", f)
	}
	w("\n|---|")
	for range len(e.Params) + len(figs) {
		w("---|")
	}
	w("\n")
	for i, pt := range r.Points {
		w("| %s |", pt.ID)
		for j, p := range e.Params {
			w(" %s |", p.Values[pt.Values[j]].Text)
		}
		for _, f := range figs {
			w(" %s |", r.meanCI(i, figureIndex(f)))
		}
		w("\n")
	}
	w("\nAll figures of every run: `points.csv`; per-point statistics of every figure: `summary.csv`.\n\n")

	w("## Reproduce one point\n\n")
	w("Each point's scenario, overrides applied, is in `scenarios/`; one run of it is\n\n")
	w("```\nsimrun run %s --seed 1\n```\n\n", files[0])
	w("| point | parameters | scenario file |\n|---|---|---|\n")
	for i, pt := range r.Points {
		w("| %s | %s | `%s` |\n", pt.ID, e.Label(pt), files[i])
	}
	return b.String()
}

// keyFigures are the figures the plots show, then the usual suspects.
func (r *Results) keyFigures() []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, p := range r.Exp.Plots {
		switch p.Kind {
		case "heatmap":
			add(p.Z)
		case "cdf":
			add(p.X)
		case "timeline":
			// A timeline shows one run over time, not a per-run figure.
		default:
			add(p.Y)
		}
	}
	add("rebalance_count")
	add("false_evictions")
	return out
}

func (r *Results) meanCI(i, fi int) string {
	s := r.Stats[i][fi]
	if math.IsNaN(s.Mean) {
		return "–"
	}
	if math.IsNaN(s.CILo) {
		return fmtSummary(s.Mean)
	}
	return fmt.Sprintf("%s [%s, %s]", fmtSummary(s.Mean), fmtSummary(s.CILo), fmtSummary(s.CIHi))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// PointYAML returns the base scenario with the point's overrides written
// into it, as a file `simrun run` takes. It is checked: parsing it must
// give the same scenario as ParseWithOverrides (the sweep's own path).
func (e *Experiment) PointYAML(pt Point) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(e.ScenarioData, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	for _, o := range e.Overrides(pt) {
		if err := setPath(root, o.Path, o.Value); err != nil {
			return nil, fmt.Errorf("%s: writing %s: %w", pt.ID, o.Path, err)
		}
	}
	body, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# %s, point %s: %s\n# base scenario %s with the sweep's overrides applied.\n# Reproduce one run: simrun run THIS_FILE --seed N (seeds 1..%d)\n",
		e.Name, pt.ID, e.Label(pt), e.ScenarioSource, e.Seeds)
	out := append([]byte(head), body...)
	want, err := e.Scenario(pt)
	if err != nil {
		return nil, err
	}
	got, err := scenario.Parse(want.Source, out)
	if err != nil {
		return nil, fmt.Errorf("%s: the written scenario does not parse: %w", pt.ID, err)
	}
	got.Source = want.Source
	// Fault lines are positions in a file, not behaviour.
	for i := range got.Faults {
		got.Faults[i].Line = 0
	}
	for i := range want.Faults {
		want.Faults[i].Line = 0
	}
	if !reflect.DeepEqual(got, want) {
		return nil, fmt.Errorf("%s: the written scenario differs from the swept one (report this as a bug)", pt.ID)
	}
	return out, nil
}

// sections are the scenario keys that hold a mapping; a path step naming
// one that the file lacks creates it (other dotted steps are one key, as
// in "session.timeout.ms").
var sections = []string{"coordinator", "network", "topics", "groups", "faults", "client", "workload", "start", "latency"}

// setPath writes value at path (the Override syntax) into a YAML mapping.
func setPath(cur *yaml.Node, path string, value any) error {
	if d, ok := value.(interface{ String() string }); ok {
		value = d.String()
	}
	var val yaml.Node
	if err := val.Encode(value); err != nil {
		return err
	}
	val.Style = 0
	rest := path
	for {
		if cur.Kind == yaml.AliasNode {
			cur = cur.Alias
		}
		if cur.Kind != yaml.MappingNode {
			return fmt.Errorf("not a mapping at %q", rest)
		}
		key := ""
		for i := 0; i+1 < len(cur.Content); i += 2 {
			k := cur.Content[i].Value
			if strings.HasPrefix(rest, k) && (len(rest) == len(k) || rest[len(k)] == '.' || rest[len(k)] == '[') && len(k) > len(key) {
				key = k
			}
		}
		if key == "" {
			seg := rest
			if i := strings.IndexAny(seg, ".["); i >= 0 && slices.Contains(sections, seg[:i]) {
				seg = seg[:i]
			} else if i := strings.IndexByte(seg, '['); i >= 0 {
				seg = seg[:i]
			}
			key = seg
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, m)
		}
		rest = rest[len(key):]
		vi := -1
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == key {
				vi = i + 1
			}
		}
		if rest == "" {
			cur.Content[vi] = &val
			return nil
		}
		next := cur.Content[vi]
		if next.Kind == yaml.AliasNode {
			c := *next.Alias
			c.Anchor = ""
			next = &c
			cur.Content[vi] = next
		}
		if rest[0] == '[' {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return fmt.Errorf("missing ]")
			}
			idx, err := strconv.Atoi(rest[1:end])
			if err != nil || next.Kind != yaml.SequenceNode || idx < 0 || idx >= len(next.Content) {
				return fmt.Errorf("bad index %q", rest[:end+1])
			}
			rest = rest[end+1:]
			if rest == "" {
				next.Content[idx] = &val
				return nil
			}
			next = next.Content[idx]
		}
		if next.Kind == yaml.ScalarNode && (next.Tag == "!!null" || next.Value == "") {
			next.Kind, next.Tag, next.Value = yaml.MappingNode, "!!map", ""
		}
		next.Style &^= yaml.FlowStyle // a flow mapping we add to is written in block style
		cur = next
		rest = strings.TrimPrefix(rest, ".")
	}
}
