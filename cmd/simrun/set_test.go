package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
)

// TestRunSet: --set overrides scenario settings by path, with YAML values;
// a bad path is bad input naming the path.
func TestRunSet(t *testing.T) {
	summary := func(args ...string) harness.Summary {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, dispatch(append([]string{"run", "bug-kafka-12890", "--json"}, args...), &stdout, &stderr), stderr.String())
		var s harness.Summary
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &s))
		return s
	}
	buggy := summary()
	fixed := summary("--set", "coordinator.profile=kafka-3.x")
	assert.Equal(t, int32(2), buggy.Groups[0].FinalGeneration, "KAFKA-12890: stuck in generation 2")
	assert.Greater(t, fixed.Groups[0].FinalGeneration, int32(2), "the fixed broker expires the pending sync and moves on")

	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"run", "crash-one-member", "--set", "groups[0].client.sesion.timeout.ms=1"}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr.String(), `unknown key "sesion" in groups[0].client`)
	code = dispatch([]string{"run", "crash-one-member", "--set", "nonsense"}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr.String(), "want PATH=VALUE")
}
