package archtest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/nishanths/exhaustive/passes/exhaustive"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// This file runs the exhaustive analyzer (github.com/nishanths/exhaustive)
// over model/ and its tests from `go test`, as STYLE.md §7 asks: a switch on
// one of the model's enums (an error code, a member or group state, a
// rejoin reason) lists every value, and a `default:` does not count as
// listing the rest (the analyzer's -d, golangci-lint's
// default-signifies-exhaustive, is false). So a new error code or state
// cannot be absorbed by a `default:` silently: each switch that would see
// it fails this test until someone decides what it means there. franz-go
// runs the same analyzer from its .golangci.yml; a test instead of a lint
// config keeps `go test ./...` the one command that enforces every rule.

// exhaustiveFindings loads the packages matching patterns (their tests
// included) from the repository root and returns the analyzer's findings
// as "file:line: message", file relative to the root, sorted.
func exhaustiveFindings(t *testing.T, patterns ...string) []string {
	t.Helper()
	r := root(t)
	for flag, value := range map[string]string{
		"d":     "false",  // a default: case does not stand for the missing ones
		"check": "switch", // expression switches (type switches over interfaces are open sets)
	} {
		if err := exhaustive.Analyzer.Flags.Set(flag, value); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: r, Tests: true}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the packages do not load")
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{exhaustive.Analyzer}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// With Tests, a package is loaded twice (alone and with its _test.go
	// files): the same switch is reported once.
	var findings []string
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			t.Fatalf("%s: %v", act, act.Err)
		}
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			rel, err := filepath.Rel(r, p.Filename)
			if err != nil {
				rel = p.Filename
			}
			f := rel + ":" + itoa(p.Line) + ": " + d.Message
			if !slices.Contains(findings, f) {
				findings = append(findings, f)
			}
		}
	}
	slices.Sort(findings)
	return findings
}

// TestModelSwitchesExhaustive: every enum switch in model/ and its tests
// names every value of the enum.
func TestModelSwitchesExhaustive(t *testing.T) {
	for _, f := range exhaustiveFindings(t, "./model/...") {
		t.Errorf("%s (list the missing values; a default: does not count)", f)
	}
}

// TestExhaustiveFiresOnDefault shows the check above can fail: the testdata
// package's switch has a default: and misses one value of its enum.
func TestExhaustiveFiresOnDefault(t *testing.T) {
	got := exhaustiveFindings(t, "./internal/archtest/testdata/nonexhaustive")
	want := []string{"internal/archtest/testdata/nonexhaustive/nonexhaustive.go:22: missing cases in expression switch: RebalanceInProgress"}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n got %q\nwant %q", got, want)
	}
}
