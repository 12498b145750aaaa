package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestHeartbeatWaitOvershoot: the classic heartbeat thread waits
// retry.backoff.ms in every idle iteration and goes into a fresh wait right
// after sending a heartbeat (AbstractCoordinator.HeartbeatThread.run
// @3.9.0-rc3), so its grid restarts at each heartbeat and every wait
// returns a little late (scenario.DefaultWaitOvershoot, 0.47 ms: the
// median per wait of the real client's heartbeat gaps at low load,
// results/calibration/real). A heartbeat every 3000 ms with retry.backoff.ms 100 then goes
// out every 30 waits: 3000 ms + 30 × the overshoot. Exactly 3000 ms under
// timing: exact. Before the fix the grid was fixed and the wait exact:
// always 3000 ms.
func TestHeartbeatWaitOvershoot(t *testing.T) {
	const base = `name: overshoot
duration: 60s
timing: realistic
coordinator: {brokers: 1, profile: kafka-3.x}
topics: [{name: t, partitions: 4}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.x, heartbeat.interval.ms: 3000, retry.backoff.ms: 100}
    workload: {poll.interval: 50ms}
    start: {at: 0s, stagger: 10ms}
`
	// gap is the median interval between g-0's heartbeats after the group
	// formed.
	gap := func(t *testing.T, src string, seed uint64) time.Duration {
		sc := simtest.Parse(t, src)
		res := run(t, sc, seed, Options{KeepTrace: true})
		var sends []time.Duration
		for _, e := range res.Trace {
			if e.Kind == tracing.EvSend && e.Node == "g-0" && e.API == protocol.APIHeartbeat && e.At > protocol.Instant(10*time.Second) {
				sends = append(sends, time.Duration(e.At))
			}
		}
		require.Greater(t, len(sends), 10, "seed %d: g-0 heartbeats", seed)
		var gaps []time.Duration
		for i := 1; i < len(sends); i++ {
			gaps = append(gaps, sends[i]-sends[i-1])
		}
		slices.Sort(gaps)
		return gaps[len(gaps)/2]
	}
	for seed := uint64(1); seed <= 3; seed++ {
		require.Equal(t, 3*time.Second+30*scenario.DefaultWaitOvershoot, gap(t, base, seed), "realistic, default overshoot, seed %d", seed)
		written := strings.Replace(base, "poll.interval: 50ms}", "poll.interval: 50ms, wait.overshoot: 1ms}", 1)
		require.Equal(t, 3030*time.Millisecond, gap(t, written, seed), "wait.overshoot: 1ms, seed %d", seed)
		exact := strings.Replace(base, "timing: realistic\n", "timing: exact\n", 1)
		require.Equal(t, 3*time.Second, gap(t, exact, seed), "timing: exact, seed %d", seed)
	}
}
