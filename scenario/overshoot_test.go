package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWaitOvershoot: workload wait.overshoot is the classic heartbeat
// thread's measured wait lateness (harness/testdata/WaitOvershoot.java):
// unwritten, DefaultWaitOvershoot under realistic timing and 0 under
// timing: exact; written, as written under both; refused outside [0, 1 s].
func TestWaitOvershoot(t *testing.T) {
	sc, err := Parse("f.yaml", []byte(minimal))
	require.NoError(t, err)
	g := &sc.Groups[0]
	require.Equal(t, DefaultWaitOvershoot, g.HeartbeatWaitOvershoot(TimingRealistic))
	require.Zero(t, g.HeartbeatWaitOvershoot(TimingExact))

	sc, err = Parse("f.yaml", []byte(minimal+"    workload: {wait.overshoot: 2ms}\n"))
	require.NoError(t, err)
	g = &sc.Groups[0]
	require.Equal(t, 2*time.Millisecond, g.HeartbeatWaitOvershoot(TimingRealistic))
	require.Equal(t, 2*time.Millisecond, g.HeartbeatWaitOvershoot(TimingExact))

	for _, c := range []struct{ v, err string }{
		{"-1ms", "f.yaml:8: groups[0].workload.wait.overshoot: negative duration -1ms"},
		{"2s", "f.yaml:8: groups[0].workload.wait.overshoot: must be between 0s and 1s (how late each heartbeat-thread wait returns; a longer stall is a pause fault)"},
	} {
		_, err = Parse("f.yaml", []byte(minimal+"    workload: {wait.overshoot: "+c.v+"}\n"))
		require.EqualError(t, err, c.err)
	}
}
