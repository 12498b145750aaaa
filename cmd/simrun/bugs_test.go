package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugsCommand: `simrun bugs` prints the rediscovery table's header and
// one row per bug asked for: KAFKA-8653 is found in every campaign and its
// fixed variant is clean, and so is KAFKA-13891 (its over-revocation oracle);
// an unknown bug is bad input naming the library's bugs.
func TestBugsCommand(t *testing.T) {
	code, out, errOut := run("bugs", "--bug", "KAFKA-8653,bug-kafka-13891", "--campaigns", "2", "--seeds", "50", "--fixed-seeds", "30", "--workers", "2")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.True(t, strings.HasPrefix(lines[0], "| Bug | Oracle |"), out)
	assert.Regexp(t, `^\| KAFKA-8653 \| `+"`rebalance-storm`"+` \| \d+, \d+ \| \d+ / .* \| 0 / 30 \(`, lines[2])
	assert.Regexp(t, `^\| KAFKA-13891 \| `+"`over-revocation`"+` \| \d+, \d+ \| \d+ / .* \| 0 / 30 \(`, lines[3])
	assert.Contains(t, errOut, "simrun explore bug-kafka-8653 --swarm default --file-faults=false")

	code, _, errOut = run("bugs", "--bug", "KAFKA-1")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "KAFKA-9752")
}
