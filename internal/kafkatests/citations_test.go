package kafkatests

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Goal: every Kafka test a Go test or a test's data cites exists at the
// release named beside it. Method: read the committed list (extracted from
// the Kafka sources by ./extract) and every comment and string literal of
// the repository's *_test.go files, every "#" comment line of its test
// scripts (testdata/**/*.txt) and every line of its test scenario files
// (testdata/**/*.yaml); a structured citation "Kafka: Class.method @tag"
// must be in the list at that tag, and a bare Kafka-style test name
// (JUnit's testXxx and the Scala coordinator tests' shouldXxx) that is not
// a Go identifier of the package must be in the list at some tag, in its
// class when one is written before it (GroupCoordinatorTest.shouldXxx).

var (
	citationRe = regexp.MustCompile(`Kafka: ([A-Z][A-Za-z0-9]*)\.([A-Za-z_][A-Za-z0-9_]*) @([0-9][0-9A-Za-z.\-]*[0-9A-Za-z])`)
	// A name after a class that is not a test class (a production
	// method such as AbstractMembershipManager.shouldSkipHeartbeat) is
	// not a test name: the match takes the class, and the scan skips it.
	bareRe = regexp.MustCompile(`\b(?:([A-Z][A-Za-z0-9]*)\.)?((?:test|should)[A-Z][A-Za-z0-9_]*)`)
)

type list struct {
	at      map[string]bool // tag|class|method
	any     map[string]bool // method
	inClass map[string]bool // class|method, at any tag
	tags    map[string]bool
}

func loadList(t *testing.T) list {
	f, err := os.Open("testdata/kafka-tests.tsv")
	require.NoError(t, err)
	defer f.Close()
	entries, err := Parse(f)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	l := list{at: map[string]bool{}, any: map[string]bool{}, inClass: map[string]bool{}, tags: map[string]bool{}}
	for _, e := range entries {
		l.at[e.Tag+"|"+e.Class+"|"+e.Method] = true
		l.any[e.Method] = true
		l.inClass[e.Class+"|"+e.Method] = true
		l.tags[e.Tag] = true
	}
	return l
}

// citation is one Kafka test name found in a Go test file or test data.
type citation struct {
	pos                string
	class, method, tag string // tag empty for a bare name; class too unless written before it
}

// scanFile returns the citations in the comments and string literals of one
// Go file, skipping bare names that are identifiers declared in the package.
func scanFile(path string, src []byte, local map[string]bool) []citation {
	fset := token.NewFileSet()
	file := fset.AddFile(path, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var out []citation
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.COMMENT && tok != token.STRING {
			continue
		}
		out = appendCitations(out, fset.Position(pos).String(), lit, local)
	}
	return out
}

// appendCitations appends the citations in text (at p): the structured
// ones, and the bare Kafka-style test names that are neither structured
// nor identifiers in local.
func appendCitations(out []citation, p, text string, local map[string]bool) []citation {
	structured := map[string]bool{}
	for _, m := range citationRe.FindAllStringSubmatch(text, -1) {
		out = append(out, citation{pos: p, class: m[1], method: m[2], tag: m[3]})
		structured[m[2]] = true
	}
	for _, m := range bareRe.FindAllStringSubmatch(text, -1) {
		if m[1] != "" && !strings.HasSuffix(m[1], "Test") {
			continue // Class.shouldX of a production class
		}
		if w := m[2]; !structured[w] && !local[w] {
			out = append(out, citation{pos: p, class: m[1], method: w})
		}
	}
	return out
}

// scanScript finds the citations in the "#" comment lines of a test script
// (every line of a YAML scenario: comments and values are test data).
func scanScript(path string, src []byte, local map[string]bool) []citation {
	var out []citation
	yaml := strings.HasSuffix(path, ".yaml")
	for i, line := range strings.Split(string(src), "\n") {
		if !yaml && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		out = appendCitations(out, path+":"+strconv.Itoa(i+1), line, local)
	}
	return out
}

// declared lists the identifiers declared at package level or as functions
// in the Go files of dir (test helpers such as testConfig are not Kafka names).
func declared(t *testing.T, dir string) map[string]bool {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if n.Name != "_" {
						out[n.Name] = true
					}
				}
				return true
			})
		}
	}
	return out
}

func repoCitations(t *testing.T) []citation {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	byDir := map[string][]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "results" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			if d.Name() == "testdata" {
				pkg := filepath.Dir(p)
				err := filepath.WalkDir(p, func(q string, e fs.DirEntry, err error) error {
					if err == nil && !e.IsDir() && (strings.HasSuffix(q, ".txt") || strings.HasSuffix(q, ".yaml")) {
						byDir[pkg] = append(byDir[pkg], q)
					}
					return err
				})
				if err != nil {
					return err
				}
			}
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(p, "citations_test.go") {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return nil
	})
	require.NoError(t, err)
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var out []citation
	for _, d := range dirs {
		local := declared(t, d)
		for _, p := range byDir[d] {
			src, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			if !strings.HasSuffix(p, ".go") {
				out = append(out, scanScript(rel, src, local)...)
				continue
			}
			out = append(out, scanFile(rel, src, local)...)
		}
	}
	return out
}

