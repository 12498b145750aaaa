package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/explore"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
)

// The kill-at-every-instant campaign test (a campaign killed anywhere must
// resume to the uninterrupted result, INTERFACE.md): the test
// binary re-executes itself as simrun (helperEnv), counting the instants a
// campaign can be killed at (explore.CrashPoint: after each judged seed, in
// each shrink run, between a finding's files, before the index is written;
// atomicfile.BeforeRename: a file's bytes written, not yet renamed) and
// sending itself a signal at the N-th.
const (
	helperEnv = "SIMRUN_TEST_HELPER" // JSON list of the arguments
	killAtEnv = "SIMRUN_TEST_KILL_AT"
	killSig   = "SIMRUN_TEST_KILL_SIG" // "KILL" (default) or "TERM"
)

func TestMain(m *testing.M) {
	if args := os.Getenv(helperEnv); args != "" {
		os.Exit(helperMain(args))
	}
	os.Exit(m.Run())
}

func helperMain(argsJSON string) int {
	var args []string
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
		panic(err)
	}
	at, _ := strconv.Atoi(os.Getenv(killAtEnv))
	sig := syscall.SIGKILL
	if os.Getenv(killSig) == "TERM" {
		sig = syscall.SIGTERM
	}
	n := 0
	point := func(string) {
		n++
		if n == at {
			syscall.Kill(os.Getpid(), sig)
		}
	}
	explore.CrashPoint = point
	atomicfile.BeforeRename = func(string) { point("rename") }
	code := dispatch(args, os.Stdout, os.Stderr)
	fmt.Fprintf(os.Stderr, "crash points: %d\n", n)
	return code
}

// helper runs the test binary as simrun in dir, killed at the at-th crash
// point (0: never) with sig.
func helper(t *testing.T, dir string, at int, sig string, args ...string) (code int, stderr string) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), helperEnv+"="+string(b), killAtEnv+"="+strconv.Itoa(at), killSig+"="+sig)
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()), e.String()
		}
		return ee.ExitCode(), e.String()
	}
	require.NoError(t, err)
	return 0, e.String()
}

// tree reads every file under dir (relative name -> bytes; a symlink or
// other non-regular file is named with its type).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			m[rel+"/"] = ""
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			m[rel] = string(b)
			return err
		default:
			m[rel] = d.Type().String()
		}
		return nil
	}))
	return m
}

func crashPoints(t *testing.T, stderr string) int {
	t.Helper()
	i := strings.LastIndex(stderr, "crash points: ")
	require.GreaterOrEqual(t, i, 0, stderr)
	n, err := strconv.Atoi(strings.TrimSpace(stderr[i+len("crash points: "):]))
	require.NoError(t, err, stderr)
	return n
}

