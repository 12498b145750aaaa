package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rebalsim/rebalsim/scenario"
)

// Limits (TIGER_STYLE: a limit on everything).
const (
	MaxSeeds  = 100000
	MaxPoints = 100000
	MaxParams = 8
)

// Experiment is a parsed and validated experiment file.
type Experiment struct {
	Name        string
	Title       string // one line for reports and plot titles; defaults to Name
	Question    string // the tuning question the experiment answers
	Description string

	// Source is the experiment file ("builtin:<name>" for a built-in).
	Source string
	// Data is the experiment file's bytes.
	Data []byte
	// ScenarioSource names the base scenario (file path, "builtin:<name>",
	// or "<experiment file> (inline scenario)"); ScenarioData is its bytes.
	ScenarioSource string
	ScenarioData   []byte
	// ScenarioRef is how the experiment file names the scenario ("" when
	// inline): a built-in name or a path relative to the experiment file.
	ScenarioRef string

	Seeds  int // seeds 1..Seeds for every point
	Params []Param
	Plots  []Plot
}

// Param is one swept path and its values, in file order.
type Param struct {
	Path   string // path into the scenario, e.g. groups[0].client.session.timeout.ms
	Column string // CSV column, lower snake case, units last
	// Unit is the unit of the values, from the path (a *.ms property, or
	// durations, are "ms"), whatever the column is called, so a custom
	// column name keeps its unit on axes and legends; "" for counts,
	// names and probabilities.
	Unit   string
	Values []Value
	Line   int // line of the sweep entry in the experiment file
}

// Value is one value of a swept parameter.
type Value struct {
	Override any    // what ParseWithOverrides receives
	Text     string // the CSV cell (durations in ms)
	Num      float64
	IsNum    bool
	Line     int
}

// Plot is one requested figure. Names in X, Y, Z and Series are swept
// columns or figures (a "." in a figure name is read as "_", so the
// INTERFACE.md spelling rebalance_duration_ms.p95 works).
type Plot struct {
	Kind   string // line, heatmap, cdf, box, bar, timeline
	X      string
	Y      string
	Z      string // heatmap: the figure shown as colour
	Series string // line, bar, cdf: one curve or bar group per value
	Stat   string // statistic over seeds: mean (default, with 95% interval), p50, p95, p99
	Title  string
	XLabel string
	YLabel string
	LogX   bool
	LogY   bool
	File   string // base file name without extension; default plot-<i>-<kind>
	Seed   int    // timeline: the seed whose run is drawn (default 1)
	Line   int
}

// Point is one grid point: an index into each Param's Values.
type Point struct {
	Index  int
	ID     string // p0000, p0001, ... (sorts as Index does)
	Values []int
}

// Error is an experiment-file error naming file and line.
type Error struct {
	Source string
	Line   int
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", scenario.ShowPath(e.Source), e.Line, e.Msg)
	}
	return scenario.ShowPath(e.Source) + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads an experiment file, or the built-in experiment of that name
// when no such file exists.
func Load(path string) (*Experiment, error) {
	data, err := scenario.ReadFileLimited(path, scenario.MaxFileBytes)
	if err == nil {
		return Parse(path, data)
	}
	var tooBig *scenario.TooBigError
	if errors.As(err, &tooBig) {
		return nil, err
	}
	if errors.Is(err, fs.ErrNotExist) {
		if b, ok := Builtin(path); ok {
			return Parse("builtin:"+path, b)
		}
		return nil, fmt.Errorf("experiment %s: no such file and no such built-in experiment (built-ins: %s): %w",
			scenario.Quote(path), strings.Join(BuiltinNames(), ", "), err)
	}
	return nil, fmt.Errorf("experiment: %w", err)
}

// Parse parses and validates an experiment file. A scenario given by path
// is read relative to the file's directory. Every grid point's scenario is
// parsed once here, so a bad path or value is reported before any run.
func Parse(source string, data []byte) (*Experiment, error) {
	return parse(source, data, nil)
}

// resolvedScenario, when non-nil, replaces reading the scenario (Merge: the
// scenario stored in the sweep directory).
type resolvedScenario struct {
	source string
	data   []byte
}

