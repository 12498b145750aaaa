package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// YAML means what it says. The parser reads YAML 1.1's
// octal (`members: 010` is 8, `--set …session.timeout.ms=030000` 12,288
// ms), ignores a tag it does not know (`!mytag 5` is 5) and stops at the
// first document (`---` and a second scenario are silently dropped). Each
// of these is an error naming the line and why.

// leadingZero matches a plain integer written with a leading zero.
var leadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// knownTags are the tags a scenario or experiment file may write (or the
// parser resolves a plain value to).
var knownTags = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true,
	"!!map": true, "!!seq": true, "!!merge": true, "!!timestamp": true, "!!binary": true}

// CheckNodes refuses what YAML would read differently from how it looks:
// an integer with a leading zero (octal in YAML 1.1, the version the
// parser follows there) and a tag other than YAML's own. It returns the
// offending node and why.
func CheckNodes(n *yaml.Node) (*yaml.Node, string) {
	if n == nil {
		return nil, ""
	}
	if n.Kind == yaml.ScalarNode || n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		if t := n.ShortTag(); !knownTags[t] || (n.Style&yaml.TaggedStyle != 0 && (t == "!!timestamp" || t == "!!binary")) {
			return n, fmt.Sprintf("unknown tag %s: the simulator reads plain YAML values; remove the tag", Quote(n.Tag))
		}
	}
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 &&
		leadingZero.MatchString(n.Value) {
		dec := trimZeros(n.Value)
		if n.Value[0] == '-' {
			dec = "-" + dec
		}
		why := fmt.Sprintf("the integer %s has a leading zero, which YAML 1.1 reads as octal (%s); write %s",
			Quote(n.Value), octalText(n.Value, dec), dec)
		if !strings.ContainsAny(n.Value, "89") {
			why += ", or 0o" + trimZeros(n.Value) + " if octal is meant"
		}
		return n, why
	}
	for _, c := range n.Content {
		if bad, why := CheckNodes(c); bad != nil {
			return bad, why
		}
	}
	return nil, ""
}

// octalText says what YAML 1.1 makes of a leading-zero integer.
func octalText(v, dec string) string {
	var x int64
	if err := (&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v}).Decode(&x); err != nil {
		return "and 8 and 9 are not octal digits"
	}
	return fmt.Sprintf("%d, not %s", x, dec)
}

func trimZeros(v string) string {
	for len(v) > 1 && (v[0] == '0' || v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	return v
}

// UnmarshalOne reads one YAML document into doc, refusing a further
// document after it (a `---` line and more), and a parser panic.
func UnmarshalOne(data []byte, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(doc); err != nil {
		if errors.Is(err, io.EOF) {
			*doc = yaml.Node{}
			return nil
		}
		return err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	default:
		return &FurtherDocument{Line: next.Line}
	}
}

// FurtherDocument is the error of a file with a second YAML document.
type FurtherDocument struct{ Line int }

func (e *FurtherDocument) Error() string {
	return "a second YAML document starts here (after a --- line); a file holds one document: remove the --- line or split the file"
}

// BadText returns why s cannot be shown in a terminal or written into a
// CSV cell or an SVG text (a control character: an ESC sequence retitles
// the terminal and clears the screen, and XML forbids most controls even
// escaped; invalid UTF-8; a bidirectional override, which shows text in
// another order than it is), or "". allowNewlines admits newlines and tabs
// (prose such as an experiment's description).
func BadText(s string, allowNewlines bool) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if allowNewlines && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) {
			return "must not contain control characters (such as tabs, newlines or terminal escapes)"
		}
		if (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return "must not contain bidirectional-override characters"
		}
	}
	return ""
}

// ShowPath is a file name as messages print it: as it is when it is clean
// text (BadText), else Go-quoted, so that an escape sequence in a file
// name never reaches the terminal.
func ShowPath(p string) string {
	if BadText(p, false) == "" {
		return p
	}
	return strconv.Quote(p)
}
