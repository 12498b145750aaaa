package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile and careless input on the command line (issue 17).

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