// cleanText finds a value of an experiment file that cannot reach a
// terminal, a CSV cell or an SVG text (scenario.BadText): labels, titles,
// plot files, names. The description and question may have newlines; the
// top level's scenario block is the scenario's own checks' business.
func cleanText(n *yaml.Node, prose, top bool) (*yaml.Node, string) {
	if n.Kind == yaml.ScalarNode {
		if why := scenario.BadText(n.Value, prose); why != "" {
			return n, why
		}
		return nil, ""
	}
	for i, c := range n.Content {
		p, skip := false, false
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			k := n.Content[i-1].Value
			p, skip = top && (k == "description" || k == "question"), top && k == "scenario"
		}
		if skip {
			continue
		}
		if bad, why := cleanText(c, p, n.Kind == yaml.DocumentNode); bad != nil {
			return bad, why
		}
	}
	return nil, ""
}

func parse(source string, data []byte, rs *resolvedScenario) (*Experiment, error) {
	bad := func(line int, format string, args ...any) error {
		return &Error{Source: source, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	var doc yaml.Node
	if len(data) > scenario.MaxFileBytes {
		return nil, bad(0, "%d bytes, more than the limit of %d MiB on an experiment file", len(data), scenario.MaxFileBytes>>20)
	}
	if err := scenario.UnmarshalOne(data, &doc); err != nil {
		ye := scenario.YAMLError(source, data, err)
		return nil, &Error{Source: source, Line: ye.Line, Msg: ye.Msg, Err: err}
	}
	if n, why := scenario.CheckNodes(&doc); n != nil {
		return nil, bad(n.Line, "%s", why)
	}
	if n, why := cleanText(&doc, false, false); n != nil {
		return nil, bad(n.Line, "a value %s, got %s", why, scenario.Quote(n.Value))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, bad(0, "expected a mapping at the top level")
	}
	root := doc.Content[0]
	e := &Experiment{Source: source, Data: data}
	var scenNode, sweepNode, plotsNode *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, bad(k.Line, "duplicate key %s", scenario.Quote(k.Value))
		}
		seen[k.Value] = true
		switch k.Value {
		case "name", "title", "question", "description":
			if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
				return nil, bad(v.Line, "%s: must be a string, got a %s", k.Value, nodeKind(v))
			}
		}
		switch k.Value {
		case "name":
			e.Name = v.Value
		case "title":
			e.Title = v.Value
		case "question":
			e.Question = strings.TrimSpace(v.Value)
		case "description":
			e.Description = strings.TrimSpace(v.Value)
		case "scenario":
			scenNode = v
		case "seeds":
			n, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > MaxSeeds {
				return nil, bad(v.Line, "seeds: want an integer from 1 to %d, got %s", MaxSeeds, scenario.Quote(v.Value))
			}
			e.Seeds = n
		case "sweep":
			sweepNode = v
		case "plots":
			plotsNode = v
		default:
			return nil, bad(k.Line, "unknown key %s; known keys: name, title, question, description, scenario, seeds, sweep, plots", scenario.Quote(k.Value))
		}
	}
	if e.Name == "" {
		return nil, bad(root.Line, "name: required")
	}
	if !validName(e.Name) {
		return nil, bad(root.Line, "name %s: use letters, digits, '-' and '_' only", scenario.Quote(e.Name))
	}
	if e.Title == "" {
		e.Title = e.Name
	}
	if e.Seeds == 0 {
		return nil, bad(root.Line, "seeds: required (seeds 1..N run for every point)")
	}
	if scenNode == nil {
		return nil, bad(root.Line, "scenario: required (a built-in name, a path relative to this file, or an inline mapping)")
	}
	if err := e.readScenario(scenNode, rs); err != nil {
		return nil, err
	}
	if sweepNode != nil {
		if err := e.parseSweep(sweepNode); err != nil {
			return nil, err
		}
	}
	if plotsNode != nil {
		if err := e.parsePlots(plotsNode); err != nil {
			return nil, err
		}
	}
	if err := e.validatePoints(); err != nil {
		return nil, err
	}
	return e, nil
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "null"
}

func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