func TestCitationsExist(t *testing.T) {
	l := loadList(t)
	cites := repoCitations(t)
	structured := 0
	for _, c := range cites {
		if c.tag == "" {
			switch {
			case c.class != "" && !l.inClass[c.class+"|"+c.method]:
				t.Errorf("%s: %s.%s is not a test method of any listed Kafka release (testdata/kafka-tests.tsv)", c.pos, c.class, c.method)
			case !l.any[c.method]:
				t.Errorf("%s: %s is not a test method of any listed Kafka release (testdata/kafka-tests.tsv)", c.pos, c.method)
			}
			continue
		}
		structured++
		if !l.tags[c.tag] {
			t.Errorf("%s: Kafka: %s.%s @%s: tag %s is not in the list; add it with ./extract", c.pos, c.class, c.method, c.tag, c.tag)
			continue
		}
		if !l.at[c.tag+"|"+c.class+"|"+c.method] {
			t.Errorf("%s: Kafka: %s.%s @%s does not exist at that tag", c.pos, c.class, c.method, c.tag)
		}
	}
	require.Greater(t, structured, 50, "the structured citations were not found; is the scanner broken?")
}

// The scanner finds a structured citation and bare names (testXxx and the
// Scala tests' shouldXxx, with their class when written), and skips Go
// identifiers of the package and methods of production classes.
func TestScanFile(t *testing.T) {
	src := []byte("package x\n// Kafka: GroupCoordinatorTest.testFoo @3.6.1 and testBar\nvar s = \"testBaz testHelper\"\n" +
		"// shouldResetFoo and GroupCoordinatorTest.shouldBar, not shouldn't\n" +
		"// nor AbstractMembershipManager.shouldSkipHeartbeat (production code)\n")
	got := scanFile("x_test.go", src, map[string]bool{"testHelper": true})
	require.Equal(t, []citation{
		{pos: "x_test.go:2:1", class: "GroupCoordinatorTest", method: "testFoo", tag: "3.6.1"},
		{pos: "x_test.go:2:1", method: "testBar"},
		{pos: "x_test.go:3:9", method: "testBaz"},
		{pos: "x_test.go:4:1", method: "shouldResetFoo"},
		{pos: "x_test.go:4:1", class: "GroupCoordinatorTest", method: "shouldBar"},
	}, got)
}

// The check this file runs flags a bare should… name that no release has:
// the Scala test is GroupCoordinatorTest
// .shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance
// (@2.2.0 … @3.7.0), never "…DuringInitialRebalance", a name that was
// cited once and never existed.
func TestBareShouldNamesChecked(t *testing.T) {
	l := loadList(t)
	src := []byte("package x\n// shouldResetRebalanceDelayWhenNewMemberJoinsGroupDuringInitialRebalance\n" +
		"// GroupCoordinatorTest.shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance\n")
	got := scanFile("x_test.go", src, nil)
	require.Len(t, got, 2)
	require.False(t, l.any[got[0].method], "the wrong name is not in any release")
	require.True(t, l.inClass[got[1].class+"|"+got[1].method], "the right one is, in its class")
}

// A script's citations are read from its "#" comment lines only.
func TestScanScript(t *testing.T) {
	src := []byte("# Kafka: AbstractCoordinatorTest.testFoo @3.7.0\n# and testBar\nrespond testBaz\n----\n")
	got := scanScript("s.txt", src, nil)
	require.Equal(t, []citation{
		{pos: "s.txt:1", class: "AbstractCoordinatorTest", method: "testFoo", tag: "3.7.0"},
		{pos: "s.txt:2", method: "testBar"},
	}, got)
}

// The extractor finds annotated test methods in Java and Scala.
func TestMethods(t *testing.T) {
	java := "class T {\n  @Test\n  public void testA() {}\n  @ParameterizedTest\n  @ValueSource(booleans = {true})\n  public void testB(boolean x) throws Exception {}\n  private void helper() {}\n}\n"
	got, err := Methods(strings.NewReader(java), false)
	require.NoError(t, err)
	require.Equal(t, []string{"testA", "testB"}, got)
	scala := "class T {\n  @Test\n  def testC(): Unit = {}\n  @Test def testD(): Unit = {}\n  def helper(): Unit = {}\n}\n"
	got, err = Methods(strings.NewReader(scala), true)
	require.NoError(t, err)
	require.Equal(t, []string{"testC", "testD"}, got)
}
