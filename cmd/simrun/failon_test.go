package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// TestFailOnInvalid: a configuration the broker rejects must not look best
// (its members die, so it shows no rebalances): session.timeout.ms=5000 below group.min.session.timeout.ms kills
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

// TestRunOracles: `run --fail-on ORACLE` judges the run by the oracle and
// exits 4 on the KAFKA-12639 built-in, 0 on its fixed variant; --json
// carries every judged oracle's verdict; an unknown oracle is refused with
// a suggestion.
func TestRunOracles(t *testing.T) {
	code, out, errOut := run("run", "bug-kafka-12639", "--fail-on", "cpu-spin")
	assert.Equal(t, exitFailOn, code, errOut)
	assert.Contains(t, out, "FIRED cpu-spin")
	assert.Contains(t, errOut, "fail-on: cpu-spin fired at")

	code, out, errOut = run("run", "bug-kafka-12639", "--fail-on", "cpu-spin", "--set", "groups[0].client.profile=kafka-3.6")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "oracles: 1 judged, 0 fired")

	code, out, errOut = run("run", "bug-kafka-12639", "--json", "--oracles", "all", "--seed", "2")
	require.Equal(t, 0, code, errOut)
	var s struct {
		Oracles []struct {
			Name  string `json:"name"`
			Fired bool   `json:"fired"`
			AtMs  int64  `json:"at_ms"`
		} `json:"oracles"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	judged := map[string]bool{}
	for _, o := range s.Oracles {
		judged[o.Name] = true
		if o.Name == "cpu-spin" {
			assert.True(t, o.Fired)
			assert.Greater(t, o.AtMs, int64(30000))
		}
	}
	assert.Len(t, judged, len(scenario.OracleNames))

	// Without --oracles a scenario with no oracles: block is judged by none.
	code, out, _ = run("run", "bug-kafka-12639", "--json")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, `"oracles"`)

	code, _, errOut = run("run", "bug-kafka-12639", "--oracles", "cpu-spinn")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, `did you mean cpu-spin?`)
	code, _, errOut = run("run", "bug-kafka-12639", "--fail-on", "unowned-at-endd")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, `did you mean unowned-at-end?`)
}
