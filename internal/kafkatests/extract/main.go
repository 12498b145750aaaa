// Command extract lists the JUnit test methods of the Kafka test classes
// rebalsim ports (kafkatests.Classes), per release tag, from a Kafka git
// directory, and merges them into the committed list.
//
// internal/kafkatests/extract.sh runs it for every tag the repository cites.
// Usage (from the repository root):
//
//	go run ./internal/kafkatests/extract -git-dir /path/to/apache/kafka/.git \
//	    -repo apache/kafka -tags 0.10.0.1,2.8.1,3.6.1 -out internal/kafkatests/testdata/kafka-tests.tsv
//	go run ./internal/kafkatests/extract -git-dir /path/to/confluentinc/kafka/.git \
//	    -repo confluentinc/kafka -tags 4.0.0=v8.0.0,4.1.0=v8.1.0 -out ...
//
// A tag "A=B" records Apache release A read from git tag B. Entries of the
// named tags already in -out are replaced; others are kept. The sources are
// read with `git ls-tree` and `git show`, so a bare mirror works.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/rebalsim/rebalsim/internal/kafkatests"
)

func main() {
	gitDir := flag.String("git-dir", "", "Kafka git directory (bare mirrors work)")
	repo := flag.String("repo", "apache/kafka", "repository name recorded in the list")
	tags := flag.String("tags", "", "comma-separated release tags; A=B reads git tag B as release A")
	out := flag.String("out", "internal/kafkatests/testdata/kafka-tests.tsv", "list to merge into")
	flag.Parse()
	if *gitDir == "" || *tags == "" {
		fmt.Fprintln(os.Stderr, "extract: -git-dir and -tags are required")
		os.Exit(2)
	}
	if err := run(*gitDir, *repo, strings.Split(*tags, ","), *out); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

func git(gitDir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return b, nil
}

func run(gitDir, repo string, tags []string, out string) error {
	var existing []kafkatests.Entry
	if f, err := os.Open(out); err == nil {
		existing, err = kafkatests.Parse(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", out, err)
		}
	}
	replace := map[string]bool{}
	var fresh []kafkatests.Entry
	for _, t := range tags {
		release, gitTag, ok := strings.Cut(strings.TrimSpace(t), "=")
		if !ok {
			gitTag = release
		}
		replace[release] = true
		ls, err := git(gitDir, "ls-tree", "-r", "--name-only", gitTag)
		if err != nil {
			return err
		}
		for _, p := range strings.Split(strings.TrimSpace(string(ls)), "\n") {
			if !kafkatests.IsTestFile(p) {
				continue
			}
			src, err := git(gitDir, "show", gitTag+":"+p)
			if err != nil {
				return err
			}
			methods, err := kafkatests.Methods(bytes.NewReader(src), strings.HasSuffix(p, ".scala"))
			if err != nil {
				return fmt.Errorf("%s:%s: %v", gitTag, p, err)
			}
			class := p[strings.LastIndex(p, "/")+1 : strings.LastIndex(p, ".")]
			for _, m := range methods {
				fresh = append(fresh, kafkatests.Entry{Tag: release, Source: repo + "@" + gitTag, Path: p, Class: class, Method: m})
			}
		}
	}
	var all []kafkatests.Entry
	for _, e := range existing {
		if !replace[e.Tag] {
			all = append(all, e)
		}
	}
	all = append(all, fresh...)
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Tag != b.Tag {
			return a.Tag < b.Tag
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := kafkatests.Format(f, all); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
