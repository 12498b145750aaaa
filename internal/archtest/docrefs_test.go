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
// the specs and the style guide; they are not this repository's to keep,
// and a section cited in them ("§ Determinism") is not checked either.
var externalDocs = []string{
	"INTRODUCTION.md",                                // librdkafka's, kafka-consumer-protocol.md §3.9
	"KNOWN_DIFFERENCES.md",                           // franz-go kfake's, conformance/kfake
	"docs/internals/vopr.md",                         // TigerBeetle's, STYLE.md
	"docs/ARCHITECTURE.md",                           // TigerBeetle's, STYLE.md
	"docs/operations/consumer-rebalance-protocol.md", // Apache Kafka's site, kafka-consumer-protocol.md
	"TIGER_STYLE.md",                                 // TigerBeetle's, STYLE.md
	"docs/internals/testing.md",                      // TigerBeetle's, STYLE.md
	"CONTRIBUTING.md",                                // gonum's, STYLE.md
	"design.md",                                      // etcd raft's, STYLE.md
	"fuzzy/readme.md",                                // hashicorp raft's, STYLE.md
	"DIR/REPORT.md",                                  // a placeholder in help text: an experiment's output
	"REPORT.md",                                      // the report an experiment writes into its output directory
}

// citingFile reports whether a file's text is read for references: the
// code, the docs, and the scripts, scenarios and test scripts beside them.
func citingFile(name string) bool {
	for _, ext := range []string{".go", ".md", ".sh", ".txt", ".yaml", ".yml", ".java"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// reference is one Markdown file name cited in the repository.
type reference struct {
	file string // the citing file, relative to the root
	line int    // 1-based
	ref  string // the name as cited
	// at is what follows the name, with the next line joined on (a
	// comment's "//" or "#" removed), so that a section cited across a
	// line break is seen.
	at string
}

// references lists every Markdown file name cited in the repository's
// code and docs that is this repository's to resolve: not a URL, not
// another project's file (externalDocs, or a line that cites another
// project's repository), not an experiment's report in an output directory.
func references(t *testing.T) []reference {
	t.Helper()
	r := root(t)
	var refs []reference
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
		if !citingFile(name) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			next := ""
			if i+1 < len(lines) {
				next = strings.TrimSpace(lines[i+1])
				next = strings.TrimSpace(strings.TrimLeft(next, "/#*"))
			}
			for _, loc := range mdRef.FindAllStringIndex(line, -1) {
				ref := line[loc[0]:loc[1]]
				if loc[0] > 0 && (line[loc[0]-1] == '$' || line[loc[0]-1] == '}') {
					// "$repo/deploy/README.md": a shell variable stands for
					// the checkout's root.
					_, ref, _ = strings.Cut(ref, "/")
				}
				if strings.Contains(line[max(loc[0]-3, 0):loc[0]], "://") || slices.Contains(externalDocs, ref) ||
					// an experiment's report in an output directory (the
					// committed ones are under results/ and are checked)
					strings.HasSuffix(ref, "/REPORT.md") && !strings.Contains(ref, "results/") ||
					strings.Contains(line, "github.com/") && !strings.Contains(line, "rebalsim") {
					continue
				}
				refs = append(refs, reference{file: rel, line: i + 1, ref: ref, at: line[loc[1]:] + " " + next})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("no Markdown reference found: the walk is broken")
	}
	return refs
}

// TestMarkdownReferencesResolve: every Markdown file the code or the docs
// cite exists in the repository, so a reader who follows "see
// network-model.md §2" finds it: the specs the code cites are kept inside
// docs/. A name is looked up beside the citing file, at the root, and in
// docs/.
func TestMarkdownReferencesResolve(t *testing.T) {
	r := root(t)
	for _, ref := range references(t) {
		if resolve(r, filepath.Join(r, filepath.Dir(ref.file)), ref.ref) == "" {
			t.Errorf("%s:%d: cited Markdown file not in the repository: %s", ref.file, ref.line, ref.ref)
		}
	}
}

// sectionCite reads the sections cited right after a file name:
// "§2.2", "§12–§14", "§2.7, §3.7", "§6.3 and §7", "§ Determinism",
// `§"Upgrade and Downgrade"`. Group 1 is the list of numbers, group 2 a
// quoted name, group 3 a name in words.
var sectionCite = regexp.MustCompile(`^[` + "`" + `*'"\])]*\s*(?:\(\s*)?§\s*` +
	`(?:(\d+(?:\.\d+)*(?:\s*(?:,|and|or|–|-)\s*§\s*\d+(?:\.\d+)*)*)|"([^"]+)"|([A-Z][A-Za-z-]*(?: [A-Z][A-Za-z-]*)*))`)

// sectionNumber finds one section number in a citation's list.
var sectionNumber = regexp.MustCompile(`\d+(?:\.\d+)*`)

// TestMarkdownSectionsResolve: every citation of a numbered or named
// section of a Markdown file in the code or the docs ("network-model.md
// §2.2", "STYLE.md §14") names a section the file has, so a renumbered spec
// cannot leave its citations pointing at the wrong text. A numbered
// section is a heading that starts with the number ("### 2.2 Connection
// state machine"), or, in a file without numbered headings, a numbered
// top-level list item (STYLE.md's practices, "14. **Scenario tests …**");
// a named section is a heading that contains the name.
func TestMarkdownSectionsResolve(t *testing.T) {
	problems, checked := checkSections(t, references(t))
	for _, p := range problems {
		t.Error(p)
	}
	if checked == 0 {
		t.Fatal("no section citation found: the pattern is broken")
	}
	t.Logf("%d section citations checked", checked)
}

// TestMarkdownSectionsFire shows the check above can fail: citations of
// sections that do not exist, by number, in a range and by name.
func TestMarkdownSectionsFire(t *testing.T) {
	at := reference{file: "internal/archtest/docrefs_test.go", line: 1, ref: "network-model.md"}
	cases := []struct{ at, want string }{
		{" §2.2 (exists)", ""},
		{"` §6.3 and §7", ""},
		{" §2.9", "network-model.md has no section §2.9"},
		{" §6–§10", "network-model.md has no section §10"},
		{" § Worked timelines", ""},
		{" § Timeline Catalogue", `network-model.md has no section named "Timeline Catalogue"`},
		{" § (next line)", "a section citation this test cannot read"},
	}
	for _, c := range cases {
		at.at = c.at
		problems, _ := checkSections(t, []reference{at})
		got := strings.Join(problems, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.at, got, c.want)
		}
	}
}

// checkSections returns a line per section citation among refs that does
// not resolve, and how many citations it checked.
func checkSections(t *testing.T, refs []reference) (problems []string, checked int) {
	t.Helper()
	r := root(t)
	for _, ref := range refs {
		where := ref.file + ":" + itoa(ref.line) + ": "
		m := sectionCite.FindStringSubmatch(ref.at)
		if m == nil {
			if strings.HasPrefix(strings.TrimLeft(ref.at, "`*'\")] "), "§") {
				problems = append(problems, where+ref.ref+": a section citation this test cannot read: "+ref.at)
			}
			continue
		}
		path := resolve(r, filepath.Join(r, filepath.Dir(ref.file)), ref.ref)
		if path == "" {
			continue // TestMarkdownReferencesResolve reports it
		}
		numbers, headings := sections(t, path)
		checked++
		if m[1] != "" {
			for _, n := range sectionNumber.FindAllString(m[1], -1) {
				if !slices.Contains(numbers, n) {
					problems = append(problems, where+ref.ref+" has no section §"+n)
				}
			}
			continue
		}
		name := m[2] + m[3]
		if !slices.ContainsFunc(headings, func(h string) bool { return strings.Contains(strings.ToLower(h), strings.ToLower(name)) }) {
			problems = append(problems, where+ref.ref+` has no section named "`+name+`"`)
		}
	}
	return problems, checked
}

var (
	numberedHeading = regexp.MustCompile(`^#+\s+(?:§\s*)?(\d+(?:\.\d+)*)\.?\s`)
	heading         = regexp.MustCompile(`^#+\s+(.*)$`)
	numberedItem    = regexp.MustCompile(`^(\d+)\.\s`)
)

// sections lists the section numbers and the heading texts of a Markdown
// file (fenced code blocks skipped).
func sections(t *testing.T, path string) (numbers, headings []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			headings = append(headings, m[1])
		}
		if m := numberedHeading.FindStringSubmatch(line); m != nil {
			numbers = append(numbers, m[1])
		}
		if m := numberedItem.FindStringSubmatch(line); m != nil {
			items = append(items, m[1])
		}
	}
	if len(numbers) == 0 {
		numbers = items
	}
	return numbers, headings
}

// resolve returns the path of the file ref names inside the repository,
// or "" (a path that leaves it, such as ../shared/..., does not count: a
// clone has nothing beside it).
func resolve(root, dir, ref string) string {
	for _, base := range []string{dir, root, filepath.Join(root, "docs")} {
		p := filepath.Join(base, ref)
		if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
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