func (e *Experiment) readScenario(n *yaml.Node, rs *resolvedScenario) error {
	if rs != nil {
		e.ScenarioSource, e.ScenarioData = rs.source, rs.data
		if n.Kind == yaml.ScalarNode {
			e.ScenarioRef = n.Value
		}
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		e.ScenarioRef = n.Value
		p := n.Value
		if !filepath.IsAbs(p) && !strings.HasPrefix(e.Source, "builtin:") {
			p = filepath.Join(filepath.Dir(e.Source), p)
		}
		if !strings.HasPrefix(e.Source, "builtin:") {
			b, err := scenario.ReadFileLimited(p, scenario.MaxFileBytes)
			var tooBig *scenario.TooBigError
			if errors.As(err, &tooBig) {
				return &Error{Source: e.Source, Line: n.Line, Msg: "scenario: " + err.Error(), Err: err}
			}
			if err == nil {
				e.ScenarioSource, e.ScenarioData = p, b
				return nil
			}
		}
		if b, ok := scenario.Builtin(n.Value); ok {
			e.ScenarioSource, e.ScenarioData = "builtin:"+n.Value, b
			return nil
		}
		return &Error{Source: e.Source, Line: n.Line, Msg: fmt.Sprintf("scenario %s: no such file (relative to this file) and no such built-in scenario (built-ins: %s)",
			scenario.Quote(n.Value), strings.Join(scenario.BuiltinNames(), ", "))}
	case yaml.MappingNode:
		e.ScenarioSource = e.Source + " (inline scenario)"
		e.ScenarioData = inlineText(e.Data, n)
		return nil
	default:
		return &Error{Source: e.Source, Line: n.Line, Msg: "scenario: want a name, a path or an inline mapping"}
	}
}

// inlineText cuts an inline scenario out of the experiment file so that its
// line numbers stay those of the experiment file: every line outside the
// block is blanked and the block is de-indented. A flow-style mapping
// ({...} on one line) is re-encoded instead (its lines then differ).
func inlineText(data []byte, n *yaml.Node) []byte {
	lines := strings.Split(string(data), "\n")
	if n.Style&yaml.FlowStyle != 0 || n.Line < 1 || n.Line > len(lines) {
		b, _ := yaml.Marshal(n)
		return b
	}
	first := n.Line - 1
	indent := len(lines[first]) - len(strings.TrimLeft(lines[first], " "))
	if indent == 0 {
		b, _ := yaml.Marshal(n)
		return b
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i < first {
			out.WriteString("\n")
			continue
		}
		t := strings.TrimLeft(l, " ")
		ind := len(l) - len(t)
		if t != "" && !strings.HasPrefix(t, "#") && ind < indent {
			break // the block ended
		}
		if ind >= indent {
			out.WriteString(l[indent:])
		}
		out.WriteString("\n")
	}
	return out.Bytes()
}

