package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
)

// TestKRaftFencePhase: in KRaft mode the controller fences a dead broker
// broker.session.timeout.ms after its last heartbeat, not after its death
// (BrokerHeartbeatManager.nextCheckTimeNs, QuorumController
// .rescheduleMaybeFenceStaleBrokers @3.9.0-rc3), and brokers heartbeat every
// broker.heartbeat.interval.ms, so under realistic timing the coordinator
// role moves 7–9 s after the coordinator's broker is killed, at a phase that
// varies over seeds (measured: a silent host fenced after 8.4 s on 3.9.1,
// docs/real-kafka-testbed.md §9);
// exactly 9 s under timing: exact; a written failover.delay exactly as
// written. Before the fix the delay was always 9 s.
func TestKRaftFencePhase(t *testing.T) {
	const base = `name: fence
duration: 60s
coordinator: {brokers: 3, profile: kafka-3.x%s}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-3.x}
    start: {at: 0s, stagger: 10ms}
faults: [{at: 20s, crash: broker-0}]
`
	// delay is the time from broker-0's death to its group's coordinator
	// moving (broker-0 is g's coordinator with 3 brokers).
	delay := func(t *testing.T, src string, seed uint64) time.Duration {
		return traceSpan(t, src, seed, func(e *TraceEvent) bool {
			return e.Kind == tracing.EvBrokerProcess && e.Node == "broker-0" && e.State == "crashed"
		}, func(e *TraceEvent) bool {
			return e.Kind == tracing.EvBrokerRole && e.Peer == "broker-0"
		})
	}
	realistic := func(extra string) string {
		return "timing: realistic\n" + strings.Replace(base, "%s", extra, 1)
	}
	t.Run("realistic: 9 s minus a phase over 2 s", func(t *testing.T) {
		seen := map[time.Duration]bool{}
		lo, hi := time.Hour, time.Duration(0)
		for seed := uint64(1); seed <= 20; seed++ {
			d := delay(t, realistic(""), seed)
			require.Greater(t, d, 7*time.Second, "seed %d", seed)
			require.LessOrEqual(t, d, 9*time.Second, "seed %d", seed)
			seen[d] = true
			lo, hi = min(lo, d), max(hi, d)
		}
		require.Greater(t, len(seen), 10, "the phase varies over seeds")
		require.Greater(t, hi-lo, time.Second, "spread over the heartbeat interval: %v..%v", lo, hi)
	})
	t.Run("broker.heartbeat.interval.ms bounds the phase", func(t *testing.T) {
		for seed := uint64(1); seed <= 10; seed++ {
			d := delay(t, realistic(", broker.heartbeat.interval.ms: 500"), seed)
			require.Greater(t, d, 8500*time.Millisecond, "seed %d", seed)
			require.LessOrEqual(t, d, 9*time.Second, "seed %d", seed)
		}
	})
	t.Run("timing: exact fences after the whole session", func(t *testing.T) {
		require.Equal(t, 9*time.Second, delay(t, strings.Replace(base, "%s", "", 1), 1))
	})
	t.Run("a written failover.delay is kept as written", func(t *testing.T) {
		for seed := uint64(1); seed <= 5; seed++ {
			require.Equal(t, 5*time.Second, delay(t, realistic(", failover.delay: 5s"), seed), "seed %d", seed)
		}
	})
}
