package main

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/internal/outdir"
)

// Hostile and careless input on the command line: each case once crashed,
// hung or was silently altered.

// TestExplainMemberThatNeverExists (item 12): --member payments-999 exited
// 0 with nothing to explain, while --member nobody-9 was an error.
func TestExplainMemberThatNeverExists(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"explain", "crash-one-member", "--member", "payments-999"}, &out, &errb)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errb.String(), `member "payments-999" never exists: group payments has members payments-0 to payments-11`)
}

// TestRunWarnsOfFaultAfterEnd (item 11): the warning reaches stderr.
func TestRunWarnsOfFaultAfterEnd(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"run", "../../scenario/testdata/hostile/fault-after-end.yaml", "--json"}, &out, &errb)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errb.String(), "warning: ../../scenario/testdata/hostile/fault-after-end.yaml:7: faults[0].at: 1m30s is not before the end of the run")
}

// TestTraceIntoSymlinkAndStdout (item 1): --trace follows a symlink instead
// of replacing it, and "-" writes to standard output.
func TestTraceIntoSymlinkAndStdout(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.jsonl")
	require.NoError(t, os.WriteFile(target, nil, 0o644))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(target, link))
	var out, errb bytes.Buffer
	code := dispatch([]string{"run", "crash-one-member", "--json", "--trace", link}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type())
	b, _ := os.ReadFile(target)
	assert.Contains(t, string(b), `"kind"`)

	code = dispatch([]string{"run", "crash-one-member", "--max-events", "1000"}, &out, &errb)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errb.String(), "raise the limit with --max-events")
}

// hostileCase is one hostile or careless command line of the table below:
// the files it needs (written into a fresh directory, "DIR" in args and
// files standing for it), the exit status and the words its message must
// have. Every message must be clean: no control character but newline and
// tab reaches the terminal.
type hostileCase struct {
	name  string
	item  int
	files map[string]string // name -> contents ("->target": a symlink)
	setup func(t *testing.T, dir string)
	args  []string
	code  int
	want  []string // in stderr
	check func(t *testing.T, dir, stdout, stderr string)
}