func (e *Experiment) parseSweep(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &Error{Source: e.Source, Line: n.Line, Msg: "sweep: want a mapping from scenario path to a list of values"}
	}
	cols := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := Param{Path: k.Value, Line: k.Line}
		vals := v
		var labels *yaml.Node
		if v.Kind == yaml.MappingNode { // long form {values: [...], column: name}
			vals = nil
			for j := 0; j+1 < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				switch kk.Value {
				case "values":
					vals = vv
				case "column":
					p.Column = vv.Value
				case "labels":
					labels = vv
				default:
					return &Error{Source: e.Source, Line: kk.Line, Msg: fmt.Sprintf("sweep %s: unknown key %s; known keys: values, column, labels", p.Path, scenario.Quote(kk.Value))}
				}
			}
			if vals == nil {
				return &Error{Source: e.Source, Line: v.Line, Msg: fmt.Sprintf("sweep %s: values: required", p.Path)}
			}
		}
		if vals.Kind != yaml.SequenceNode || len(vals.Content) == 0 {
			return &Error{Source: e.Source, Line: vals.Line, Msg: fmt.Sprintf("sweep %s: want a non-empty list of values", p.Path)}
		}
		dur := true
		for _, vn := range vals.Content {
			val, err := parseValue(vn)
			if err != nil {
				return &Error{Source: e.Source, Line: vn.Line, Msg: fmt.Sprintf("sweep %s: %v", p.Path, err)}
			}
			if _, isDur := val.Override.(string); !isDur || !val.IsNum {
				dur = false
			}
			p.Values = append(p.Values, val)
		}
		if labels != nil {
			// labels: one name per value, for the CSV cell, legends and
			// axes (a value that is a whole mapping reads badly).
			if labels.Kind != yaml.SequenceNode || len(labels.Content) != len(p.Values) {
				return &Error{Source: e.Source, Line: labels.Line, Msg: fmt.Sprintf("sweep %s: labels: want a list of %d names, one per value", p.Path, len(p.Values))}
			}
			for j, ln := range labels.Content {
				if ln.Kind != yaml.ScalarNode || ln.Value == "" || ln.ShortTag() == "!!null" {
					return &Error{Source: e.Source, Line: ln.Line, Msg: fmt.Sprintf("sweep %s: labels[%d]: want a name", p.Path, j)}
				}
				if slices.ContainsFunc(p.Values[:j], func(v Value) bool { return v.Text == ln.Value }) {
					return &Error{Source: e.Source, Line: ln.Line, Msg: fmt.Sprintf("sweep %s: label %s used twice", p.Path, scenario.Quote(ln.Value))}
				}
				p.Values[j].Text, p.Values[j].Num, p.Values[j].IsNum = ln.Value, 0, false
			}
			dur = false
		}
		if dur || strings.HasSuffix(p.Path, ".ms") {
			p.Unit = "ms"
		}
		if p.Column == "" {
			p.Column = defaultColumn(p.Path)
			if dur && !strings.HasSuffix(p.Column, "_ms") {
				p.Column += "_ms"
			}
		}
		if !snake(p.Column) {
			return &Error{Source: e.Source, Line: k.Line, Msg: fmt.Sprintf("sweep %s: column %s is not lower snake case", p.Path, scenario.Quote(p.Column))}
		}
		if prev, dup := cols[p.Column]; dup {
			return &Error{Source: e.Source, Line: k.Line, Msg: fmt.Sprintf("sweep %s: column %s already used by line %d; name it with the long form {values: [...], column: NAME}", p.Path, scenario.Quote(p.Column), prev)}
		}
		if isFigure(p.Column) || p.Column == "point" || p.Column == "seed" || p.Column == "trace_sha256" || p.Column == "seeds" {
			return &Error{Source: e.Source, Line: k.Line, Msg: fmt.Sprintf("sweep %s: column %s clashes with a result column; name it with {values: [...], column: NAME}", p.Path, scenario.Quote(p.Column))}
		}
		cols[p.Column] = k.Line
		e.Params = append(e.Params, p)
	}
	if len(e.Params) > MaxParams {
		return &Error{Source: e.Source, Line: n.Line, Msg: fmt.Sprintf("sweep: at most %d parameters", MaxParams)}
	}
	return nil
}

// parseValue reads one sweep value. Durations ("2s") are passed to the
// scenario as written and shown in the CSV in milliseconds.
func parseValue(n *yaml.Node) (Value, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return Value{}, err
	}
	val := Value{Override: v, Line: n.Line}
	switch x := v.(type) {
	case int:
		val.Text, val.Num, val.IsNum = strconv.Itoa(x), float64(x), true
	case float64:
		val.Text, val.Num, val.IsNum = strconv.FormatFloat(x, 'g', -1, 64), x, true
	case bool:
		val.Text = strconv.FormatBool(x)
		if x {
			val.Num = 1
		}
		val.IsNum = true
	case string:
		if d, err := time.ParseDuration(x); err == nil {
			ms := float64(d) / float64(time.Millisecond)
			val.Text, val.Num, val.IsNum = strconv.FormatFloat(ms, 'g', -1, 64), ms, true
		} else {
			val.Text = x
		}
	case nil:
		return Value{}, errors.New("null value")
	default:
		b, err := yaml.Marshal(n)
		if err != nil {
			return Value{}, err
		}
		s := strings.TrimSpace(string(b))
		s = strings.Join(strings.Fields(s), " ")
		val.Text = s
	}
	// Commas and quotes stay as written: every CSV file is written with
	// encoding/csv, which quotes such a cell.
	val.Text = strings.ReplaceAll(val.Text, "\n", " ")
	return val, nil
}

