package main

// TestCLIDocumented's goal: a command or an exit status a user can meet is
// written in every place a reader looks for it. Method: the commands are
// read from the cobra tree newRoot builds (so a command added with
// register, such as a new one in its own file, is covered without editing
// this test) and the exit statuses from the package's exit* constants (read
// from the source, so a new constant is covered too); each must appear in
// main.go's package doc, in DESIGN.md's cmd/simrun entry, in INTERFACE.md's
// CLI section, and (statuses) in exitCodesHelp.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cliCommands lists the user-facing commands: every registered command
// that is not hidden, plus cobra's completion command; help aside.
func cliCommands(t *testing.T) []string {
	t.Helper()
	root := newRoot(&app{})
	root.InitDefaultCompletionCmd()
	var names []string
	for _, c := range root.Commands() {
		if !c.Hidden && c.Name() != "help" {
			names = append(names, c.Name())
		}
	}
	require.Contains(t, names, "completion", "cobra's completion command is listed")
	return names
}

// exitCodes reads the exit* integer constants of the package's non-test
// files, and the package doc comment.
func exitCodes(t *testing.T) (codes map[string]int, doc string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	codes = map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		if name == "main.go" {
			doc = f.Doc.Text()
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "exit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.INT {
						continue
					}
					v, err := strconv.Atoi(lit.Value)
					require.NoError(t, err)
					codes[n.Name] = v
				}
			}
		}
	}
	require.NotEmpty(t, doc, "main.go has a package doc")
	require.Contains(t, codes, "exitFailOn", "the walk finds the exit* constants")
	return codes, doc
}

// section returns the text of a Markdown file from the line that matches
// start up to the next line that matches end (or the end of the file).
func section(t *testing.T, path string, start, end *regexp.Regexp) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	from := slices.IndexFunc(lines, start.MatchString)
	require.GreaterOrEqual(t, from, 0, "%s: no line matches %s", path, start)
	to := len(lines)
	if i := slices.IndexFunc(lines[from+1:], end.MatchString); i >= 0 {
		to = from + 1 + i
	}
	return strings.Join(lines[from:to], "\n")
}

func TestCLIDocumented(t *testing.T) {
	codes, doc := exitCodes(t)
	design := section(t, "../../docs/DESIGN.md", regexp.MustCompile(`^cmd/simrun/ `), regexp.MustCompile(`^\S`))
	iface := section(t, "../../docs/INTERFACE.md", regexp.MustCompile(`^## The CLI`), regexp.MustCompile(`^## `))
	for _, name := range cliCommands(t) {
		cmd := regexp.MustCompile(`(?m)\bsimrun\s+` + regexp.QuoteMeta(name) + `\b`)
		if !cmd.MatchString(doc) {
			t.Errorf("main.go's package doc has no synopsis line `simrun %s`", name)
		}
		if !cmd.MatchString(iface) {
			t.Errorf("INTERFACE.md's CLI section has no `simrun %s`", name)
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(design) {
			t.Errorf("DESIGN.md's cmd/simrun entry does not list %s", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(codes)) {
		c := strconv.Itoa(codes[name])
		if !regexp.MustCompile(`(?m)^  ` + c + ` +\S`).MatchString(exitCodesHelp) {
			t.Errorf("exitCodesHelp does not explain exit status %s (%s)", c, name)
		}
		if !regexp.MustCompile(`(?m)^\| ` + c + ` \|`).MatchString(iface) {
			t.Errorf("INTERFACE.md's exit-status table has no row for %s (%s)", c, name)
		}
		if !regexp.MustCompile(`\b` + c + ` [a-z]`).MatchString(doc) {
			t.Errorf("main.go's package doc does not explain exit status %s (%s)", c, name)
		}
		if !regexp.MustCompile(`\b` + c + ` [a-z]`).MatchString(design) {
			t.Errorf("DESIGN.md's cmd/simrun entry does not explain exit status %s (%s)", c, name)
		}
	}
}
