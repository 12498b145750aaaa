package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Error is a scenario error: the file, the line, the field path and what is
// wrong. Its text is "file:line: path: message" (the line or the path are left
// out when unknown).
type Error struct {
	Source string
	Line   int
	Path   string
	Msg    string
	// Override, when the error is in a value a --set override put in,
	// names it ("--set PATH=VALUE"); Line is then 0: the file's line
	// would blame the user's file for the command line's value.
	Override string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(ShowPath(e.Source))
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Override != "" {
		b.WriteString(e.Override)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// decoder turns yaml.Nodes into values, naming source, line and path in
// every error. It stops at the first error.
type decoder struct {
	source string
	// pollDefaulted[i]: groups[i] left poll.interval to its default (which
	// depends on timing:, read after the groups).
	pollDefaulted []bool
	pollWritten   bool     // the last workload read set poll.interval
	notes         []string // Scenario.Notes
	// visits counts the mapping entries read, merges and aliases expanded;
	// maxVisits bounds it (an alias or merge-key bomb).
	visits int
	// warnings are the scenario's Warnings (input that is valid but does
	// nothing, such as a fault after the end of the run).
	warnings []string
	// consumerAt is the first group.protocol: consumer node (parse.go
	// checks the coordinator can serve it).
	consumerAt   *yaml.Node
	consumerPath string
	// coord is the decoded coordinator (groups' configs are checked
	// against its group.consumer.* bounds).
	coord *Coordinator
	// overrides names the --set override each of its value's nodes came
	// from (errf's Error.Override).
	overrides map[*yaml.Node]string
}

// warnf records a warning in the "file:line: path: message" form of errors.
func (d *decoder) warnf(n *yaml.Node, path, format string, args ...any) {
	d.warnings = append(d.warnings, d.errf(n, path, format, args...).Error())
}

// MaxYAMLNodes bounds the YAML nodes one file may expand to through aliases
// and merge keys ("<<: *base"): 40 levels of doubling merges in 881 bytes
// would otherwise take hours to read. No scenario needs anywhere near it.
const MaxYAMLNodes = 200_000

// visit counts n nodes read and fails past MaxYAMLNodes.
func (d *decoder) visit(at *yaml.Node, path string, n int) error {
	d.visits += n
	if d.visits > MaxYAMLNodes {
		return d.errf(at, path, "the file's aliases and merge keys (<<) expand to more than %d YAML nodes (a limit against alias bombs); write the values out instead", MaxYAMLNodes)
	}
	return nil
}

func (d *decoder) errf(n *yaml.Node, path, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	e := &Error{Source: d.source, Line: line, Path: path, Msg: fmt.Sprintf(format, shortenQuoted(format, args)...)}
	if o, ok := d.overrides[n]; ok && n != nil {
		e.Line, e.Override = 0, o
	}
	return e
}

// MaxQuoted is how many bytes of a value an error message quotes: a 50 MB
// scalar, or a file read by mistake, is not printed whole.
const MaxQuoted = 40

// quote is %q of at most MaxQuoted bytes of s (control characters, ANSI
// escapes included, come out escaped), with "…" when cut.
func quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// Quote is quote for other packages' messages.
func Quote(s string) string { return quote(s) }

// shortenQuoted cuts the string arguments that format prints with %q to
// MaxQuoted bytes, so that every message quotes little of a value.
func shortenQuoted(format string, args []any) []any {
	out := args
	ai := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			break
		}
		if format[j] == '%' {
			i = j
			continue
		}
		if format[j] == 'q' && ai < len(args) {
			if s, ok := args[ai].(string); ok && len(s) > MaxQuoted {
				if &out[0] == &args[0] {
					out = append([]any(nil), args...)
				}
				out[ai] = rawText(quote(s))
			}
		}
		ai++
		i = j
	}
	return out
}

// rawText is an already quoted string that %q prints as it is.
type rawText string

func (r rawText) Format(f fmt.State, _ rune) { f.Write([]byte(r)) }

func sub(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// maxAliasDepth bounds alias chains (an alias of an alias of ...).
const maxAliasDepth = 64

// resolve follows aliases. A nil result means a cycle or an over-long chain.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i == maxAliasDepth {
			return nil
		}
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.DocumentNode:
		return "a document"
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing (null)"
		}
		return quote(n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "an unknown node"
}

