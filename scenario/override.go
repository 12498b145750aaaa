package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// applyOverride sets o.Path to o.Value in the node tree rooted at root (a
// mapping) and returns the root. Missing mappings on the way are created;
// list elements must exist. Aliased nodes on the path are copied first, so an
// override never changes the other places that share an anchor.
func applyOverride(d *decoder, root *yaml.Node, o Override) (*yaml.Node, error) {
	bad := func(n *yaml.Node, format string, args ...any) error {
		e := d.errf(n, "", format, args...).(*Error)
		e.Line, e.Override = 0, o.Text()
		return e
	}
	val, err := valueNode(o.Value)
	if err != nil {
		return nil, bad(root, "cannot encode value %v: %v", o.Value, err)
	}
	if d.overrides == nil {
		d.overrides = map[*yaml.Node]string{}
	}
	markOverride(d.overrides, val, o.Text())
	cur, schema, rest, where := root, rootSchema, o.Path, ""
	for {
		if cur.Kind != yaml.MappingNode {
			return nil, bad(cur, "%s is %s, not a mapping", nonEmpty(where), kindName(cur))
		}
		ks, ok := longestKey(schema, rest)
		if !ok {
			seg := rest
			if i := strings.IndexAny(seg, ".["); i >= 0 {
				seg = seg[:i]
			}
			return nil, bad(cur, "unknown key %q in %s; known keys: %s", seg, nonEmpty(where), strings.Join(schema.names(), ", "))
		}
		rest = rest[len(ks.name):]
		where = sub(where, ks.name)
		vi := valueIndex(cur, ks.name)
		if rest == "" {
			setLine(val, lineOf(cur, vi))
			if vi < 0 {
				cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ks.name, Line: cur.Line}, val)
			} else {
				cur.Content[vi] = val
			}
			return root, nil
		}
		if rest[0] == '[' {
			if ks.items == nil {
				return nil, bad(cur, "%s is not a list", where)
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, bad(cur, "missing ] after %s", where)
			}
			idx, err := strconv.Atoi(rest[1:end])
			if err != nil || idx < 0 || strconv.Itoa(idx) != rest[1:end] {
				return nil, bad(cur, "bad list index %q", rest[1:end])
			}
			if vi < 0 {
				return nil, bad(cur, "%s[%d]: the file has no %s", where, idx, where)
			}
			seq := unalias(cur, vi)
			if seq.Kind != yaml.SequenceNode {
				return nil, bad(seq, "%s is %s, not a list", where, kindName(seq))
			}
			if idx >= len(seq.Content) {
				return nil, bad(seq, "%s[%d]: index out of range (%s has %d entries)", where, idx, where, len(seq.Content))
			}
			where = where + "[" + rest[1:end] + "]"
			rest = rest[end+1:]
			if rest == "" {
				setLine(val, seq.Content[idx].Line)
				seq.Content[idx] = val
				return root, nil
			}
			if rest[0] != '.' {
				return nil, bad(seq, "expected . after %s", where)
			}
			cur = unalias(seq, idx)
			schema = ks.items
			rest = rest[1:]
			continue
		}
		// rest[0] == '.'
		if ks.fields == nil {
			return nil, bad(cur, "%s has no keys below it", where)
		}
		if vi < 0 {
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: cur.Line}
			cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ks.name, Line: cur.Line}, m)
			vi = len(cur.Content) - 1
		} else if n := resolve(cur.Content[vi]); n != nil && isNull(n) {
			cur.Content[vi] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line}
		}
		cur = unalias(cur, vi)
		schema = ks.fields
		rest = rest[1:]
	}
}

func nonEmpty(where string) string {
	if where == "" {
		return "the top level"
	}
	return where
}

// longestKey finds the longest key of schema that rest starts with, followed
// by the end, "." or "[" (keys contain dots: "session.timeout.ms").
func longestKey(schema *mapSchema, rest string) (keySchema, bool) {
	var best keySchema
	found := false
	for _, k := range schema.keys {
		if !strings.HasPrefix(rest, k.name) {
			continue
		}
		if len(rest) > len(k.name) && rest[len(k.name)] != '.' && rest[len(k.name)] != '[' {
			continue
		}
		if !found || len(k.name) > len(best.name) {
			best, found = k, true
		}
	}
	return best, found
}

// valueIndex returns the index in m.Content of key's value, or -1.
func valueIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key && k.ShortTag() != "!!merge" {
			return i + 1
		}
	}
	return -1
}

func lineOf(m *yaml.Node, vi int) int {
	if vi >= 0 {
		return m.Content[vi].Line
	}
	return m.Line
}

// unalias replaces parent.Content[i] by a copy of its target when it is an
// alias, and returns the (possibly copied) node.
func unalias(parent *yaml.Node, i int) *yaml.Node {
	n := parent.Content[i]
	if n.Kind != yaml.AliasNode {
		return n
	}
	t := resolve(n)
	if t == nil {
		return n
	}
	c := copyNode(t, 0)
	c.Anchor = ""
	parent.Content[i] = c
	return c
}

// copyNode copies a node tree (aliases inside stay aliases).
func copyNode(n *yaml.Node, depth int) *yaml.Node {
	c := *n
	if depth < 64 && len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, e := range n.Content {
			c.Content[i] = copyNode(e, depth+1)
		}
	}
	return &c
}

// valueNode encodes an override value as a YAML node.
func valueNode(v any) (*yaml.Node, error) {
	if dur, ok := v.(time.Duration); ok {
		v = dur.String()
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0], nil
	}
	return &n, nil
}

// markOverride names the override every node of its value came from.
func markOverride(m map[*yaml.Node]string, n *yaml.Node, text string) {
	m[n] = text
	for _, c := range n.Content {
		markOverride(m, c, text)
	}
}

// Text is the override as a command line writes it: --set PATH=VALUE.
func (o Override) Text() string {
	v := fmt.Sprint(o.Value)
	if d, ok := o.Value.(time.Duration); ok {
		v = d.String()
	} else if o.Value != nil {
		if b, err := yaml.Marshal(o.Value); err == nil {
			v = strings.TrimSpace(string(b))
			if strings.Contains(v, "\n") {
				v = fmt.Sprint(o.Value)
			}
		}
	}
	return "--set " + quoteIfNeeded(o.Path+"="+v)
}

// quoteIfNeeded Go-quotes s when it has control characters or is long.
func quoteIfNeeded(s string) string {
	if len(s) > MaxQuoted*2 || strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return quote(s)
	}
	return s
}

func setLine(n *yaml.Node, line int) {
	n.Line = line
	for _, c := range n.Content {
		setLine(c, line)
	}
}

// Overridden returns the scenario file with the overrides applied, as YAML
// (what a sweep point or `simrun shrink --set` writes out): parse the result
// and you get ParseWithOverrides(source, data, overrides).
func Overridden(source string, data []byte, overrides []Override) ([]byte, error) {
	if len(overrides) == 0 {
		return data, nil
	}
	if _, err := ParseWithOverrides(source, data, overrides); err != nil {
		return nil, err
	}
	d := &decoder{source: source}
	var doc yaml.Node
	if err := unmarshal(data, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	for _, o := range overrides {
		var err error
		if root, err = applyOverride(d, root, o); err != nil {
			return nil, err
		}
	}
	doc.Content[0] = root
	return yaml.Marshal(&doc)
}