// TestExploreKilledAtEveryInstant: a campaign with two distinct findings,
// shrinks, a spent shrink budget and runs counted, not shrunk, is killed
// with SIGKILL at every instant (after a seed, inside each shrink run,
// between a finding's files, before and inside each index write), then
// rerun with the same --out; the findings, the index and every written file
// equal the uninterrupted campaign's, byte for byte. SIGTERM at the same
// instants exits 130 ("interrupted") with the index written, and the rerun
// again ends identical. Before the fix the index saved for a finding named
// it as the next seed, so the rerun judged it again (runs_with_findings and
// the shrink budget counted twice) and a kill lost later findings.
func TestExploreKilledAtEveryInstant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs many campaigns")
	}
	args := []string{"explore", "bug-kafka-8653", "--swarm", "default", "--file-faults=false", "--set", "duration=600s",
		"--seeds", "10", "--workers", "2", "--shrinks-per-oracle", "2", "--out", "out"}
	ref := t.TempDir()
	code, errs := helper(t, ref, 0, "", args...)
	require.Equal(t, exitViolation, code, errs)
	want := tree(t, ref)
	total := crashPoints(t, errs)
	require.Greater(t, total, 20, "too few crash points for the test to mean much")
	var ix explore.Index
	require.NoError(t, json.Unmarshal([]byte(want["out/findings.json"]), &ix))
	require.GreaterOrEqual(t, len(ix.Findings), 2, "the campaign should find two distinct findings")
	require.Greater(t, ix.Unshrunk["liveness"], 0, "the campaign should spend a shrink budget")

	// Every instant when there are few, else an even spread of 60.
	step := max(1, total/60)
	kills, trials, same := 0, 0, 0
	for at := 1; at <= total; at += step {
		for _, sig := range []string{"KILL", "TERM"} {
			if sig == "TERM" && at%(5*step) != 1 {
				continue // SIGTERM at every fifth instant
			}
			dir := t.TempDir()
			code, errs := helper(t, dir, at, sig, args...)
			switch sig {
			case "KILL":
				require.Equal(t, -int(syscall.SIGKILL), code, "killed at %d: %s", at, errs)
			case "TERM":
				// The campaign may finish before it notices the signal.
				if code != exitViolation {
					require.Equal(t, exitInterrupted, code, "SIGTERM at %d: %s", at, errs)
					require.Contains(t, errs, "simrun explore: interrupted", "SIGTERM at %d", at)
					_, err := os.Stat(filepath.Join(dir, "out", explore.IndexFile))
					require.NoError(t, err, "SIGTERM at %d: no index written", at)
				}
			}
			kills++
			trials++
			code, errs = helper(t, dir, 0, "", args...)
			require.Equal(t, exitViolation, code, "resumed after %s at %d: %s", sig, at, errs)
			if assert.Equal(t, want, tree(t, dir), "resumed after %s at crash point %d of %d", sig, at, total) {
				same++
			}
		}
	}
	// Two kills in a row: the resumed campaign killed again, at a later
	// instant of its own, then finished.
	for _, at := range []int{total / 3, total / 2} {
		dir := t.TempDir()
		code, _ := helper(t, dir, at, "KILL", args...)
		require.Equal(t, -int(syscall.SIGKILL), code)
		code, _ = helper(t, dir, max(1, total/4), "KILL", args...)
		kills += 2
		trials++
		if code == exitViolation {
			kills-- // finished before the second kill's instant
		}
		_, errs := helper(t, dir, 0, "", args...)
		if assert.Equal(t, want, tree(t, dir), "killed at %d, then again: %s", at, errs) {
			same++
		}
	}
	t.Logf("kill campaign: %d crash points, %d kills or SIGTERMs in %d interrupted campaigns, %d resumed campaigns identical to the uninterrupted one", total, kills, trials, same)
}

// TestExploreAndBugsInterrupted: explore and bugs keep sweep's signal
// contract (SIGINT, SIGTERM, SIGHUP -> "interrupted", exit 130); before,
// they installed no handler and the signal killed them (SIGTERM: 143).
func TestExploreAndBugsInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	guard := make(chan os.Signal, 8)
	signal.Notify(guard, interruptSignals...)
	defer signal.Stop(guard)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		var once sync.Once
		kill := func() { syscall.Kill(os.Getpid(), sig); time.Sleep(20 * time.Millisecond) }
		signalsHook = func() { once.Do(kill) }
		dir := t.TempDir()
		code, _, errs := run("explore", "bug-kafka-8653", "--swarm", "default", "--file-faults=false", "--set", "duration=600s",
			"--seeds", "1000", "--workers", "1", "--out", dir)
		assert.Equal(t, exitInterrupted, code, "%v: %s", sig, errs)
		assert.Contains(t, errs, "simrun explore: interrupted; the seeds judged so far are in "+filepath.Join(dir, "findings.json"))
		_, err := os.Stat(filepath.Join(dir, "findings.json"))
		assert.NoError(t, err, "index written")
		var once2 sync.Once
		signalsHook = func() { once2.Do(kill) }
		code, _, errs = run("bugs", "--bug", "KAFKA-8653", "--campaigns", "1", "--fixed-seeds", "0", "--workers", "1")
		signalsHook = nil
		assert.Equal(t, exitInterrupted, code, "%v: %s", sig, errs)
		assert.Contains(t, errs, "simrun bugs: interrupted while measuring KAFKA-8653")
	}
	time.Sleep(50 * time.Millisecond)
}
