// Package archtest checks the project's structural rules (DESIGN.md,
// STYLE.md §20) by reading the source: the package import graph points one
// way, and the deterministic core (sim/, model/) never reads the wall clock,
// uses a global random source, starts a goroutine, or ranges over a map.
package archtest

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rebalsim/rebalsim"

// allowed lists, for each package, the module packages it may import.
var allowed = map[string][]string{
	"vtime":                     {},
	"sim":                       {"vtime"},
	"model/protocol":            {"vtime"},
	"model/assign":              {"model/protocol"},
	"model/classic/client":      {"model/protocol", "model/assign", "model/netclient", "vtime"},
	"model/classic/coordinator": {"model/protocol", "vtime"},
	// The consumer group protocol's client and broker sides (KIP-848).
	"model/consumer/client": {"model/protocol", "model/netclient", "vtime"},
	// The network client both protocols' clients share (NetworkClient).
	"model/netclient":            {"model/protocol"},
	"model/consumer/coordinator": {"model/protocol", "model/assign", "vtime"},
	"scenario":                   {"model/assign", "internal/embedded"},
	"harness":                    {"internal/atomicfile", "internal/durfmt", "internal/javarand", "harness/tracing", "sim", "vtime", "model/protocol", "model/assign", "model/classic/client", "model/classic/coordinator", "model/consumer/client", "model/consumer/coordinator", "scenario"},
	// The trace's vocabulary and its readers (explain, Perfetto, timelines):
	// they read a finished trace, never the engine.
	"harness/tracing":     {"internal/atomicfile", "internal/durfmt", "vtime", "model/protocol", "scenario"},
	"experiments":         {"internal/atomicfile", "internal/outdir", "internal/durfmt", "harness", "harness/tracing", "scenario", "experiments/report", "model/protocol", "internal/embedded"},
	"experiments/report":  {"harness/tracing"}, // it draws tracing's timeline data
	"explore":             {"internal/atomicfile", "internal/outdir", "internal/durfmt", "harness", "harness/tracing", "scenario", "sim", "model/protocol"},
	"internal/atomicfile": {},
	"internal/durfmt":     {},
	// java.util.Random and the testbed driver's workload distributions: a
	// matched simulation replays a real member's draws from its driver seed.
	"internal/javarand": {},
	// The guarded output directories (lock, no writing through links).
	"internal/outdir":     {"internal/atomicfile"},
	"internal/embedded":   {},
	"internal/datadriven": {},
	// The partition lists and event lines of the models' script environments.
	"internal/protoscript": {"model/protocol"},
	// Test scenarios and trace helpers shared by harness's and
	// harness/tracing's tests; it must not import harness.
	"internal/simtest":            {"harness/tracing", "model/protocol", "scenario", "vtime"},
	"internal/archtest":           {},
	"internal/kafkatests":         {},
	"internal/kafkatests/extract": {"internal/kafkatests"},
	// The real-Kafka testbed (docs/REAL.md): it drives real processes on the
	// wall clock, reads their logs and fills harness's summary types; no
	// model imports it.
	"realkafka": {"harness", "scenario"},
	// The calibration: the real side through realkafka, the
	// simulated side through harness, figures and intervals from
	// experiments; only cmd/simrun imports it.
	"calibrate": {"internal/atomicfile", "harness", "harness/tracing", "scenario", "experiments", "experiments/report", "model/protocol", "realkafka"},
	// realcompare: simrun real's results beside simrun run, through
	// calibrate's and the experiments' figure definitions.
	"cmd/realcompare": {"calibrate", "experiments", "harness", "realkafka", "scenario"},
	"cmd/simrun":      {"internal/atomicfile", "internal/outdir", "internal/durfmt", "harness", "harness/tracing", "scenario", "experiments", "experiments/report", "model/protocol", "explore", "realkafka", "calibrate"},
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// parseDir parses the non-test Go files of one package directory.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestEveryPackageListed fails on a package of the module that has no entry
// in allowed: a new package must take its place in DESIGN.md's arrows
// before it can be imported (or import anything).
func TestEveryPackageListed(t *testing.T) {
	r := root(t)
	err := filepath.WalkDir(r, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != r && (strings.HasPrefix(name, ".") || name == "testdata" || name == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(r, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if _, ok := allowed[rel]; !ok {
			t.Errorf("package %s (%s) is not in archtest's allowed list: give it its arrows (DESIGN.md)", rel, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportGraph(t *testing.T) {
	fset := token.NewFileSet()
	for pkg, ok := range allowed {
		for _, f := range parseDir(t, fset, filepath.Join(root(t), pkg)) {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == "gonum.org/v1/plot" || strings.HasPrefix(path, "gonum.org/v1/plot/") {
					if pkg != "experiments/report" {
						t.Errorf("%s imports %s: only experiments/report may import gonum/plot", fset.Position(imp.Pos()), path)
					}
				}
				if !strings.HasPrefix(path, module+"/") {
					continue
				}
				dep := strings.TrimPrefix(path, module+"/")
				if !slices.Contains(ok, dep) {
					t.Errorf("%s: %s imports %s, which DESIGN.md's arrows do not allow", fset.Position(imp.Pos()), pkg, dep)
				}
			}
		}
	}
}

// forbidden calls in the deterministic core.
var forbiddenTime = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

func TestDeterministicCore(t *testing.T) {
	core := []string{"vtime", "sim", "model/protocol", "model/assign", "model/netclient", "model/classic/client", "model/classic/coordinator", "model/consumer/coordinator", "model/consumer/client"}
	for _, pkg := range core {
		fset := token.NewFileSet()
		files := parseDir(t, fset, filepath.Join(root(t), pkg))
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		if _, err := conf.Check(module+"/"+pkg, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", pkg, err)
		}
		for _, f := range files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				switch path {
				case "math/rand", "crypto/rand", "sync", "sync/atomic", "os", "net":
					t.Errorf("%s: %s imports %s (no global randomness, threads or I/O in the core)", fset.Position(imp.Pos()), pkg, path)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					t.Errorf("%s: goroutine in %s", fset.Position(n.Pos()), pkg)
				case *ast.SelectorExpr:
					if obj, ok := info.Uses[n.Sel]; ok && obj.Pkg() != nil && obj.Pkg().Path() == "time" && slices.Contains(forbiddenTime, obj.Name()) {
						t.Errorf("%s: time.%s in %s (virtual time only)", fset.Position(n.Pos()), obj.Name(), pkg)
					}
				case *ast.RangeStmt:
					if tv, ok := info.Types[n.X]; ok {
						if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
							t.Errorf("%s: range over a map in %s (iteration order is random; sort the keys)", fset.Position(n.Pos()), pkg)
						}
					}
				}
				return true
			})
		}
	}
}

// maxStructFields bounds the state one struct of model/ may hold: past it,
// a struct's fields stop reading as one of Kafka's classes and every method
// can touch every field. A struct that outgrows it should be split the same way:
// into the parts of the Java class it models.
const maxStructFields = 25

// TestModelStructSize fails on a struct type in a model/ package (named or
// anonymous, non-test code) with more than maxStructFields fields; an
// embedded field counts as one.
func TestModelStructSize(t *testing.T) {
	checked := 0
	for pkg := range allowed {
		if !strings.HasPrefix(pkg, "model/") {
			continue
		}
		fset := token.NewFileSet()
		for _, f := range parseDir(t, fset, filepath.Join(root(t), pkg)) {
			names := map[*ast.StructType]string{}
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if st, ok := ts.Type.(*ast.StructType); ok {
						names[st] = ts.Name.Name
					}
				}
				st, ok := n.(*ast.StructType)
				if !ok {
					return true
				}
				checked++
				if c := structFields(st); c > maxStructFields {
					name := names[st]
					if name == "" {
						name = "anonymous struct"
					}
					t.Errorf("%s: %s.%s has %d fields, more than %d: split it into the parts of the Kafka class it models", fset.Position(st.Pos()), pkg, name, c, maxStructFields)
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no struct found in model/: the walk is broken")
	}
}

// structFields counts a struct's fields: each name of a field list, and one
// per embedded field.
func structFields(st *ast.StructType) int {
	c := 0
	for _, fl := range st.Fields.List {
		c += max(len(fl.Names), 1)
	}
	return c
}

// maxHarnessMethods bounds the methods of one type in harness/: a type
// with more does several jobs, and changing one of them can silently move
// another's figures (the metrics were split into one type per family of
// figures for that reason).
const maxHarnessMethods = 20

// harnessCeilings are the harness types over a budget today, each held at
// its present size so that it can only shrink: world (the engine: wiring,
// dispatch, faults, the network, the migration; its metrics moved out to
// harness's watcher) and GroupSummary (the summary's JSON object, one
// field per figure of docs/INTERFACE.md).
var harnessCeilings = map[string]struct{ fields, methods int }{
	"world":        {26, 75},
	"GroupSummary": {29, 0},
}

// TestHarnessStructSize extends TestModelStructSize's budget to harness/
// and harness/tracing: at most maxStructFields fields per struct and
// maxHarnessMethods methods per type (non-test code), except the
// ceilings above.
func TestHarnessStructSize(t *testing.T) {
	for _, pkg := range []string{"harness", "harness/tracing"} {
		fset := token.NewFileSet()
		fields, methods := map[string]int{}, map[string]int{}
		for _, f := range parseDir(t, fset, filepath.Join(root(t), pkg)) {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.TypeSpec:
					if st, ok := n.Type.(*ast.StructType); ok {
						fields[n.Name.Name] = structFields(st)
					}
				case *ast.FuncDecl:
					if n.Recv != nil {
						typ := n.Recv.List[0].Type
						if s, ok := typ.(*ast.StarExpr); ok {
							typ = s.X
						}
						if id, ok := typ.(*ast.Ident); ok {
							methods[id.Name]++
						}
					}
				}
				return true
			})
		}
		if len(fields) == 0 {
			t.Fatalf("no struct found in %s: the walk is broken", pkg)
		}
		for name, c := range fields {
			limit := maxStructFields
			if ceil, ok := harnessCeilings[name]; ok {
				limit = ceil.fields
			}
			if c > limit {
				t.Errorf("%s.%s has %d fields, more than %d: split it by what its fields are for", pkg, name, c, limit)
			}
		}
		for name, c := range methods {
			limit := maxHarnessMethods
			if ceil, ok := harnessCeilings[name]; ok && ceil.methods > 0 {
				limit = ceil.methods
			}
			if c > limit {
				t.Errorf("%s.%s has %d methods, more than %d: give its parts their own types", pkg, name, c, limit)
			}
		}
	}
}