// fields is a decoded mapping: key -> (key node, value node).
type fields struct {
	node  *yaml.Node // the mapping, for "missing key" lines
	path  string
	keys  map[string]*yaml.Node
	vals  map[string]*yaml.Node
	order []string // keys in document order
}

// get returns the value node of key (aliases resolved) or nil.
func (f *fields) get(key string) *yaml.Node { return f.vals[key] }

// keyNode returns the key node of key, or the mapping when absent.
func (f *fields) line(key string) *yaml.Node {
	if k := f.keys[key]; k != nil {
		return k
	}
	return f.node
}

// mapping decodes n as a mapping whose keys must be in schema. Merge keys
// ("<<: *base") are honoured; explicit keys win over merged ones.
func (d *decoder) mapping(n *yaml.Node, path string, schema *mapSchema) (*fields, error) {
	f := &fields{path: path, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	if err := d.collect(f, n, path, schema, false, 0); err != nil {
		return nil, err
	}
	return f, nil
}

func (d *decoder) collect(f *fields, n *yaml.Node, path string, schema *mapSchema, merged bool, depth int) error {
	orig := n
	n = resolve(n)
	if n == nil {
		return d.errf(orig, path, "alias chain too long or cyclic")
	}
	if depth > maxAliasDepth {
		return d.errf(orig, path, "merge keys nested too deep")
	}
	if n.Kind != yaml.MappingNode {
		return d.errf(n, path, "expected a mapping, got %s", kindName(n))
	}
	if f.node == nil {
		f.node = n
	}
	if len(n.Content)%2 != 0 {
		return d.errf(n, path, "malformed mapping")
	}
	if err := d.visit(orig, path, 1+len(n.Content)/2); err != nil {
		return err
	}
	var merges []*yaml.Node
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return d.errf(k, path, "keys must be plain names, got %s", kindName(k))
		}
		name := k.Value
		if !schema.has(name) {
			shown := name
			if len(name) > MaxQuoted || strings.IndexFunc(name, unicode.IsControl) >= 0 {
				shown = quote(name)
			}
			if near := closest(name, schema.names()); near != "" {
				return d.errf(k, sub(path, shown), "unknown key (did you mean %s?); known keys: %s", near, strings.Join(schema.names(), ", "))
			}
			return d.errf(k, sub(path, shown), "unknown key; known keys: %s", strings.Join(schema.names(), ", "))
		}
		if _, dup := f.keys[name]; dup {
			if merged {
				continue // an explicit key, or an earlier merge, wins
			}
			return d.errf(k, sub(path, name), "duplicate key")
		}
		rv := resolve(v)
		if rv == nil {
			return d.errf(v, sub(path, name), "alias chain too long or cyclic")
		}
		f.keys[name] = k
		f.vals[name] = rv
		f.order = append(f.order, name)
	}
	for _, m := range merges {
		rm := resolve(m)
		if rm == nil {
			return d.errf(m, path, "alias chain too long or cyclic")
		}
		if rm.Kind == yaml.SequenceNode {
			for _, e := range rm.Content {
				if err := d.collect(f, e, path, schema, true, depth+1); err != nil {
					return err
				}
			}
			continue
		}
		if err := d.collect(f, rm, path, schema, true, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// sequence decodes n as a list and returns its elements, aliases resolved.
func (d *decoder) sequence(n *yaml.Node, path string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, path, "expected a list, got %s", kindName(n))
	}
	if err := d.visit(n, path, 1+len(n.Content)); err != nil {
		return nil, err
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		r := resolve(e)
		if r == nil {
			return nil, d.errf(e, index(path, i), "alias chain too long or cyclic")
		}
		out[i] = r
	}
	return out, nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// str decodes a non-empty scalar as a string (any scalar tag: ids like 2024
// are names too).
func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", d.errf(n, path, "expected a string, got %s", kindName(n))
	}
	if n.Value == "" {
		return "", d.errf(n, path, "must not be empty")
	}
	if why := BadText(n.Value, false); why != "" {
		// An ANSI escape in a name would reach the terminal with every
		// message and summary that prints it (and break an SVG).
		return "", d.errf(n, path, "%s, got %s", why, quote(n.Value))
	}
	return n.Value, nil
}

