package harness

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
)

// BenchmarkEventFloor bounds from below the cost of one event of a large
// world while every trace event is kept in the fingerprint: it does only
// what no model can avoid per event — pop the earliest of `pending` events
// from the kernel queue (the harness's event type and seeded tie-break),
// push its successor a few seconds later, and record one trace event (the
// canonical binary encoding and SHA-256 of the trace hash, as
// recorder.record does) — and nothing of the models: no member, connection
// or coordinator state is touched. `pending` is about the kernel queue's
// length in the 100-, 10,000- and 100,000-member record scenarios (2.35
// pending events per member; BenchmarkRecordEvents reports it); the
// successors are spread uniformly over 0–6 s, the span of the heartbeat
// (3 s), auto-commit (5 s) and poll (100 ms) timers. "queue-mix" is
// "queue" with the successors of the record scenarios' real mix instead
// (measured: the pushes of 1,000 members × 10 min by how far ahead they
// are): 61 % deliveries 0–2 ms ahead, 8.6 % 100 ms (polls), 18.8 % 3 s
// (heartbeats), 11.3 % 5 s (auto-commits), 0.3 % 45 s (session timeouts).
//
// "queue" is the cost of one kernel event, "trace" of one trace event:
// kernel events × queue + trace events × trace (BenchmarkRecordEvents gives
// both counts) is the least wall time a run can take on this machine with
// today's queue and today's trace hash, before any model work (a floor
// for the target of a 10,000-member hour in 15 s). "queue+trace" does one
// of each per iteration. Run:
//
//	go test ./harness -run '^$' -bench EventFloor -benchtime 5000000x
func BenchmarkEventFloor(b *testing.B) {
	ev0 := TraceEvent{At: 0, Corr: 12345, Req: true, Event: protocol.Event{
		Kind: tracing.EvSend, Node: "g-4711", Group: "g", Peer: "broker-1", API: protocol.APIHeartbeat, Gen: 17}}
	for _, pending := range []int{1_000, 25_000, 250_000} {
		for _, what := range []string{"queue", "queue-mix", "trace", "queue+trace"} {
			b.Run(fmt.Sprintf("pending=%d/%s", pending, what), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				q := sim.NewQueue[ev]()
				q.SetKeyer(1, evIdentity)
				span := int64(6 * time.Second)
				for i := 0; i < pending; i++ {
					q.Schedule(sim.Instant(rng.Int64N(span)), ev{kind: evHBTick, idx: int32(i)})
				}
				// Offsets drawn up front: the loop measures the queue, not the
				// random generator.
				offs := make([]sim.Instant, 1<<16)
				for i := range offs {
					offs[i] = sim.Instant(rng.Int64N(span))
					if what != "queue-mix" {
						continue
					}
					switch r := rng.IntN(1000); {
					case r < 610: // a delivery: one-way latency 0–2 ms
						offs[i] = sim.Instant(rng.Int64N(int64(2 * time.Millisecond)))
					case r < 696: // a poll
						offs[i] = sim.Instant(100 * time.Millisecond)
					case r < 884: // a heartbeat
						offs[i] = sim.Instant(3 * time.Second)
					case r < 997: // an auto-commit
						offs[i] = sim.Instant(5 * time.Second)
					default: // a session timeout
						offs[i] = sim.Instant(45 * time.Second)
					}
				}
				rec := newRecorder(nil, false, nil)
				doQueue, doTrace := what != "trace", what == "trace" || what == "queue+trace"
				e := ev0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if doQueue {
						at, v, _ := q.Pop()
						q.Schedule(at+offs[i&(len(offs)-1)], v)
						e.At = at
					} else {
						e.At += 1000
					}
					if doTrace {
						rec.record(&e)
					}
				}
				b.StopTimer()
				require.Len(b, rec.sum(), 64)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
			})
		}
	}
}

// BenchmarkRecordEvents counts the events of the benchmark of record's
// worlds (deterministic: the same numbers on any machine): the trace events
// (each recorded in the trace hash), the kernel events fired (timers and
// deliveries, cancelled timers excluded) and the kernel queue's length at
// the end of the run (pending events, cancelled timers included). With
// BenchmarkEventFloor's ns/event they give the floor of a run's wall time.
// REBALSIM_RECORD adds a custom case as in BenchmarkRecord. Run:
//
//	go test ./harness -run '^$' -bench 'RecordEvents/members=10000$' -benchtime 1x
func BenchmarkRecordEvents(b *testing.B) {
	for _, c := range recordCases(b) {
		b.Run(c.name, func(b *testing.B) {
			sc := recordScenario(b, c.n, c.dur, c.rolling)
			for i := 0; i < b.N; i++ {
				w, err := newWorld(sc, uint64(i+1), Options{})
				require.NoError(b, err)
				w.maxEvents = DefaultMaxEvents
				w.run()
				b.ReportMetric(float64(w.rec.count), "trace-events/run")
				b.ReportMetric(float64(w.q.Fired()), "kernel-events/run")
				b.ReportMetric(float64(w.q.Len()), "queue-len")
				b.ReportMetric(float64(w.rec.count)/(float64(c.n)*sc.Duration.Seconds()), "trace-events/member-s")
			}
		})
	}
}