// defaultColumn names a swept path's column after its last key, dots and
// dashes as underscores: groups[0].client.session.timeout.ms becomes
// session_timeout_ms. When the key alone says little, its owner is named
// too: groups[0].members becomes group_members, faults[0].for fault_for,
// network.loss network_loss. Two parameters with one name are an error
// that asks for the long form {values: [...], column: NAME}.
func defaultColumn(path string) string {
	last, owner := path, ""
	if i := strings.LastIndex(path, "]."); i >= 0 {
		last = path[i+2:]
		if j := strings.LastIndex(path[:i], "["); j >= 0 {
			owner = path[:j]
			if k := strings.LastIndexAny(owner, ".]"); k >= 0 {
				owner = owner[k+1:]
			}
			owner = strings.TrimSuffix(owner, "s")
		}
	}
	for _, sect := range []string{"client.", "workload.", "coordinator.", "start.", "network."} {
		if i := strings.LastIndex(last, sect); i >= 0 {
			if i == 0 && (sect == "network." || sect == "start.") {
				owner = strings.TrimSuffix(sect, ".")
			}
			last = last[i+len(sect):]
		}
	}
	switch last {
	case "for", "at", "interval", "downtime", "loss", "latency", "members", "partitions", "brokers", "stagger":
		if owner != "" {
			last = owner + "_" + last
		}
	}
	r := strings.NewReplacer(".", "_", "-", "_", "[", "_", "]", "")
	return strings.ToLower(r.Replace(last))
}

func snake(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

var plotKinds = []string{"line", "heatmap", "cdf", "box", "bar", "timeline"}

func (e *Experiment) parsePlots(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return &Error{Source: e.Source, Line: n.Line, Msg: "plots: want a list"}
	}
	for i, pn := range n.Content {
		if pn.Kind != yaml.MappingNode {
			return &Error{Source: e.Source, Line: pn.Line, Msg: "plots: each entry is a mapping"}
		}
		p := Plot{Line: pn.Line, Stat: "mean"}
		for j := 0; j+1 < len(pn.Content); j += 2 {
			k, v := pn.Content[j], pn.Content[j+1]
			switch k.Value {
			case "kind":
				p.Kind = v.Value
			case "x":
				p.X = v.Value
			case "y":
				p.Y = v.Value
			case "z":
				p.Z = v.Value
			case "series":
				p.Series = v.Value
			case "stat":
				p.Stat = v.Value
			case "title":
				p.Title = v.Value
			case "x_label":
				p.XLabel = v.Value
			case "y_label":
				p.YLabel = v.Value
			case "log_x":
				p.LogX = v.Value == "true"
			case "log_y":
				p.LogY = v.Value == "true"
			case "file":
				p.File = v.Value
			case "seed":
				n, err := strconv.Atoi(v.Value)
				if err != nil || n < 1 {
					return &Error{Source: e.Source, Line: v.Line, Msg: fmt.Sprintf("plots[%d]: seed %s: want a whole number of at least 1", i, scenario.Quote(v.Value))}
				}
				p.Seed = n
			default:
				return &Error{Source: e.Source, Line: k.Line, Msg: fmt.Sprintf("plots[%d]: unknown key %s; known keys: kind, x, y, z, series, stat, title, x_label, y_label, log_x, log_y, file, seed", i, scenario.Quote(k.Value))}
			}
		}
		if err := e.checkPlot(i, &p); err != nil {
			return err
		}
		e.Plots = append(e.Plots, p)
	}
	return nil
}

