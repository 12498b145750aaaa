package sim

import (
	"fmt"
	"testing"
)

// BenchmarkKernelScheduleFire measures events per second for schedule + fire
// (one Pop and one Schedule per event, with the seeded tie-break) at a steady
// population of pending events: roughly 3 per member, so 3,000 pending is a
// 1,000-member world. Target (foundation issue): >= 10 M events/s on one core.
func BenchmarkKernelScheduleFire(b *testing.B) {
	for _, pending := range []int{100, 3000, 30000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			q := NewQueue[uint32]()
			q.SetKeyer(1, func(_ Instant, v uint32) uint64 { return uint64(v) })
			r := NewStreams(1).Stream("bench")
			for i := 0; i < pending; i++ {
				q.Schedule(Instant(r.IntN(3_000_000)), uint32(i))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				at, v, _ := q.Pop()
				q.Schedule(at+Instant(1+int(v)*7919%3_000_000), v)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
		})
	}
}

// BenchmarkTimerRearm measures re-arming a timer before it fires (the
// heartbeat-deadline pattern), including skipping the superseded entries.
func BenchmarkTimerRearm(b *testing.B) {
	q := NewQueue[uint32]()
	timers := make([]Timer, 1000)
	for i := range timers {
		q.Arm(&timers[i], Instant(i), uint32(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at, v, _ := q.Pop()
		q.Arm(&timers[v], at+2000, v)
		q.Arm(&timers[(v+7)%1000], at+3000, (v+7)%1000)
	}
}