// integer decodes an integer within [lo, hi]. An integral float (6000.0, as
// JSON-decoded override values are) is accepted.
func (d *decoder) integer(n *yaml.Node, path string, lo, hi int64) (int64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, d.errf(n, path, "expected an integer, got %s", kindName(n))
	}
	var v int64
	switch n.ShortTag() {
	case "!!int":
		if err := n.Decode(&v); err != nil {
			return 0, d.errf(n, path, "integer %s out of range", n.Value)
		}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || f != math.Trunc(f) || math.IsInf(f, 0) ||
			f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, d.errf(n, path, "expected an integer, got %s", kindName(n))
		}
		v = int64(f)
	default:
		return 0, d.errf(n, path, "expected an integer, got %s", kindName(n))
	}
	if v < lo || v > hi {
		if hi == math.MaxInt64 {
			return 0, d.errf(n, path, "must be at least %d, got %d", lo, v)
		}
		return 0, d.errf(n, path, "must be between %d and %d, got %d", lo, hi, v)
	}
	return v, nil
}

// MaxTime is the longest duration the simulator accepts anywhere (a run's
// duration, a fault's window, a distribution's parameter, a LONG *.ms
// property): one year. The virtual clock counts nanoseconds in an int64
// (292 years), and timers add several such durations to "now"; a bound well
// inside it keeps every sum exact instead of wrapping round.
const MaxTime = 365 * 24 * time.Hour

// maxIntMs is Kafka's bound on an INT property: Java's Integer.MAX_VALUE.
const maxIntMs = math.MaxInt32

// millis decodes a Kafka *.ms property of ConfigDef type INT: an integer of
// milliseconds in [0, Integer.MAX_VALUE] (ConfigDef rejects a larger INT).
func (d *decoder) millis(n *yaml.Node, path string) (time.Duration, error) {
	return d.millisIn(n, path, maxIntMs, "Kafka's INT range")
}

// millisLong decodes a *.ms property of type LONG: Kafka accepts up to
// Long.MAX_VALUE; the simulator caps it at MaxTime.
func (d *decoder) millisLong(n *yaml.Node, path string) (time.Duration, error) {
	return d.millisIn(n, path, MaxTime.Milliseconds(), "the simulator's limit of one year")
}

func (d *decoder) millisIn(n *yaml.Node, path string, hi int64, why string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		if _, err := time.ParseDuration(n.Value); err == nil {
			return 0, d.errf(n, path, "Kafka *.ms properties are integers in milliseconds, got %s", quote(n.Value))
		}
	}
	v, err := d.integer(n, path, math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, d.errf(n, path, "negative duration %dms", v)
	}
	if v > hi {
		return 0, d.errf(n, path, "must be at most %d (%s), got %d", hi, why, v)
	}
	return time.Duration(v) * time.Millisecond, nil
}

// duration decodes a non-negative Go duration string ("250ms", "10s"); a
// bare 0 is accepted.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return 0, d.errf(n, path, "expected a duration like \"250ms\" or \"10s\", got %s", kindName(n))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		if n.ShortTag() == "!!int" || n.ShortTag() == "!!float" {
			return 0, d.errf(n, path, "a duration needs a unit, like \"%sms\" or \"%ss\"", n.Value, n.Value)
		}
		return 0, d.errf(n, path, "expected a duration like \"250ms\" or \"10s\", got %s", quote(n.Value))
	}
	if v < 0 {
		return 0, d.errf(n, path, "negative duration %v", v)
	}
	if v > MaxTime {
		return 0, d.errf(n, path, "%s is longer than %v (one year, the simulator's limit on any duration)", quote(n.Value), MaxTime)
	}
	return v, nil
}

