package datadriven

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const script = `# comment
echo a b=c d=(e f)
hello
----
hello
b=c d=e,f

blank
----
----
x

y
----
----

empty
----
`

func TestParse(t *testing.T) {
	cases, err := Parse("s", script)
	require.NoError(t, err)
	require.Len(t, cases, 3)
	c := cases[0]
	require.Equal(t, "echo", c.Cmd)
	require.Equal(t, "s:2", c.Pos)
	require.Equal(t, "hello", c.Input)
	require.Equal(t, "hello\nb=c d=e,f\n", c.Expected)
	v, ok := c.Arg("b")
	require.True(t, ok)
	require.Equal(t, "c", v)
	_, ok = c.Arg("a")
	require.True(t, ok)
	require.Equal(t, []string{"e", "f"}, c.Args[2].Vals)
	require.Equal(t, "x\n\ny\n", cases[1].Expected)
	require.Equal(t, "", cases[2].Expected)
}

func TestParseErrors(t *testing.T) {
	_, err := Parse("s", "cmd\nno separator\n")
	require.ErrorContains(t, err, "s:1: cmd: no ---- line")
	_, err = Parse("s", "cmd a=(b\n----\n")
	require.ErrorContains(t, err, "no closing )")
	_, err = Parse("s", "cmd\n----\n----\nopen\n")
	require.ErrorContains(t, err, "not closed")
}

// Rewriting writes the actual outputs in place and keeps everything else;
// reading the result back passes.
func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.txt")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	out := func(_ *testing.T, c *Case) string {
		switch c.Cmd {
		case "echo":
			return strings.ToUpper(c.Input)
		case "blank":
			return "p\n\nq"
		}
		return ""
	}
	RunTest(t, path, true, out)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	want := strings.Replace(script, "hello\nb=c d=e,f\n", "HELLO\n", 1)
	want = strings.Replace(want, "x\n\ny\n", "p\n\nq\n", 1)
	require.Equal(t, want, string(data))
	RunTest(t, path, false, out)
}

// The argument accessors the script environments share: a key's first
// value ("" for a bare key) and the positional duration of a clock command.
func TestArgAccessors(t *testing.T) {
	cases, err := Parse("s", "advance 3s flag k=(v w)\n----\n\nadvance\n----\n\nadvance soon\n----\n")
	require.NoError(t, err)
	require.Len(t, cases, 3)
	c := cases[0]
	d, err := c.Duration()
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, d)
	require.Equal(t, "", c.Args[1].Val())
	require.Equal(t, "v", c.Args[2].Val())
	v, ok := c.Arg("flag")
	require.True(t, ok)
	require.Equal(t, "", v)
	_, err = cases[1].Duration()
	require.EqualError(t, err, "how long?")
	_, err = cases[2].Duration()
	require.Error(t, err)
}

// RunScripts gives every environment the _breakpoint no-op (STYLE.md §14):
// the handler never sees it, and it prints nothing.
func TestRunScriptsBreakpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bp.txt")
	require.NoError(t, os.WriteFile(path, []byte("_breakpoint\n----\n\necho hi\n----\nhi\n"), 0o644))
	var seen []string
	RunScripts(t, filepath.Join(dir, "*.txt"), func(t *testing.T) Handler {
		return func(c *Case, b *strings.Builder) error {
			seen = append(seen, c.Cmd)
			b.WriteString(c.Args[0].Key)
			return nil
		}
	})
	require.Equal(t, []string{"echo"}, seen)
}
