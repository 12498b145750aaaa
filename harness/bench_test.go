package harness

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
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

// BenchmarkMemoryPerMember reports live heap bytes per member once the run
// is over (the world still referenced): a 10,000-member steady group after
// 60 s, and the record scenario (Kafka defaults, a crash) at 100,000
// members × 10 min (target: <= 2 KiB per member, so that a 100,000-member
// run fits a laptop). Run:
//
//	go test ./harness -run '^$' -bench MemoryPerMember -benchtime 1x
func BenchmarkMemoryPerMember(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		sc   func() *scenario.Scenario
	}{
		{"steady/members=10000", 10000, func() *scenario.Scenario { return steadyScenario(b, 10000, "60s", "1s") }},
		{"record/members=20000", 20000, func() *scenario.Scenario { return recordScenario(b, 20000, "10m", 0) }},
		{"record/members=100000", 100000, func() *scenario.Scenario { return recordScenario(b, 100000, "10m", 0) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			sc := c.sc()
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
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(c.n), "bytes/member")
				if path := os.Getenv("REBALSIM_HEAP_PROFILE"); path != "" {
					// The live heap with the world still referenced (a
					// -memprofile is written after the world is gone):
					// go tool pprof -sample_index=inuse_space.
					f, err := os.Create(path)
					require.NoError(b, err)
					require.NoError(b, pprof.WriteHeapProfile(f))
					require.NoError(b, f.Close())
				}
				b.ReportMetric(float64(after.Sys)/float64(c.n), "sys-bytes/member")
				b.ReportMetric(float64(c.n)*sc.Duration.Seconds()/b.Elapsed().Seconds()*float64(i+1), "member-s/s")
				require.True(b, w.summary().Groups[0].StableAtEnd)
				runtime.KeepAlive(w)
			}
		})
	}
}

// recordScenario is the benchmark of record (the throughput and memory
// targets are set on it): n members of one
// group with Kafka defaults (kafka-3.x: auto-commit every 5 s, heartbeats
// every 3 s, session 45 s, poll loop every 100 ms), one-way latency uniform
// 0–2 ms, one partition per member, one crash at 60 s and, when rolling is
// non-zero, a rolling restart of the first `rolling` members from 600 s.
func recordScenario(tb testing.TB, n int, dur string, rolling int) *scenario.Scenario {
	tb.Helper()
	src := fmt.Sprintf(`
name: record-%d
duration: %s
coordinator: {brokers: 3, profile: kafka-3.x}
network: {latency: {dist: uniform, min: 0ms, max: 2ms}}
topics: [{name: t, partitions: %d}]
groups:
  - id: g
    members: %d
    subscribe: [t]
    client: {profile: kafka-3.x}
    start: {at: 0s, stagger: 1ms}
faults:
  - {at: 60s, crash: g-1}
`, n, dur, n, n)
	// A rolling restart of `rolling` members: what rolling-restart does
	// (graceful close, new process `downtime` later, one member per
	// interval), spelled as leave/restart pairs because rolling-restart
	// always restarts the whole group.
	for k := 0; k < rolling; k++ {
		src += fmt.Sprintf("  - {at: %dms, leave: g-%d}\n  - {at: %dms, restart: g-%d}\n",
			600000+k*1000, k+2, 602000+k*1000, k+2)
	}
	sc, err := scenario.Parse("bench.yaml", []byte(src))
	require.NoError(tb, err)
	return sc
}

// recordCase is one world of the benchmark of record.
type recordCase struct {
	name       string
	n, rolling int
	dur        string
}

// recordCases are the benchmark of record's worlds: 100 and 1,000 members
// for an hour, and 10,000 for an hour with a rolling restart of 500, plus
// the custom case REBALSIM_RECORD=members,duration,rolling (for profiling,
// e.g. 10000,11m,60: the 10,000-member case's first 60 restarts).
func recordCases(b *testing.B) []recordCase {
	cases := []recordCase{{n: 100, dur: "1h"}, {n: 1000, dur: "1h"}, {n: 10000, rolling: 500, dur: "1h"}}
	if v := os.Getenv("REBALSIM_RECORD"); v != "" {
		var c recordCase
		_, err := fmt.Sscanf(strings.ReplaceAll(v, ",", " "), "%d %s %d", &c.n, &c.dur, &c.rolling)
		require.NoError(b, err, "REBALSIM_RECORD=members,duration,rolling")
		cases = append(cases, c)
	}
	for i := range cases {
		c := &cases[i]
		c.name = fmt.Sprintf("members=%d", c.n)
		if c.dur != "1h" {
			c.name = fmt.Sprintf("custom:members=%d,dur=%s,rolling=%d", c.n, c.dur, c.rolling)
		}
	}
	return cases
}

// BenchmarkRecord is the benchmark of record (targets: >= 1 M
// member-s/s at 1,000 members, >= 2 M at 100, 10,000 members × 1 h with a
// rolling restart of 5 % in <= 15 s). Run:
//
//	go test ./harness -run '^$' -bench '^BenchmarkRecord$' -benchtime 3x -count 3
func BenchmarkRecord(b *testing.B) {
	for _, c := range recordCases(b) {
		name := c.name
		b.Run(name, func(b *testing.B) {
			sc := recordScenario(b, c.n, c.dur, c.rolling)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			var events int64
			for i := 0; i < b.N; i++ {
				res, err := Run(sc, uint64(i+1), Options{})
				require.NoError(b, err)
				events += res.Summary.Events
			}
			cpu := cpuSeconds() - cpu0
			memberSeconds := float64(c.n) * sc.Duration.Seconds() * float64(b.N)
			b.ReportMetric(memberSeconds/b.Elapsed().Seconds(), "member-s/s")
			// On a shared machine wall time includes waiting for a core;
			// process CPU time (user+sys, GC included) does not.
			b.ReportMetric(memberSeconds/cpu, "member-s/cpu-s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall-s/run")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/trace-event")
		})
	}
}

// cpuSeconds is the process's CPU time so far (user + system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
