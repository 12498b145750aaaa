// Package datadriven reads scripted tests: a text file of cases, each a
// command with arguments, an optional input and the expected output, in the
// format of cockroachdb/datadriven (a small reader of our own: the project
// needs only this much of it, and no new dependency):
//
//	# a comment
//	command arg key=value key=(a b)
//	input lines
//	----
//	expected output lines
//
// The expected output ends at the first blank line. An output that itself
// contains blank lines is written between two "----" lines:
//
//	command
//	----
//	----
//	output
//
//	more output
//	----
//	----
//
// RunTest runs each case in order and compares what the test's function
// returns with the expected output; with rewrite it writes the file back
// with the actual outputs instead (then review the diff).
package datadriven

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Case is one command of a script.
type Case struct {
	Pos      string // file:line of the command
	Cmd      string
	Args     []Arg
	Input    string // the lines between the command and "----", joined with \n
	Expected string // the expected output, ending in \n unless empty
	outStart int    // byte offsets of the expected block in the file
	outEnd   int
}

// Arg is one argument: key, or key=value, or key=(v1 v2 ...).
type Arg struct {
	Key  string
	Vals []string
}

// Val is the argument's first value, "" for a bare key.
func (a Arg) Val() string {
	if len(a.Vals) == 0 {
		return ""
	}
	return a.Vals[0]
}

// Arg returns the first value of argument key and whether it is present.
func (c *Case) Arg(key string) (string, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			return a.Val(), true
		}
	}
	return "", false
}

// Duration is the command's positional duration, its first argument
// ("advance 3s"), as every script environment's clock commands take it.
func (c *Case) Duration() (time.Duration, error) {
	if len(c.Args) == 0 {
		return 0, fmt.Errorf("how long?")
	}
	return time.ParseDuration(c.Args[0].Key)
}

// Parse reads the cases of a script.
func Parse(path, text string) ([]*Case, error) {
	lines := strings.SplitAfter(text, "\n")
	var cases []*Case
	off := 0
	i := 0
	next := func() string {
		l := lines[i]
		off += len(l)
		i++
		return l
	}
	for i < len(lines) {
		line := strings.TrimRight(lines[i], "\n")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			next()
			continue
		}
		c := &Case{Pos: fmt.Sprintf("%s:%d", path, i+1)}
		fields, err := splitArgs(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Pos, err)
		}
		c.Cmd = fields[0].Key
		c.Args = fields[1:]
		next()
		var in []string
		for {
			if i >= len(lines) {
				return nil, fmt.Errorf("%s: %s: no ---- line", c.Pos, c.Cmd)
			}
			l := strings.TrimRight(next(), "\n")
			if l == "----" {
				break
			}
			in = append(in, l)
		}
		c.Input = strings.Join(in, "\n")
		c.outStart = off
		var out []string
		if i < len(lines) && strings.TrimRight(lines[i], "\n") == "----" {
			// The two-separator form.
			next()
			for {
				if i >= len(lines) {
					return nil, fmt.Errorf("%s: %s: output not closed by ----/----", c.Pos, c.Cmd)
				}
				l := strings.TrimRight(next(), "\n")
				if l == "----" && i < len(lines) && strings.TrimRight(lines[i], "\n") == "----" {
					next()
					break
				}
				out = append(out, l)
			}
		} else {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				out = append(out, strings.TrimRight(next(), "\n"))
			}
		}
		c.outEnd = off
		if len(out) > 0 {
			c.Expected = strings.Join(out, "\n") + "\n"
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// splitArgs splits a command line into words: key, key=value, key=(a b c).
func splitArgs(line string) ([]Arg, error) {
	var args []Arg
	s := strings.TrimSpace(line)
	for s != "" {
		end := strings.IndexAny(s, " =")
		if end < 0 {
			args = append(args, Arg{Key: s})
			break
		}
		key := s[:end]
		s = s[end:]
		if s[0] == ' ' {
			args = append(args, Arg{Key: key})
			s = strings.TrimSpace(s)
			continue
		}
		s = s[1:]
		var vals []string
		if strings.HasPrefix(s, "(") {
			close := strings.IndexByte(s, ')')
			if close < 0 {
				return nil, fmt.Errorf("argument %s: no closing )", key)
			}
			vals = strings.Fields(s[1:close])
			s = s[close+1:]
		} else {
			sp := strings.IndexByte(s, ' ')
			if sp < 0 {
				sp = len(s)
			}
			vals = []string{s[:sp]}
			s = s[sp:]
		}
		args = append(args, Arg{Key: key, Vals: vals})
		s = strings.TrimSpace(s)
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return args, nil
}

// format writes one output block back in the script's syntax.
func format(out string) string {
	if out == "" {
		return ""
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if strings.Contains(out, "\n\n") || strings.HasPrefix(out, "\n") {
		return "----\n" + out + "----\n----\n"
	}
	return out
}

// Rewrite is the -rewrite flag of every test binary that reads scripts
// (go test ./model/... -rewrite): RunScripts then writes each script back
// with the actual outputs, and a package's other golden files may follow it
// (one flag per binary, as cockroachdb/datadriven's rewrite flag).
var Rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scripts and golden files in testdata/ (review the diff)")

// RunTest runs the script at path: f gets each case in order and returns
// its output. A mismatch fails the test at the case's line; with rewrite
// the file is written back with the actual outputs.
func RunTest(t *testing.T, path string, rewrite bool, f func(t *testing.T, c *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	cases, err := Parse(path, text)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	last := 0
	for _, c := range cases {
		got := f(t, c)
		if got != "" && !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if rewrite {
			b.WriteString(text[last:c.outStart])
			b.WriteString(format(got))
			last = c.outEnd
			continue
		}
		if got != c.Expected {
			t.Errorf("%s: %s: output differs (go test -rewrite to accept)\n--- want\n%s--- got\n%s", c.Pos, c.Cmd, c.Expected, got)
		}
	}
	if rewrite {
		b.WriteString(text[last:])
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Handler runs one case of a script, writing its output to out; an error
// (a malformed command, a command the environment does not know) fails
// the test at the case's line.
type Handler func(c *Case, out *strings.Builder) error

// RunScripts runs every script matching glob (testdata/*.txt, say) as a
// subtest named after its file, each against a fresh environment from
// newEnv, the one loop every script environment shares (etcd-io/raft's
// datadriven.Walk + InteractionEnv.Handle). Every environment has the
// command _breakpoint, a no-op that prints nothing (a line to set a
// debugger breakpoint on, STYLE.md §14). With -rewrite (Rewrite) each file
// is written back with the actual outputs.
func RunScripts(t *testing.T, glob string, newEnv func(t *testing.T) Handler) {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no script matches %s", glob)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			h := newEnv(t)
			var b strings.Builder
			RunTest(t, path, *Rewrite, func(t *testing.T, c *Case) string {
				b.Reset()
				if c.Cmd == "_breakpoint" {
					return ""
				}
				if err := h(c, &b); err != nil {
					t.Fatalf("%s: %s: %v", c.Pos, c.Cmd, err)
				}
				return b.String()
			})
		})
	}
}
