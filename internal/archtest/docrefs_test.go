package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mdRef finds a Markdown file name cited in code or prose: `docs/TRACE.md`,
// `network-model.md §2`, `../../README.md`.
var mdRef = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b`)

// externalDocs are Markdown files other projects hold, cited by name in
// the specs and the style guide; they are not this repository's to keep.
var externalDocs = []string{
	"INTRODUCTION.md",                                // librdkafka's, kafka-consumer-protocol.md §3.9
	"KNOWN_DIFFERENCES.md",                           // franz-go kfake's, conformance/kfake
	"docs/internals/vopr.md",                         // TigerBeetle's, STYLE.md
	"docs/ARCHITECTURE.md",                           // TigerBeetle's, STYLE.md
	"docs/operations/consumer-rebalance-protocol.md", // Apache Kafka's site, kafka-consumer-protocol.md
	"TIGER_STYLE.md",                                 // TigerBeetle's, STYLE.md
	"docs/internals/testing.md",                      // TigerBeetle's, STYLE.md
	"CONTRIBUTING.md",                                // etcd's, STYLE.md
	"design.md",                                      // etcd raft's, STYLE.md
	"fuzzy/readme.md",                                // gonum's, STYLE.md
	"DIR/REPORT.md",                                  // a placeholder in help text: an experiment's output
	"REPORT.md",                                      // the report an experiment writes into its output directory
}

// TestMarkdownReferencesResolve: every Markdown file the code or the docs
// cite exists in the repository, so a reader who follows "see
// network-model.md §2" finds it: the specs the code cites are kept inside
// docs/. A name is looked up beside the citing
// file, at the root, and in docs/.
func TestMarkdownReferencesResolve(t *testing.T) {
	r := root(t)
	var missing []string
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") && path != r {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		for i, line := range strings.Split(string(b), "\n") {
			for _, ref := range mdRef.FindAllString(line, -1) {
				if strings.Contains(ref, "://") || slices.Contains(externalDocs, ref) ||
					// an experiment's report in an output directory (the
					// committed ones are under results/ and are checked)
					strings.HasSuffix(ref, "/REPORT.md") && !strings.Contains(ref, "results/") ||
					strings.Contains(line, "github.com/") && !strings.Contains(line, "rebalsim") {
					continue
				}
				if !resolves(r, filepath.Dir(path), ref) {
					missing = append(missing, rel+":"+itoa(i+1)+": "+ref)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("cited Markdown file not in the repository: %s", m)
	}
}

// resolves reports whether ref names a file inside the repository (a
// path that leaves it, such as ../shared/..., does not count: a clone
// has nothing beside it).
func resolves(root, dir, ref string) bool {
	for _, base := range []string{dir, root, filepath.Join(root, "docs")} {
		p := filepath.Join(base, ref)
		if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