// probability decodes a number in [0, 1].
func (d *decoder) probability(n *yaml.Node, path string) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return 0, d.errf(n, path, "expected a probability between 0 and 1, got %s", kindName(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return 0, d.errf(n, path, "must be between 0 and 1, got %s", n.Value)
	}
	return f, nil
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, d.errf(n, path, "expected true or false, got %s", kindName(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, d.errf(n, path, "expected true or false, got %s", kindName(n))
	}
	return b, nil
}

// stringList decodes a list of strings; a single scalar is a list of one,
// and a scalar with commas is split as Kafka's LIST config type does.
func (d *decoder) stringList(n *yaml.Node, path string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := d.str(n, path)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, p := range strings.Split(s, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				return nil, d.errf(n, path, "empty entry in %q", s)
			}
			out = append(out, p)
		}
		return out, nil
	}
	elems, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, d.errf(n, path, "must not be empty")
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		s, err := d.str(e, index(path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

var (
	distConstantSchema    = &mapSchema{keys: leaves("dist", "value")}
	distUniformSchema     = &mapSchema{keys: leaves("dist", "min", "max")}
	distExponentialSchema = &mapSchema{keys: leaves("dist", "min", "mean")}
	distLognormalSchema   = &mapSchema{keys: leaves("dist", "median", "p99")}
	distAnySchema         = &mapSchema{keys: leaves("dist", "value", "min", "max", "mean", "median", "p99")}
)

// dist decodes a distribution: a constant duration, or
// {dist: constant, value} / {dist: uniform, min, max} /
// {dist: exponential, min, mean} / {dist: lognormal, median, p99}.
func (d *decoder) dist(n *yaml.Node, path string) (Dist, error) {
	if n.Kind == yaml.ScalarNode {
		v, err := d.duration(n, path)
		if err != nil {
			return Dist{}, err
		}
		return Dist{Kind: DistConstant, Value: v}, nil
	}
	f, err := d.mapping(n, path, distAnySchema)
	if err != nil {
		if n.Kind != yaml.MappingNode {
			return Dist{}, d.errf(n, path, "expected a duration or a distribution {dist: uniform|exponential|lognormal|constant, ...}, got %s", kindName(n))
		}
		return Dist{}, err
	}
	kn := f.get("dist")
	if kn == nil {
		return Dist{}, d.errf(n, path, "missing key dist (constant, uniform, exponential or lognormal)")
	}
	kind, err := d.str(kn, sub(path, "dist"))
	if err != nil {
		return Dist{}, err
	}
	var schema *mapSchema
	switch DistKind(kind) {
	case DistConstant:
		schema = distConstantSchema
	case DistUniform:
		schema = distUniformSchema
	case DistExponential:
		schema = distExponentialSchema
	case DistLognormal:
		schema = distLognormalSchema
	default:
		return Dist{}, d.errf(kn, sub(path, "dist"), "unknown distribution %q; valid: constant, uniform, exponential, lognormal", kind)
	}
	get := func(key string) (time.Duration, error) {
		for _, k := range f.order {
			if !schema.has(k) {
				return 0, d.errf(f.line(k), sub(path, k), "not a parameter of a %s distribution; it takes: %s", kind, strings.Join(schema.names()[1:], ", "))
			}
		}
		v := f.get(key)
		if v == nil {
			return 0, d.errf(n, path, "missing key %s of a %s distribution", key, kind)
		}
		return d.duration(v, sub(path, key))
	}
	out := Dist{Kind: DistKind(kind)}
	switch out.Kind {
	case DistConstant:
		if out.Value, err = get("value"); err != nil {
			return Dist{}, err
		}
	case DistUniform:
		if out.Min, err = get("min"); err != nil {
			return Dist{}, err
		}
		if out.Max, err = get("max"); err != nil {
			return Dist{}, err
		}
		if out.Min > out.Max {
			return Dist{}, d.errf(n, path, "uniform min (%s) must not be greater than max (%s)", out.Min, out.Max)
		}
	case DistExponential:
		if out.Min, err = get("min"); err != nil {
			return Dist{}, err
		}
		if out.Mean, err = get("mean"); err != nil {
			return Dist{}, err
		}
		if out.Mean <= 0 {
			return Dist{}, d.errf(n, path, "exponential mean must be positive")
		}
	case DistLognormal:
		if out.Median, err = get("median"); err != nil {
			return Dist{}, err
		}
		if out.P99, err = get("p99"); err != nil {
			return Dist{}, err
		}
		if out.Median <= 0 {
			return Dist{}, d.errf(n, path, "lognormal median must be positive")
		}
		if out.P99 <= out.Median {
			return Dist{}, d.errf(n, path, "lognormal p99 (%s) must be greater than median (%s)", out.P99, out.Median)
		}
	}
	return out, nil
}

// closest returns the known key within edit distance 2 of name (a typo),
// or "".
func closest(name string, known []string) string {
	if len(name) > 64 {
		return "" // no key is that long; and the distance costs len(name) × len(key)
	}
	best, bestD := "", 3
	for _, k := range known {
		if d := EditDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of two short strings (the
// did-you-mean of unknown keys here and of unknown names in the CLI).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