func (e *Experiment) checkPlot(i int, p *Plot) error {
	bad := func(format string, args ...any) error {
		return &Error{Source: e.Source, Line: p.Line, Msg: fmt.Sprintf("plots[%d]: ", i) + fmt.Sprintf(format, args...)}
	}
	param := func(what, name string) (string, error) {
		if c := e.paramByName(name); c != nil {
			return c.Column, nil
		}
		return "", bad("%s %s is not a swept parameter (swept: %s)", what, scenario.Quote(name), strings.Join(e.columns(), ", "))
	}
	figure := func(what, name string) (string, error) {
		f := strings.ReplaceAll(name, ".", "_")
		if !isFigure(f) {
			return "", bad("%s %s is not a figure (figures: %s)", what, scenario.Quote(name), strings.Join(FigureNames(), ", "))
		}
		return f, nil
	}
	var err error
	if p.Seed != 0 && p.Kind != "timeline" {
		return bad("seed: only a timeline plot draws one seed's run")
	}
	switch p.Stat {
	case "mean", "p50", "p95", "p99":
	default:
		return bad("stat %s: want mean, p50, p95 or p99", scenario.Quote(p.Stat))
	}
	switch p.Kind {
	case "line", "bar", "box":
		if p.X, err = param("x", p.X); err != nil {
			return err
		}
		if p.Y, err = figure("y", p.Y); err != nil {
			return err
		}
		if p.Series != "" {
			if p.Series, err = param("series", p.Series); err != nil {
				return err
			}
		}
		if p.Kind == "box" {
			if err := e.pooled(bad, p.X); err != nil {
				return err
			}
		}
	case "heatmap":
		if p.X, err = param("x", p.X); err != nil {
			return err
		}
		if p.Y, err = param("y", p.Y); err != nil {
			return err
		}
		if p.Z, err = figure("z", p.Z); err != nil {
			return err
		}
	case "timeline":
		if p.X != "" {
			return bad("x: a timeline's x axis is simulated time; leave x out")
		}
		if !isTimelineFigure(p.Y) {
			return bad("y %s: a timeline shows one of %s", scenario.Quote(p.Y), strings.Join(timelineFigureNames(), ", "))
		}
		if p.Series != "" {
			if p.Series, err = param("series", p.Series); err != nil {
				return err
			}
		}
		if p.LogX || p.LogY {
			return bad("a timeline has no log axis")
		}
		if p.Seed == 0 {
			p.Seed = 1
		}
		if p.Seed > e.Seeds {
			return bad("seed %d: the experiment runs seeds 1..%d", p.Seed, e.Seeds)
		}
		if err := e.pooled(bad, ""); err != nil {
			return err
		}
	case "cdf":
		if p.X, err = figure("x", p.X); err != nil {
			return err
		}
		if p.Series != "" {
			if p.Series, err = param("series", p.Series); err != nil {
				return err
			}
		}
		if err := e.pooled(bad, ""); err != nil {
			return err
		}
	default:
		return bad("kind %s: want one of %s", scenario.Quote(p.Kind), strings.Join(plotKinds, ", "))
	}
	// A log axis over a swept parameter must have only values above 0 (it
	// is known before any run; a figure's values are checked when drawn).
	for _, ax := range []struct {
		on   bool
		key  string
		name string
	}{{p.LogX, "log_x", p.X}, {p.LogY && p.Kind == "heatmap", "log_y", p.Y}} {
		if c := e.paramByName(ax.name); ax.on && c != nil {
			for _, v := range c.Values {
				if !v.IsNum || v.Num <= 0 {
					return bad("%s: %s has the value %s, which a log axis cannot show (it needs values above 0)", ax.key, c.Column, scenario.Quote(v.Text))
				}
			}
		}
	}
	if p.File == "" {
		p.File = fmt.Sprintf("plot-%d-%s", i+1, p.Kind)
	}
	if !validName(p.File) {
		return bad("file %s: use letters, digits, '-' and '_' only", scenario.Quote(p.File))
	}
	return nil
}

// maxDistributions bounds the boxes per x value, or the curves, of a box or
// CDF plot: beyond it the legend is unreadable.
const maxDistributions = 12

// pooled checks a box or CDF plot. Such a plot never pools the runs of a
// varying parameter into one distribution (two swept parameters mixed into
// one box make a bimodal box that reads as noise): every varying parameter other than x gets
// its own box or curve (series names which comes first in the legend). It
// refuses when that makes more than maxDistributions.
func (e *Experiment) pooled(bad func(string, ...any) error, x string) error {
	n := 1
	var names []string
	for _, p := range e.Params {
		if len(p.Values) < 2 || p.Column == x {
			continue
		}
		n *= len(p.Values)
		names = append(names, p.Column)
	}
	if n > maxDistributions {
		return bad("%s vary: %d distributions to draw (at most %d; runs of different values are never pooled into one); sweep fewer values, or split the experiment", strings.Join(names, ", "), n, maxDistributions)
	}
	return nil
}

// paramByName finds a parameter by column or path.
func (e *Experiment) paramByName(name string) *Param {
	for i := range e.Params {
		if e.Params[i].Column == name || e.Params[i].Path == name {
			return &e.Params[i]
		}
	}
	return nil
}

func (e *Experiment) columns() []string {
	var out []string
	for _, p := range e.Params {
		out = append(out, p.Column)
	}
	return out
}

// Points returns the grid in order: the first swept parameter varies
// slowest, as in nested loops written in file order.
func (e *Experiment) Points() []Point {
	total := e.NumPoints()
	width := len(strconv.Itoa(total - 1))
	if width < 4 {
		width = 4
	}
	out := make([]Point, total)
	for i := range out {
		vals := make([]int, len(e.Params))
		r := i
		for j := len(e.Params) - 1; j >= 0; j-- {
			n := len(e.Params[j].Values)
			vals[j] = r % n
			r /= n
		}
		out[i] = Point{Index: i, ID: fmt.Sprintf("p%0*d", width, i), Values: vals}
	}
	return out
}