var hostileCases = []hostileCase{
	// Item 2: names are checked.
	{name: "oracle typo", item: 2, args: []string{"explore", "crash-one-member", "--swarm", "default", "--set", "duration=900s", "--seeds", "3000", "--oracle", "unowned-at-endd"},
		code: exitBadInput, want: []string{`--oracle: unknown oracle or checker "unowned-at-endd" (did you mean unowned-at-end?); known: group-stuck,`, "single-owner-per-generation"}},
	{name: "oracle empty entry", item: 2, args: []string{"explore", "crash-one-member", "--swarm", "default", "--set", "duration=900s", "--oracle", "liveness,"},
		code: exitBadInput, want: []string{"an empty name in the list"}},
	{name: "without typo", item: 2, args: []string{"explore", "crash-one-member", "--swarm", "default", "--set", "duration=900s", "--without", "crash,pauze"},
		code: exitBadInput, want: []string{`--without: unknown fault kind "pauze" (did you mean pause?); known: crash, restart, pause,`}},
	{name: "fail-on typo", item: 2, args: []string{"run", "crash-one-member", "--fail-on", "false-evictionz"},
		code: exitBadInput, want: []string{`--fail-on: unknown condition "false-evictionz" (did you mean false-evictions?); known: invalid,`}},
	{name: "fail-on ESC", item: 2, args: []string{"run", "crash-one-member", "--fail-on", "\x1b]0;owned\x07"},
		code: exitBadInput, want: []string{`unknown condition "\x1b]0;owned\a"`}},
	{name: "bug typo", item: 2, args: []string{"bugs", "--bug", "KAFKA-965"},
		code: exitBadInput, want: []string{`--bug: unknown bug "KAFKA-965" (did you mean KAFKA-8653?)`}},
	{name: "shrink until typo", item: 2, args: []string{"shrink", "crash-one-member", "--until", "evictons"},
		code: exitBadInput, want: []string{`--until: unknown property "evictons" (did you mean evictions?)`}},
	{name: "shrink until list", item: 2, args: []string{"shrink", "crash-one-member", "--until", "evictions,unstable"},
		code: exitBadInput, want: []string{"one property only"}},

	// Item 3: a bound on everything a byte of input can cost.
	{name: "20 topics x 1M partitions", item: 3, files: map[string]string{"s.yaml": "name: wide\nduration: 30s\ntopics: [{name: t0, partitions: 1000000},{name: t1, partitions: 1000000},{name: t2, partitions: 1000000},{name: t3, partitions: 1000000},{name: t4, partitions: 1000000},{name: t5, partitions: 1000000},{name: t6, partitions: 1000000},{name: t7, partitions: 1000000},{name: t8, partitions: 1000000},{name: t9, partitions: 1000000},{name: t10, partitions: 1000000},{name: t11, partitions: 1000000},{name: t12, partitions: 1000000},{name: t13, partitions: 1000000},{name: t14, partitions: 1000000},{name: t15, partitions: 1000000},{name: t16, partitions: 1000000},{name: t17, partitions: 1000000},{name: t18, partitions: 1000000},{name: t19, partitions: 1000000}]\ngroups:\n  - {id: g, members: 4, subscribe: [t0]}\n"},
		args: []string{"run", "DIR/s.yaml"}, code: exitBadInput, want: []string{"s.yaml:3: topics[1].partitions: the topics have 2000000 partitions in total so far, more than the limit of 1000000"}},
	{name: "40 groups x 1M partitions", item: 3, files: map[string]string{"s.yaml": "name: wide\nduration: 30s\ntopics: [{name: t, partitions: 1000000}]\ngroups:\n  - {id: g0, members: 4, subscribe: [t]}\n  - {id: g1, members: 4, subscribe: [t]}\n  - {id: g2, members: 4, subscribe: [t]}\n  - {id: g3, members: 4, subscribe: [t]}\n  - {id: g4, members: 4, subscribe: [t]}\n  - {id: g5, members: 4, subscribe: [t]}\n  - {id: g6, members: 4, subscribe: [t]}\n  - {id: g7, members: 4, subscribe: [t]}\n  - {id: g8, members: 4, subscribe: [t]}\n  - {id: g9, members: 4, subscribe: [t]}\n  - {id: g10, members: 4, subscribe: [t]}\n  - {id: g11, members: 4, subscribe: [t]}\n  - {id: g12, members: 4, subscribe: [t]}\n  - {id: g13, members: 4, subscribe: [t]}\n  - {id: g14, members: 4, subscribe: [t]}\n  - {id: g15, members: 4, subscribe: [t]}\n  - {id: g16, members: 4, subscribe: [t]}\n  - {id: g17, members: 4, subscribe: [t]}\n  - {id: g18, members: 4, subscribe: [t]}\n  - {id: g19, members: 4, subscribe: [t]}\n  - {id: g20, members: 4, subscribe: [t]}\n  - {id: g21, members: 4, subscribe: [t]}\n  - {id: g22, members: 4, subscribe: [t]}\n  - {id: g23, members: 4, subscribe: [t]}\n  - {id: g24, members: 4, subscribe: [t]}\n  - {id: g25, members: 4, subscribe: [t]}\n  - {id: g26, members: 4, subscribe: [t]}\n  - {id: g27, members: 4, subscribe: [t]}\n  - {id: g28, members: 4, subscribe: [t]}\n  - {id: g29, members: 4, subscribe: [t]}\n  - {id: g30, members: 4, subscribe: [t]}\n  - {id: g31, members: 4, subscribe: [t]}\n  - {id: g32, members: 4, subscribe: [t]}\n  - {id: g33, members: 4, subscribe: [t]}\n  - {id: g34, members: 4, subscribe: [t]}\n  - {id: g35, members: 4, subscribe: [t]}\n  - {id: g36, members: 4, subscribe: [t]}\n  - {id: g37, members: 4, subscribe: [t]}\n  - {id: g38, members: 4, subscribe: [t]}\n  - {id: g39, members: 4, subscribe: [t]}\n"},
		args: []string{"run", "DIR/s.yaml"}, code: exitBadInput, want: []string{"about 6.0GiB of memory expected", "more than the limit of 4.0GiB", "raise the limit with --max-memory 7.5GiB"}},
	{name: "explore 40 groups x 1M partitions", item: 3, files: map[string]string{"s.yaml": "name: wide\nduration: 30s\ntopics: [{name: t, partitions: 1000000}]\ngroups:\n  - {id: g0, members: 4, subscribe: [t]}\n  - {id: g1, members: 4, subscribe: [t]}\n  - {id: g2, members: 4, subscribe: [t]}\n  - {id: g3, members: 4, subscribe: [t]}\n  - {id: g4, members: 4, subscribe: [t]}\n  - {id: g5, members: 4, subscribe: [t]}\n  - {id: g6, members: 4, subscribe: [t]}\n  - {id: g7, members: 4, subscribe: [t]}\n  - {id: g8, members: 4, subscribe: [t]}\n  - {id: g9, members: 4, subscribe: [t]}\n  - {id: g10, members: 4, subscribe: [t]}\n  - {id: g11, members: 4, subscribe: [t]}\n  - {id: g12, members: 4, subscribe: [t]}\n  - {id: g13, members: 4, subscribe: [t]}\n  - {id: g14, members: 4, subscribe: [t]}\n  - {id: g15, members: 4, subscribe: [t]}\n  - {id: g16, members: 4, subscribe: [t]}\n  - {id: g17, members: 4, subscribe: [t]}\n  - {id: g18, members: 4, subscribe: [t]}\n  - {id: g19, members: 4, subscribe: [t]}\n  - {id: g20, members: 4, subscribe: [t]}\n  - {id: g21, members: 4, subscribe: [t]}\n  - {id: g22, members: 4, subscribe: [t]}\n  - {id: g23, members: 4, subscribe: [t]}\n  - {id: g24, members: 4, subscribe: [t]}\n  - {id: g25, members: 4, subscribe: [t]}\n  - {id: g26, members: 4, subscribe: [t]}\n  - {id: g27, members: 4, subscribe: [t]}\n  - {id: g28, members: 4, subscribe: [t]}\n  - {id: g29, members: 4, subscribe: [t]}\n  - {id: g30, members: 4, subscribe: [t]}\n  - {id: g31, members: 4, subscribe: [t]}\n  - {id: g32, members: 4, subscribe: [t]}\n  - {id: g33, members: 4, subscribe: [t]}\n  - {id: g34, members: 4, subscribe: [t]}\n  - {id: g35, members: 4, subscribe: [t]}\n  - {id: g36, members: 4, subscribe: [t]}\n  - {id: g37, members: 4, subscribe: [t]}\n  - {id: g38, members: 4, subscribe: [t]}\n  - {id: g39, members: 4, subscribe: [t]}\n"},
		args: []string{"explore", "DIR/s.yaml", "--swarm", "default", "--seeds", "3"}, code: exitBadInput, want: []string{"simrun explore: DIR/s.yaml: about 6.0GiB of memory expected"}},
	{name: "add-partitions to 1M in 40 groups", item: 3, files: map[string]string{"s.yaml": "name: wide\nduration: 30s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g0, members: 4, subscribe: [t]}\n  - {id: g1, members: 4, subscribe: [t]}\n  - {id: g2, members: 4, subscribe: [t]}\n  - {id: g3, members: 4, subscribe: [t]}\n  - {id: g4, members: 4, subscribe: [t]}\n  - {id: g5, members: 4, subscribe: [t]}\n  - {id: g6, members: 4, subscribe: [t]}\n  - {id: g7, members: 4, subscribe: [t]}\n  - {id: g8, members: 4, subscribe: [t]}\n  - {id: g9, members: 4, subscribe: [t]}\n  - {id: g10, members: 4, subscribe: [t]}\n  - {id: g11, members: 4, subscribe: [t]}\n  - {id: g12, members: 4, subscribe: [t]}\n  - {id: g13, members: 4, subscribe: [t]}\n  - {id: g14, members: 4, subscribe: [t]}\n  - {id: g15, members: 4, subscribe: [t]}\n  - {id: g16, members: 4, subscribe: [t]}\n  - {id: g17, members: 4, subscribe: [t]}\n  - {id: g18, members: 4, subscribe: [t]}\n  - {id: g19, members: 4, subscribe: [t]}\n  - {id: g20, members: 4, subscribe: [t]}\n  - {id: g21, members: 4, subscribe: [t]}\n  - {id: g22, members: 4, subscribe: [t]}\n  - {id: g23, members: 4, subscribe: [t]}\n  - {id: g24, members: 4, subscribe: [t]}\n  - {id: g25, members: 4, subscribe: [t]}\n  - {id: g26, members: 4, subscribe: [t]}\n  - {id: g27, members: 4, subscribe: [t]}\n  - {id: g28, members: 4, subscribe: [t]}\n  - {id: g29, members: 4, subscribe: [t]}\n  - {id: g30, members: 4, subscribe: [t]}\n  - {id: g31, members: 4, subscribe: [t]}\n  - {id: g32, members: 4, subscribe: [t]}\n  - {id: g33, members: 4, subscribe: [t]}\n  - {id: g34, members: 4, subscribe: [t]}\n  - {id: g35, members: 4, subscribe: [t]}\n  - {id: g36, members: 4, subscribe: [t]}\n  - {id: g37, members: 4, subscribe: [t]}\n  - {id: g38, members: 4, subscribe: [t]}\n  - {id: g39, members: 4, subscribe: [t]}\nfaults:\n  - {at: 10s, add-partitions: t, partitions: 1000000}\n"},
		args: []string{"run", "DIR/s.yaml"}, code: exitBadInput, want: []string{"of memory expected"}},
	{name: "max-memory too low", item: 3, args: []string{"run", "crash-one-member", "--max-memory", "1MiB"}, code: exitBadInput, want: []string{"raise the limit with --max-memory"}},
	{name: "max-memory negative", item: 3, args: []string{"run", "crash-one-member", "--max-memory", "-3GiB"}, code: exitBadInput, want: []string{`want a positive size such as 8GiB or 512MiB, got "-3GiB"`}},
	// Item 4: YAML means what it says.
	{name: "octal members", item: 4, files: map[string]string{"s.yaml": "name: o\nduration: 60s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g, members: 010, subscribe: [t]}\n"},
		args: []string{"run", "DIR/s.yaml"}, code: exitBadInput, want: []string{`s.yaml:5: the integer "010" has a leading zero, which YAML 1.1 reads as octal (8, not 10); write 10`}},
	{name: "octal --set", item: 4, args: []string{"run", "crash-one-member", "--set", "groups[0].client.session.timeout.ms=030000"},
		code: exitBadInput, want: []string{`groups[0].client.session.timeout.ms: value "030000": the integer "030000" has a leading zero, which YAML 1.1 reads as octal (12288, not 30000)`}},
	{name: "octal in a sweep", item: 4, files: map[string]string{"e.yaml": "name: q\nscenario:\n  name: q\n  duration: 60s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 010000]\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{`e.yaml:10: the integer "010000" has a leading zero`}},
	{name: "octal in an experiment's --set", item: 4, files: map[string]string{"e.yaml": "name: q\nscenario:\n  name: q\n  duration: 60s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000]\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out", "--set", "groups[0].members=04"}, code: exitBadInput, want: []string{`groups[0].members: value "04": the integer "04" has a leading zero`}},
	{name: "custom tag", item: 4, files: map[string]string{"s.yaml": "name: o\nduration: !slow 60s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g, members: 3, subscribe: [t]}\n"},
		args: []string{"run", "DIR/s.yaml"}, code: exitBadInput, want: []string{`s.yaml:2: unknown tag "!slow"`}},
	{name: "tag in --set", item: 4, args: []string{"run", "crash-one-member", "--set", "duration=!!binary AAAA"}, code: exitBadInput, want: []string{`unknown tag "!!binary"`}},
	{name: "two documents", item: 4, files: map[string]string{"s.yaml": "name: o\nduration: 60s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g, members: 3, subscribe: [t]}\n---\nname: p\n"},
		args: []string{"run", "DIR/s.yaml"}, code: exitBadInput, want: []string{"s.yaml:6: a second YAML document starts here"}},
	{name: "two experiment documents", item: 4, files: map[string]string{"e.yaml": "name: q\nscenario:\n  name: q\n  duration: 60s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000]\n---\nname: r\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{"e.yaml:11: a second YAML document starts here"}},
	{name: "two documents in --set", item: 4, args: []string{"run", "crash-one-member", "--set", "duration=60s\n---\n30s"}, code: exitBadInput, want: []string{"a second YAML document"}},
	{name: "--set error names the override", item: 4, args: []string{"run", "crash-one-member", "--set", "groups[0].members=0"},
		code: exitBadInput, want: []string{"builtin:crash-one-member: --set groups[0].members=0: groups[0].members: must be between 1 and 100000, got 0"}},
	{name: "--set on a file names the override", item: 4, files: map[string]string{"s.yaml": "name: o\nduration: 60s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g, members: 3, subscribe: [t]}\n"},
		args: []string{"run", "DIR/s.yaml", "--set", "groups[0].client.heartbeat.interval.ms=-5"}, code: exitBadInput, want: []string{"s.yaml: --set groups[0].client.heartbeat.interval.ms=-5: groups[0].client.heartbeat.interval.ms:"}},
	// Item 5: text that reaches a terminal or a file format is clean.
	{name: "label with ESC", item: 5, files: map[string]string{"e.yaml": "name: lab\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: {values: [6000, 10000], labels: [\"\\e]0;owned\\a\\e[2J\", b]}\nplots:\n  - {kind: line, x: session_timeout_ms, y: recovery_ms, file: rec, title: T}\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{`e.yaml:12: a value must not contain control characters (such as tabs, newlines or terminal escapes), got "\x1b]0;owned\a\x1b[2J"`}},
	{name: "title with ESC", item: 5, files: map[string]string{"e.yaml": "name: lab\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: {values: [6000, 10000], labels: [a, b]}\nplots:\n  - {kind: line, x: session_timeout_ms, y: recovery_ms, file: rec, title: \"\\e[31mred\"}\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{`e.yaml:14: a value must not contain control characters`}},
	{name: "label with bidi override", item: 5, files: map[string]string{"e.yaml": "name: lab\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: {values: [6000, 10000], labels: [\"a\\u202Eb\", b]}\nplots:\n  - {kind: line, x: session_timeout_ms, y: recovery_ms, file: rec, title: T}\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{`e.yaml:12: a value must not contain bidirectional-override characters`}},
	{name: "file name not UTF-8", item: 5, args: []string{"run", "DIR/\xff\xc2\x9b.yaml"}, code: exitBadInput, want: []string{`\xff\u009b.yaml`}},
	{name: "labels with XML and CSV specials", item: 5, files: map[string]string{"e.yaml": "name: lab\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: {values: [6000, 10000], labels: [\"a<b & c\", \"x\\\"y,z\"]}\nplots:\n  - {kind: line, x: session_timeout_ms, y: recovery_ms, file: rec, title: \"<script>&amp;\"}\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out", "--workers", "1"}, code: exitOK, check: func(t *testing.T, dir, _, _ string) {
			svg, err := os.ReadFile(filepath.Join(dir, "out", "rec.svg"))
			require.NoError(t, err)
			d := xml.NewDecoder(bytes.NewReader(svg))
			for {
				_, err := d.Token()
				if err == io.EOF {
					break
				}
				require.NoError(t, err, "the SVG is well-formed XML")
			}
			assert.Contains(t, string(svg), "a&lt;b &amp; c")
			f, err := os.Open(filepath.Join(dir, "out", "points.csv"))
			require.NoError(t, err)
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			require.NoError(t, err, "points.csv is well-formed CSV")
			assert.Equal(t, "a<b & c", rows[1][1])
			assert.Equal(t, `x"y,z`, rows[len(rows)-1][1])
		}},
	{name: "file name with ESC", item: 5, args: []string{"run", "DIR/\x1b]0;owned\a.yaml"}, code: exitBadInput, want: []string{`no such file`, `\x1b]0;owned\a.yaml`}},
	{name: "experiment name with ESC", item: 5, args: []string{"sweep", "\x1b[2Jx.yaml"}, code: exitBadInput, want: []string{`experiment "\x1b[2Jx.yaml": no such file`}},
	{name: "out with ESC", item: 5, args: []string{"run", "crash-one-member", "--trace", "DIR/no/\x1b[2J/t.jsonl"}, code: exitBadInput, want: []string{`\x1b[2J`}},
	// Item 6: outputs.
	{name: "planted symlink points.csv", item: 6, files: map[string]string{"e.yaml": "name: six\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 10000]\n", "target": "precious\n"},
		setup: func(t *testing.T, dir string) {
			sweepOnce(t, dir)
			require.NoError(t, os.Remove(filepath.Join(dir, "out", "points.csv")))
			require.NoError(t, os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "out", "points.csv")))
		},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{"DIR/out/points.csv is a symbolic link inside the output directory, which simrun did not make; refusing to write through it"},
		check: func(t *testing.T, dir, _, _ string) {
			b, _ := os.ReadFile(filepath.Join(dir, "target"))
			assert.Equal(t, "precious\n", string(b), "the link's target is untouched")
		}},
	{name: "planted symlink .points", item: 6, files: map[string]string{"e.yaml": "name: six\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 10000]\n", "elsewhere/keep": "x", "out/.points": "->DIR/elsewhere"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{"DIR/out/.points is a symbolic link inside the output directory"},
		check: func(t *testing.T, dir, _, _ string) {
			es, _ := os.ReadDir(filepath.Join(dir, "elsewhere"))
			assert.Len(t, es, 1, "no point file written through the link")
		}},
	{name: "foreign summary.csv", item: 6, files: map[string]string{"e.yaml": "name: six\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 10000]\n", "out/summary.csv": "my own numbers\n"},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{"DIR/out/summary.csv already exists, and DIR/out holds no simrun sweep (no .sweep/meta.json), so simrun did not write it"}},
	{name: "foreign REPORT.md", item: 6, files: map[string]string{"e.yaml": "name: six\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 10000]\n", "out/REPORT.md": "# mine\n"},
		args: []string{"report", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{"DIR/out/REPORT.md already exists"}},
	{name: "concurrent writers", item: 6, files: map[string]string{"e.yaml": "name: six\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 10000]\n"},
		setup: func(t *testing.T, dir string) {
			unlock, err := outdir.Lock(filepath.Join(dir, "out"))
			require.NoError(t, err)
			t.Cleanup(unlock)
		},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitBadInput, want: []string{"simrun: DIR/out is being written by another simrun right now (it holds .simrun.lock); wait for it to finish, or give another --out"}},
	{name: "concurrent explore", item: 6,
		setup: func(t *testing.T, dir string) {
			unlock, err := outdir.Lock(filepath.Join(dir, "f"))
			require.NoError(t, err)
			t.Cleanup(unlock)
		},
		args: []string{"explore", "bug-kafka-8653", "--swarm", "default", "--set", "duration=600s", "--seeds", "2", "--out", "DIR/f"}, code: exitBadInput, want: []string{"DIR/f is being written by another simrun"}},
	{name: "tampered point file", item: 6, files: map[string]string{"e.yaml": "name: six\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: [6000, 10000]\n"},
		setup: func(t *testing.T, dir string) {
			sweepOnce(t, dir)
			p := filepath.Join(dir, "out", ".points", "p0001.csv")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "want.csv"), b, 0o644))
			lines := strings.Split(string(b), "\n")
			cells := strings.Split(lines[2], ",")
			cells[4] = "999999" // a hand-edited figure
			lines[2] = strings.Join(cells, ",")
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644))
		},
		args: []string{"sweep", "DIR/e.yaml", "--out", "DIR/out"}, code: exitOK, want: []string{"warning: DIR/out/.points/p0001.csv does not match its checksum in DIR/out/.sweep/points.sha256 (edited or damaged): running point p0001 again"},
		check: func(t *testing.T, dir, stdout, _ string) {
			want, _ := os.ReadFile(filepath.Join(dir, "want.csv"))
			got, _ := os.ReadFile(filepath.Join(dir, "out", ".points", "p0001.csv"))
			assert.Equal(t, string(want), string(got), "the tampered point was recomputed")
			assert.Contains(t, stdout, "1 points resumed, 2 runs now")
		}},
	{name: "truncated findings.json", item: 6, files: map[string]string{"f/findings.json": "{\n  \"version\": 1,\n  \"scenario\": \"builtin:bug-k"},
		args: []string{"explore", "bug-kafka-8653", "--swarm", "default", "--set", "duration=600s", "--seeds", "2", "--out", "DIR/f"}, code: exitBadInput,
		want: []string{"DIR/f/findings.json is damaged (unexpected end of JSON input): it is this campaign's index, which simrun writes whole; delete it to run the campaign again"}},
	{name: "findings.json a symlink", item: 6, files: map[string]string{"target.json": "{}", "f/findings.json": "->DIR/target.json"},
		args: []string{"explore", "bug-kafka-8653", "--swarm", "default", "--set", "duration=600s", "--seeds", "2", "--out", "DIR/f"}, code: exitBadInput,
		want: []string{"DIR/f/findings.json is a symbolic link inside the output directory"}},
	// Item 7: the small messages.
	{name: "seed -1", item: 7, args: []string{"run", "crash-one-member", "--seed", "-1"}, code: exitBadInput, want: []string{`invalid argument "-1" for "--seed" flag: want a whole number from 0 to 18446744073709551615`}},
	{name: "first-seed x", item: 7, args: []string{"explore", "crash-one-member", "--first-seed", "x"}, code: exitBadInput, want: []string{"want a whole number from 0 to"}},
	{name: "seeds 1.5", item: 7, args: []string{"tune", "gc-pause", "--seeds", "1.5"}, code: exitBadInput, want: []string{`invalid argument "1.5" for "--seeds" flag: want a whole number`}},
	{name: "max-events 0", item: 7, args: []string{"run", "crash-one-member", "--max-events", "0"}, code: exitBadInput, want: []string{"--max-events 0: want a positive number of events"}},
	{name: "trace and perfetto one file", item: 7, args: []string{"run", "crash-one-member", "--trace", "DIR/t.json", "--perfetto", "DIR/./t.json"}, code: exitBadInput, want: []string{"--perfetto and --trace name the same file"}},
	{name: "trace and timeline to stdout", item: 7, args: []string{"run", "crash-one-member", "--trace", "-", "--timeline", "-"}, code: exitBadInput, want: []string{"--timeline and --trace name the same file"}},
	{name: "trace onto the input", item: 7, files: map[string]string{"s.yaml": "name: o\nduration: 60s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g, members: 3, subscribe: [t]}\n"},
		args: []string{"run", "DIR/s.yaml", "--trace", "DIR/s.yaml"}, code: exitBadInput, want: []string{"--trace \"DIR/s.yaml\" is the input file"},
		check: func(t *testing.T, dir, _, _ string) {
			b, _ := os.ReadFile(filepath.Join(dir, "s.yaml"))
			assert.True(t, strings.HasPrefix(string(b), "name: o"), "the scenario is untouched")
		}},
	{name: "perfetto onto the input via a link", item: 7, files: map[string]string{"s.yaml": "name: o\nduration: 60s\ntopics: [{name: t, partitions: 4}]\ngroups:\n  - {id: g, members: 3, subscribe: [t]}\n", "l.json": "->DIR/s.yaml"},
		args: []string{"run", "DIR/s.yaml", "--perfetto", "DIR/l.json"}, code: exitBadInput, want: []string{"is the input file"}},
	{name: "unknown command --help", item: 7, args: []string{"nosuchcommand", "--help"}, code: exitBadInput, want: []string{`simrun: unknown command "nosuchcommand"; commands: bugs,`}},
	{name: "command typo", item: 7, args: []string{"swep", "quickstart"}, code: exitBadInput, want: []string{`unknown command "swep" (did you mean sweep?)`}},
	{name: "help still works", item: 7, args: []string{"help", "run"}, code: exitOK},
	{name: "max-memory raised", item: 3, args: []string{"run", "crash-one-member", "--max-memory", "8GiB", "--json"}, code: exitOK},
}

// sweepOnce runs DIR/e.yaml into DIR/out.
func sweepOnce(t *testing.T, dir string) {
	t.Helper()
	code, _, errs := run("sweep", filepath.Join(dir, "e.yaml"), "--out", filepath.Join(dir, "out"), "--workers", "1")
	require.Equal(t, exitOK, code, errs)
}

// TestHostileInputs runs the table of hostile inputs and counts what happened to each
// input: a clear error (the exit status and words wanted, a clean message),
// a crash (exit 3), a hang (over a minute) or a silent wrong answer
// (anything else, e.g. exit 0 for a typo).
func TestHostileInputs(t *testing.T) {
	var inputs, clear, crashes, hangs, wrong int
	for _, c := range hostileCases {
		inputs++
		ok := t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				if target, ok := strings.CutPrefix(body, "->"); ok {
					require.NoError(t, os.Symlink(strings.ReplaceAll(target, "DIR", dir), p))
					continue
				}
				require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(body, "DIR", dir)), 0o644))
			}
			if c.setup != nil {
				c.setup(t, dir)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			type res struct {
				code        int
				out, errout string
			}
			done := make(chan res, 1)
			go func() {
				code, out, errout := run(args...)
				done <- res{code, out, errout}
			}()
			var r res
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				hangs++
				t.Fatalf("hangs: simrun %q", args)
			}
			if r.code == exitInternal {
				crashes++
			}
			errout := strings.ReplaceAll(r.errout, dir, "DIR")
			assert.Equal(t, c.code, r.code, "simrun %q\n%s", args, errout)
			for _, w := range c.want {
				assert.Contains(t, errout, w)
			}
			assert.Equal(t, -1, strings.IndexFunc(r.errout, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }), "a control character reached stderr: %q", errout)
			if c.check != nil {
				c.check(t, dir, r.out, r.errout)
			}
		})
		if ok {
			clear++
		} else {
			wrong++
		}
	}
	wrong -= crashes + hangs
	t.Logf("hostile inputs: %d, clear errors or right answers: %d, crashes: %d, hangs: %d, silent wrong answers: %d", inputs, clear, crashes, hangs, wrong)
}

// TestTuneStdoutErrorWhenNothingPasses: a stdout write
// error was reported only when the command would exit 0; tune with no
// passing value (exit 1) lost it without a word.
func TestTuneStdoutErrorWhenNothingPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	var errb bytes.Buffer
	code := dispatch([]string{"tune", "gc-pause", "--param", "groups[0].client.session.timeout.ms=20000..30000", "--require", "false_evictions_per_member_hour <= 0.01",
		"--seeds", "2", "--grid", "2", "--out", t.TempDir()}, full, &errb)
	assert.Equal(t, exitViolation, code)
	assert.Contains(t, errb.String(), "simrun: writing standard output: write /dev/full: no space left on device")
}
