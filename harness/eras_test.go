package harness

// Goal: the Kafka 3.8–4.x eras run end to end: a 4.x client against a 4.x
// broker (the Java classic-group coordinator) forms a group, survives a
// crash and ends stable; a kafka-0.10 client (JoinGroup v0) cannot join a
// 4.x broker (KIP-896).

import (
	"github.com/rebalsim/rebalsim/internal/simtest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func smallCrashWith(t *testing.T, clientProfile, brokerProfile string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/small-crash.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(b), "  profile: kafka-3.x\n  group.initial", "  profile: "+brokerProfile+"\n  group.initial", 1)
	src = strings.Replace(src, "      profile: kafka-3.x", "      profile: "+clientProfile, 1)
	require.NotContains(t, src, "profile: kafka-3.x", "both profiles replaced")
	return src
}

func TestLaterErasEndToEnd(t *testing.T) {
	for _, p := range [][2]string{{"kafka-3.9", "kafka-3.9"}, {"kafka-4.0", "kafka-4.0"}, {"kafka-4.x", "kafka-4.x"}, {"kafka-3.7", "kafka-4.3"}} {
		t.Run(p[0]+"/"+p[1], func(t *testing.T) {
			sc := simtest.Parse(t, smallCrashWith(t, p[0], p[1]))
			res := run(t, sc, 7, Options{})
			g := res.Summary.Groups[0]
			assert.Empty(t, res.Summary.InvariantViolations)
			assert.Empty(t, g.FatalErrors)
			assert.True(t, g.StableAtEnd)
			assert.GreaterOrEqual(t, len(g.Rebalances), 2, "formation and the crash")
		})
	}
	sc := simtest.Parse(t, smallCrashWith(t, "kafka-0.10", "kafka-4.0"))
	g := run(t, sc, 7, Options{}).Summary.Groups[0]
	require.NotEmpty(t, g.FatalErrors, "JoinGroup v0 to a 4.x broker")
	assert.Contains(t, strings.Join(g.FatalErrors, " "), "UNSUPPORTED_VERSION")
}