// NumPoints is the size of the grid (1 when nothing is swept).
func (e *Experiment) NumPoints() int {
	n := 1
	for _, p := range e.Params {
		if k := len(p.Values); k > 0 && n > math.MaxInt32/k {
			return math.MaxInt32 // saturates: far above MaxPoints
		}
		n *= len(p.Values)
	}
	return n
}

// Overrides returns the scenario overrides of one point, in file order.
func (e *Experiment) Overrides(pt Point) []scenario.Override {
	out := make([]scenario.Override, len(e.Params))
	for j, p := range e.Params {
		out[j] = scenario.Override{Path: p.Path, Value: p.Values[pt.Values[j]].Override}
	}
	return out
}

// Scenario parses the scenario of one point.
func (e *Experiment) Scenario(pt Point) (*scenario.Scenario, error) {
	return scenario.ParseWithOverrides(e.ScenarioSource, e.ScenarioData, e.Overrides(pt))
}

// Label describes a point: "session_timeout_ms=6000 members=10".
func (e *Experiment) Label(pt Point) string {
	var b strings.Builder
	for j, p := range e.Params {
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.Column + "=" + p.Values[pt.Values[j]].Text)
	}
	if b.Len() == 0 {
		return "base scenario"
	}
	return b.String()
}

func (e *Experiment) validatePoints() error {
	if n := e.NumPoints(); n > MaxPoints {
		return &Error{Source: e.Source, Msg: fmt.Sprintf("sweep: %d points is more than the limit %d", n, MaxPoints)}
	}
	if _, err := scenario.Parse(e.ScenarioSource, e.ScenarioData); err != nil {
		return &Error{Source: e.Source, Msg: "scenario: " + err.Error(), Err: err}
	}
	// Each value alone first, so a bad path or value names its own line.
	for _, p := range e.Params {
		for _, v := range p.Values {
			ov := []scenario.Override{{Path: p.Path, Value: v.Override}}
			if _, err := scenario.ParseWithOverrides(e.ScenarioSource, e.ScenarioData, ov); err != nil {
				return &Error{Source: e.Source, Line: v.Line, Msg: fmt.Sprintf("sweep %s = %s: %v", p.Path, v.Text, err), Err: err}
			}
		}
	}
	// Then every combination (heartbeat < session only shows in pairs).
	for _, pt := range e.Points() {
		if _, err := e.Scenario(pt); err != nil {
			return &Error{Source: e.Source, Line: e.Params[0].Line, Msg: fmt.Sprintf("sweep point %s (%s): %v", pt.ID, e.Label(pt), err), Err: err}
		}
	}
	return nil
}

// finite reports whether x is a number (not NaN, not infinite).
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// WithOverrides returns the experiment with its base scenario changed by
// overrides (simrun sweep/report/tune --set), validated as a file would be.
// The overridden scenario is what the sweep directory stores, so merge,
// report and resume see the same base.
func (e *Experiment) WithOverrides(overrides []scenario.Override) (*Experiment, error) {
	if len(overrides) == 0 {
		return e, nil
	}
	data, err := scenario.Overridden(e.ScenarioSource, e.ScenarioData, overrides)
	if err != nil {
		return nil, err
	}
	return parse(e.Source, e.Data, &resolvedScenario{source: e.ScenarioSource, data: data})
}

// LockStep reports whether the experiment compares assignors or protocols
// (its points differ in a group's group.protocol, assignors or static
// membership) while some point's group polls in lock-step (a constant
// poll.interval under realistic timing, scenario.LockStep): then eager
// rebalances look cheaper than they are, and the sweep says so in one line
// timing: exact stays silent (lock-step is what it asks for).
func (e *Experiment) LockStep() bool {
	seen := map[int]string{}
	varies, lock := false, false
	for _, pt := range e.Points() {
		sc, err := e.Scenario(pt)
		if err != nil {
			continue
		}
		lock = lock || sc.LockStep()
		for i := range sc.Groups {
			p := sc.Groups[i].RebalanceProtocol()
			if q, ok := seen[i]; ok && q != p {
				varies = true
			}
			seen[i] = p
		}
	}
	return varies && lock
}
