package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestLeaveWaitsForTheProcessingStep: a leave is the application's
// shutdown (KafkaConsumer javadoc @3.9.0-rc3, "Multi-threaded Processing":
// wakeup() from another thread, close() on the polling thread once poll()
// throws WakeupException), so a member processing records leaves at the end
// of the step it is in: the time left of a step caught at a random instant,
// whose mean is E[X²]/2E[X] = 435 ms for the default poll.interval
// (lognormal, median 200 ms, p99 2 s; vtime/residual.go), so the mean over
// 60 seeds must fall well inside (250 ms, 700 ms) and far from the 0 ms of a
// leave at the fault's instant (a real SIGTERM → LeaveGroup measurement is
// not in the repository). A member blocked in poll() (it owns nothing)
// leaves at once.
func TestLeaveWaitsForTheProcessingStep(t *testing.T) {
	const src = `name: shutdown
duration: 40s
timing: realistic
coordinator: {brokers: 1, profile: kafka-4.3}
topics: [{name: t, partitions: %d}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-4.3, group.protocol: %s, enable.auto.commit: false}
    workload: {callback.time: 0ms}
    start: {at: 0s, stagger: 10ms}
faults: [{at: 20s, leave: g-%d}]
`
	// delay is the time from the leave fault to the member's leave.
	delay := func(t *testing.T, proto string, partitions, member int, seed uint64) time.Duration {
		node := fmt.Sprintf("g-%d", member)
		return traceSpan(t, fmt.Sprintf(src, partitions, proto, member), seed, func(e *TraceEvent) bool {
			return e.Kind == tracing.EvFault && e.Reason == "leave" && e.Detail == node
		}, func(e *TraceEvent) bool {
			return e.Kind == protocol.EvLeave && e.Node == node
		})
	}
	for _, proto := range []string{"classic", "consumer"} {
		t.Run(proto+": the processing step ends first", func(t *testing.T) {
			const seeds = 60
			var sum time.Duration
			for seed := uint64(1); seed <= seeds; seed++ {
				d := delay(t, proto, 6, 1, seed)
				require.GreaterOrEqual(t, d, time.Duration(0))
				sum += d
			}
			mean := sum / seeds
			t.Logf("%s: mean fault → leave %v over %d seeds (E[X²]/2E[X] = 435 ms)", proto, mean, seeds)
			require.Greater(t, mean, 250*time.Millisecond)
			require.Less(t, mean, 700*time.Millisecond)
		})
		t.Run(proto+": blocked in poll(), at once", func(t *testing.T) {
			// 3 members, 1 partition: two of them own nothing, and those
			// two leave within the fault's millisecond.
			for seed := uint64(1); seed <= 5; seed++ {
				atOnce := 0
				for member := range 3 {
					if delay(t, proto, 1, member, seed) < time.Millisecond {
						atOnce++
					}
				}
				require.GreaterOrEqual(t, atOnce, 2, "seed %d", seed)
			}
		})
	}
}
