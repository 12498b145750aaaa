// Goal: the command line behaves like the Go tools people know (kubectl,
// docker, gh: cobra's conventions) and fails loudly on hostile input: flags
// before or after positionals, extra arguments refused, -h/--help on every
// command to stdout with exit 0, usage lines listing every flag, version,
// list descriptions, completion, distinct exit codes, stdout write errors,
// interrupt signals and negative --workers.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/experiments"
)

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return code, o.String(), e.String()
}

// A hidden command that panics, to test the top-level recovery.
func init() {
	register(func(a *app) *cobra.Command {
		return &cobra.Command{Use: "test-panic", Hidden: true, Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error {
			a.running = "simrun run crash-one-member --seed 42"
			panic("boom")
		}}
	})
}

func TestFlagOrders(t *testing.T) {
	orders := [][]string{
		{"run", "gc-pause", "--seed", "7", "--json"},
		{"run", "--seed", "7", "gc-pause", "--json"},
		{"run", "--json", "--seed=7", "gc-pause"},
		{"run", "-seed", "7", "-json", "gc-pause"}, // Go flag-package spelling still works
	}
	var first string
	for _, args := range orders {
		code, out, errs := run(args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errs)
		var s struct {
			Seed   uint64          `json:"seed"`
			Config json.RawMessage `json:"effective_config"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &s), "%v printed %q", args, out)
		assert.Equal(t, uint64(7), s.Seed, "%v", args)
		assert.Contains(t, string(s.Config), `"session.timeout.ms": 10000`, "effective configuration in --json")
		if first == "" {
			first = out
		}
		assert.Equal(t, first, out, "%v", args)
	}
}

func TestExtraArgumentsAreErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "gc-pause", "crash-one-member"},
		{"explain", "gc-pause", "x"},
		{"sweep", "quickstart", "extra"},
		{"tune", "gc-pause", "x", "--param", "groups[0].client.session.timeout.ms=6000..9000", "--require", "evictions <= 1"},
		{"compare", "a", "b", "c"},
		{"list", "x"},
		{"version", "x"},
		{"nonsense"},
		{"run"},
	} {
		code, out, errs := run(args...)
		assert.Equal(t, exitBadInput, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Contains(t, errs, "--help' for usage", "%v", args)
	}
}

// commands lists every visible command.
func commands(t *testing.T) []*cobra.Command {
	root := newRoot(&app{stdout: &checkedWriter{w: &bytes.Buffer{}}, stderr: &bytes.Buffer{}})
	var out []*cobra.Command
	for _, c := range root.Commands() {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	require.GreaterOrEqual(t, len(out), 10)
	return out
}

func TestHelpOnEveryCommand(t *testing.T) {
	cases := [][]string{{"-h"}, {"--help"}, {"help"}}
	for _, c := range commands(t) {
		cases = append(cases, []string{c.Name(), "-h"}, []string{c.Name(), "--help"}, []string{"help", c.Name()})
	}
	cases = append(cases, []string{"completion", "-h"}, []string{"completion", "bash", "--help"})
	for _, args := range cases {
		code, out, errs := run(args...)
		assert.Equal(t, exitOK, code, "%v", args)
		assert.Empty(t, errs, "%v: help goes to stdout", args)
		assert.Contains(t, out, "Usage:", "%v", args)
		assert.Contains(t, out, "Exit status:", "%v: exit codes in -h", args)
		assert.Contains(t, out, "130  interrupted", "%v", args)
	}
	// No command at all: usage on stderr, exit 2 (as go(1)).
	code, out, errs := run()
	assert.Equal(t, exitBadInput, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "Usage:")
}

// Every flag of a command is on its usage line.
func TestUsageLinesListEveryFlag(t *testing.T) {
	for _, c := range commands(t) {
		if c.Name() == "completion" || c.Name() == "help" {
			continue
		}
		_, out, _ := run(c.Name(), "-h")
		i := strings.Index(out, "Usage:\n")
		require.GreaterOrEqual(t, i, 0, c.Name())
		line := strings.SplitN(out[i+len("Usage:\n"):], "\n", 2)[0]
		for _, f := range []string{"set", "shard", "seed", "json", "workers", "out", "param", "require", "long", "a-set", "b-set", "member", "until"} {
			if c.Flags().Lookup(f) != nil {
				assert.Contains(t, line, "--"+f, "%s usage line %q", c.Name(), line)
			}
		}
	}
	_, out, _ := run("sweep", "-h")
	assert.Contains(t, out, "[--set PATH=VALUE]...")
	assert.Contains(t, out, "[--shard i/n]")
	_, out, _ = run("report", "-h")
	assert.Contains(t, out, "--set")
}

var fingerprint = regexp.MustCompile(`simulator fingerprint [0-9a-f]{16}\n`)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errs := run(args...)
		require.Equal(t, exitOK, code, errs)
		assert.Regexp(t, `^simrun \S+`, out)
		assert.Regexp(t, `\ngo go1\.\d+`, out)
		assert.Regexp(t, fingerprint, out)
	}
}

func TestListDescriptions(t *testing.T) {
	code, out, _ := run("list")
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `gc-pause +a 15 s stop-the-world pause`, out)
	assert.Regexp(t, `quickstart +Crash recovery time vs session.timeout.ms`, out)
	code, out, _ = run("list", "--long")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "question:")
	assert.Contains(t, out, "knobs")
	assert.Contains(t, out, "client.session.timeout.ms=10000")
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errs := run("completion", sh)
		assert.Equal(t, exitOK, code, errs)
		assert.Contains(t, out, "simrun", sh)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestExitCodes(t *testing.T) {
	code, _, errs := run("run", "no-such-scenario")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "no such built-in scenario")

	code, _, errs = run("test-panic")
	assert.Equal(t, exitInternal, code)
	assert.Contains(t, errs, "internal error: boom")
	assert.Contains(t, errs, "please report")
	assert.Contains(t, errs, "--seed 42", "the run in progress, with its seed")

	for _, args := range [][]string{
		{"sweep", "quickstart", "--workers", "-1"},
		{"report", "quickstart", "--workers=-1"},
		{"tune", "gc-pause", "--workers", "-1", "--param", "groups[0].client.session.timeout.ms=6000..9000", "--require", "evictions <= 1"},
		{"compare", "gc-pause", "crash-one-member", "--workers", "-1"},
	} {
		code, _, errs = run(args...)
		assert.Equal(t, exitBadInput, code, "%v", args)
		assert.Contains(t, errs, "--workers -1", "%v", args)
	}
}

// Output that cannot be written is an error, not exit 0.
func TestStdoutWriteErrors(t *testing.T) {
	var errb bytes.Buffer
	code := dispatch([]string{"run", "crash-one-member", "--json"}, failWriter{}, &errb)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errb.String(), "no space left on device")
	errb.Reset()
	code = dispatch([]string{"list"}, failWriter{}, &errb)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errb.String(), "writing standard output")
	if full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		defer full.Close()
		errb.Reset()
		assert.Equal(t, exitBadInput, dispatch([]string{"run", "crash-one-member", "--json"}, full, &errb), errb.String())
	}
}

// SIGINT, SIGTERM and SIGHUP all interrupt a sweep the same way: one
// message, exit 130, finished points kept.
func TestInterruptSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	// Keep the default action (terminate) off for the whole test, so a
	// signal that arrives late cannot kill the test binary.
	guard := make(chan os.Signal, 8)
	signal.Notify(guard, interruptSignals...)
	defer signal.Stop(guard)
	var msgs []string
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		var once sync.Once
		signalsHook = func() { once.Do(func() { syscall.Kill(os.Getpid(), sig) }) }
		dir := t.TempDir()
		code, _, errs := run("sweep", "gc-pause-evictions", "--out", dir, "--workers", "1")
		signalsHook = nil
		assert.Equal(t, exitInterrupted, code, "%v: %s", sig, errs)
		require.Contains(t, errs, "simrun: interrupted", sig.String())
		msgs = append(msgs, strings.ReplaceAll(errs[strings.Index(errs, "simrun: interrupted"):], dir, "DIR"))
	}
	assert.Equal(t, msgs[0], msgs[1])
	time.Sleep(50 * time.Millisecond)
}

// A panic inside a sweep's run is an internal error too.
func TestSweepPanicExitCode(t *testing.T) {
	err := sweepError(&experiments.PanicError{Where: "quickstart p0001 (session_timeout_ms=10000) seed 7", Value: "boom"})
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitInternal, ee.code)
	assert.Contains(t, ee.msg, "please report")
	assert.Contains(t, ee.msg, "seed 7")
}

// Completion offers the built-in names for the positional argument.
func TestCompletionOfBuiltins(t *testing.T) {
	code, out, _ := run("__complete", "run", "gc-")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "gc-pause")
	_, out, _ = run("__complete", "sweep", "quick")
	assert.Contains(t, out, "quickstart")
}

// TestExploreHelpAgreesWithTheExitTable: explore -h says it exits 1 when
// anything was found; the exit-code table that closes the same -h must say
// so too (the table once named only run, explain and tune for 1, and a
// user reading it took explore's exit 1 for a crash).
func TestExploreHelpAgreesWithTheExitTable(t *testing.T) {
	code, out, _ := run("explore", "-h")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "Exit status: 1 when anything was found")
	i := strings.Index(out, "\nExit status:\n")
	require.GreaterOrEqual(t, i, 0)
	table := out[i:]
	one := table[strings.Index(table, "  1 "):strings.Index(table, "  2 ")]
	assert.Contains(t, one, "explore: a finding", "exit 1 in the table: %q", one)
}
