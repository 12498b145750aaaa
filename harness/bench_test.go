package harness

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// steadyScenario is a group of n members heartbeating for dur with no
// faults: the whole-run throughput and memory benchmarks use it.
func steadyScenario(tb testing.TB, n int, dur, poll string) *scenario.Scenario {
	tb.Helper()
	src := fmt.Sprintf(`
name: steady-%d
duration: %s
coordinator: {brokers: 3, profile: kafka-3.x}
topics: [{name: t, partitions: %d}]
groups:
  - id: g
    members: %d
    subscribe: [t]
    client: {profile: kafka-3.x, session.timeout.ms: 45000, heartbeat.interval.ms: 3000}
    workload: {poll.interval: %s, poll.timeout: %s}
    start: {at: 0s, stagger: 1ms}
`, n, dur, n, n, poll, poll)
	sc, err := scenario.Parse("bench.yaml", []byte(src))
	require.NoError(tb, err)
	return sc
}

// BenchmarkWholeRun reports simulated member-seconds per wall-second for a
// 100- and a 1,000-member group heartbeating for one simulated hour
// (foundation issue target: >= 1 M member-s/s). The application poll loop
// runs at poll.interval; "poll=100ms" is the scenario default, "poll=5s" a
// batch consumer whose cost is dominated by heartbeats.
func BenchmarkWholeRun(b *testing.B) {
	for _, n := range []int{100, 1000} {
		for _, poll := range []string{"100ms", "5s"} {
			b.Run(fmt.Sprintf("members=%d/poll=%s", n, poll), func(b *testing.B) {
				sc := steadyScenario(b, n, "1h", poll)
				b.ResetTimer()
				var events int64
				for i := 0; i < b.N; i++ {
					res, err := Run(sc, uint64(i+1), Options{})
					require.NoError(b, err)
					events += res.Summary.Events
				}
				memberSeconds := float64(n) * sc.Duration.Seconds() * float64(b.N)
				b.ReportMetric(memberSeconds/b.Elapsed().Seconds(), "member-s/s")
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "trace-events/s")
			})
		}
	}
}

// BenchmarkMemoryPerMember reports live heap bytes per member of a
// 10,000-member group once it is Stable (target <= 4 KiB).
func BenchmarkMemoryPerMember(b *testing.B) {
	const n = 10000
	sc := steadyScenario(b, n, "60s", "1s")
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		w, err := newWorld(sc, 1, Options{})
		require.NoError(b, err)
		w.run()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "bytes/member")
		require.True(b, w.summary().Groups[0].StableAtEnd)
		runtime.KeepAlive(w)
	}
}
