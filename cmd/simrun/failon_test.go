package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFailOnInvalid is issue 10's "a configuration the broker rejects looks
// best": session.timeout.ms=5000 below group.min.session.timeout.ms kills
// every member with INVALID_SESSION_TIMEOUT. simrun run says so loudly, and
// --fail-on invalid makes it a non-zero exit for CI.
func TestFailOnInvalid(t *testing.T) {
	bad := []string{"run", "crash-one-member", "--set", "groups[0].client.session.timeout.ms=5000", "--set", "coordinator.group.min.session.timeout.ms=6000"}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitOK, dispatch(bad, &stdout, &stderr), "without --fail-on the run itself succeeded")
	assert.Contains(t, stdout.String(), "INVALID RUN")
	assert.Contains(t, stderr.String(), "warning: this run is INVALID")
	assert.Contains(t, stderr.String(), "INVALID_SESSION_TIMEOUT")

	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, exitFailOn, dispatch(append(bad, "--fail-on", "invalid"), &stdout, &stderr))
	assert.Contains(t, stderr.String(), "fail-on: invalid")

	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, exitOK, dispatch([]string{"run", "crash-one-member", "--fail-on", "invalid,false-evictions"}, &stdout, &stderr), stderr.String())
	assert.Equal(t, exitFailOn, dispatch([]string{"run", "kip62-slow-poll", "--fail-on", "false-evictions"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "fail-on: false-evictions:")
	assert.Equal(t, exitBadInput, dispatch([]string{"run", "crash-one-member", "--fail-on", "bogus"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `unknown condition "bogus"`)
}
