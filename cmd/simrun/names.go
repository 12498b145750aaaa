package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/rebalsim/rebalsim/internal/outdir"

	"github.com/rebalsim/rebalsim/scenario"
)

// checkNames splits a comma-separated list flag and refuses a name that is
// not one of known: the error names the flag, quotes the name, suggests
// the closest known one (a typo such as unowned-at-endd) and lists them
// all. Without this check `explore --oracle unowned-at-endd` ran every seed
// and reported "0 with findings", exit 0. Empty entries are refused too.
func checkNames(flag, list, what string, known []string) ([]string, error) {
	if list == "" {
		return nil, nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("%s %s: an empty name in the list; known: %s", flag, quoteArg(list), strings.Join(known, ", "))
		}
		if !slices.Contains(known, n) {
			hint := ""
			if near := nearest(n, known); near != "" {
				hint = fmt.Sprintf(" (did you mean %s?)", near)
			}
			return nil, fmt.Errorf("%s: unknown %s %s%s; known: %s", flag, what, quoteArg(n), hint, strings.Join(known, ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// nearest returns the known name within edit distance 2 of name (or whose
// case-folded form equals it), or "".
func nearest(name string, known []string) string {
	if len(name) > 64 {
		return ""
	}
	best, bestD := "", 3
	for _, k := range known {
		d := scenario.EditDistance(strings.ToLower(name), strings.ToLower(k))
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// quoteArg shows a value the user typed in a message: as it is when it is
// short printable text, else Go-quoted (control characters escaped, so an
// ESC sequence in an argument never reaches the terminal raw) and cut.
func quoteArg(s string) string {
	const maxShown = 80
	clean := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == unicode.ReplacementChar || r == '"' || unicode.IsSpace(r)
	}) < 0
	if clean && len(s) <= maxShown {
		return `"` + s + `"`
	}
	if len(s) > maxShown {
		return fmt.Sprintf("%q… (%d bytes)", s[:maxShown], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// cleanWriter escapes the control characters other than newline, tab and
// carriage return (the progress line's) in what simrun prints, as \xNN
// (C1 controls, U+0080–U+009F, as \u00NN): the last guard, behind the
// checks of names, labels and file names, that no escape sequence from an
// input (a file name, a flag's value) reaches the terminal.
type cleanWriter struct{ w io.Writer }

func (c cleanWriter) Write(p []byte) (int, error) {
	clean := true
	for i, b := range p {
		if isCtl(b) || (b == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f) {
			clean = false
			break
		}
	}
	if clean {
		return c.w.Write(p)
	}
	var out []byte
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch {
		case isCtl(b):
			out = fmt.Appendf(out, `\x%02x`, b)
		case b == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, p[i+1])
			i++
		default:
			out = append(out, b)
		}
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func isCtl(b byte) bool { return (b < 0x20 && b != '\n' && b != '\t' && b != '\r') || b == 0x7f }

// osFile is the *os.File behind w (a terminal's progress line needs it).
func osFile(w io.Writer) (*os.File, bool) {
	if c, ok := w.(cleanWriter); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	return f, ok
}

// lockOut takes dir's writer lock (outdir.Lock) for the rest of the
// command: a second simrun writing the same directory is refused with a
// clear error instead of racing this one.
func (a *app) lockOut(dir string) error {
	if a.locked == nil {
		a.locked = map[string]func(){}
	}
	key := filepath.Clean(dir)
	if _, ok := a.locked[key]; ok {
		return nil
	}
	unlock, err := outdir.Lock(dir)
	if err != nil {
		return fail(exitBadInput, "simrun: %v", err)
	}
	a.locked[key] = unlock
	return nil
}

// unlockAll releases the command's output locks.
func (a *app) unlockAll() {
	for _, u := range a.locked {
		u()
	}
	a.locked = nil
}

// distinctOutputs refuses two output flags naming one file (`--trace X
// --perfetto X`: the second overwrote the first) and an output naming the
// input file (`--trace scenario.yaml` replaced the scenario).
func distinctOutputs(input string, outs map[string]string) error {
	flags := make([]string, 0, len(outs))
	for f, p := range outs {
		if p != "" {
			flags = append(flags, f)
		}
	}
	slices.Sort(flags)
	same := func(a, b string) bool {
		if a == "-" || b == "-" {
			return a == b
		}
		if fa, err := os.Stat(a); err == nil {
			if fb, err := os.Stat(b); err == nil {
				return os.SameFile(fa, fb)
			}
		}
		aa, err1 := filepath.Abs(a)
		ab, err2 := filepath.Abs(b)
		return err1 == nil && err2 == nil && aa == ab
	}
	for i, f := range flags {
		if same(outs[f], input) {
			return fmt.Errorf("%s %s is the input file: writing it would replace the scenario; name another file", f, quoteArg(outs[f]))
		}
		for _, g := range flags[i+1:] {
			if same(outs[f], outs[g]) {
				return fmt.Errorf("%s and %s name the same file %s: one would overwrite the other; name two files", f, g, quoteArg(outs[f]))
			}
		}
	}
	return nil
}
