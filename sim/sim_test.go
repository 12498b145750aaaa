// Tests of the kernel with toy messages: the queue's total order, timers,
// budgets, stream independence, distributions and the network's fault model.
package sim

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQueueOrdersByTimeThenKeyThenSeq(t *testing.T) {
	q := NewQueue[int](nil)
	for i, at := range []Instant{30, 10, 20, 10, 0} {
		q.Schedule(at, i)
	}
	var got []int
	q.Run(Budget{Until: Never}, func(now Instant, v int) { got = append(got, v) })
	// Without a tie-break stream equal times fire in insertion order.
	assert.Equal(t, []int{4, 1, 3, 2, 0}, got)
}

func TestQueueTieBreakDependsOnSeed(t *testing.T) {
	order := func(seed uint64) []int {
		q := NewQueue[int](NewStreams(seed).Stream("queue"))
		for i := 0; i < 20; i++ {
			q.Schedule(5, i)
		}
		var got []int
		q.Run(Budget{Until: Never}, func(_ Instant, v int) { got = append(got, v) })
		return got
	}
	assert.Equal(t, order(1), order(1), "same seed, same interleaving")
	assert.NotEqual(t, order(1), order(2), "different seeds explore other interleavings")
	sorted := order(3)
	sort.Ints(sorted)
	assert.Equal(t, 19, sorted[19])
}

func TestQueueRandomScheduleIsSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := NewQueue[int](r)
	for i := 0; i < 10000; i++ {
		q.Schedule(Instant(r.IntN(1000)), i)
	}
	last := Instant(-1)
	n := 0
	q.Run(Budget{Until: Never}, func(now Instant, _ int) {
		require.GreaterOrEqual(t, now, last)
		last = now
		n++
	})
	assert.Equal(t, 10000, n)
}

func TestTimerCancelAndRearm(t *testing.T) {
	q := NewQueue[string](nil)
	var a, b Timer
	q.Arm(&a, 10, "a@10")
	q.Arm(&b, 20, "b@20")
	q.Arm(&a, 30, "a@30") // re-arm supersedes a@10
	q.Cancel(&b)
	at, armed := a.Armed()
	assert.True(t, armed)
	assert.Equal(t, Instant(30), at)
	_, armed = b.Armed()
	assert.False(t, armed)
	var got []string
	q.Run(Budget{Until: Never}, func(_ Instant, v string) { got = append(got, v) })
	assert.Equal(t, []string{"a@30"}, got)
	_, armed = a.Armed()
	assert.False(t, armed, "a fired timer is disarmed")
	assert.Equal(t, uint64(1), q.Fired())
}

func TestRunBudgets(t *testing.T) {
	q := NewQueue[int](nil)
	var fire func(now Instant, v int)
	fire = func(now Instant, v int) { q.Schedule(now+10, v+1) } // a self-rescheduling ticker
	q.Schedule(0, 0)
	assert.Equal(t, TimeBudget, q.Run(Budget{Until: 95}, fire))
	assert.Equal(t, Instant(95), q.Now())
	assert.Equal(t, uint64(10), q.Fired())
	assert.Equal(t, EventBudget, q.Run(Budget{Until: Never, MaxEvents: 15}, fire))
	assert.Equal(t, uint64(15), q.Fired())
	q2 := NewQueue[int](nil)
	q2.Schedule(1, 1)
	assert.Equal(t, Quiescent, q2.Run(Budget{Until: Never}, func(Instant, int) {}))
}

func TestScheduleInPastPanics(t *testing.T) {
	q := NewQueue[int](nil)
	q.Schedule(10, 1)
	q.Pop()
	assert.Panics(t, func() { q.Schedule(5, 2) })
}

func TestStreamsAreIndependentAndReproducible(t *testing.T) {
	s := NewStreams(42)
	a1, a2 := s.Stream("member/a"), s.Stream("member/a")
	b := s.Stream("member/b")
	for i := 0; i < 100; i++ {
		x := a1.Uint64()
		assert.Equal(t, x, a2.Uint64())
		assert.NotEqual(t, x, b.Uint64())
	}
	assert.NotEqual(t, NewStreams(1).Stream("x").Uint64(), NewStreams(2).Stream("x").Uint64())
}

func TestDistributions(t *testing.T) {
	r := NewStreams(7).Stream("dist")
	const n = 20000
	draw := func(d Dist) []time.Duration {
		xs := make([]time.Duration, n)
		for i := range xs {
			xs[i] = d.Draw(r)
		}
		slices.Sort(xs)
		return xs
	}
	assert.Equal(t, 3*time.Millisecond, Constant(3*time.Millisecond).Draw(r))

	u := draw(Uniform{Min: time.Millisecond, Max: 5 * time.Millisecond})
	assert.GreaterOrEqual(t, u[0], time.Millisecond)
	assert.LessOrEqual(t, u[n-1], 5*time.Millisecond)
	assert.InDelta(t, float64(3*time.Millisecond), float64(u[n/2]), float64(100*time.Microsecond))

	e := draw(Exponential{Min: time.Millisecond, Mean: 3 * time.Millisecond})
	assert.GreaterOrEqual(t, e[0], time.Millisecond)
	var sum time.Duration
	for _, x := range e {
		sum += x
	}
	assert.InDelta(t, float64(3*time.Millisecond), float64(sum/n), float64(150*time.Microsecond))

	l := draw(Lognormal{Median: 2 * time.Millisecond, P99: 40 * time.Millisecond})
	assert.InDelta(t, float64(2*time.Millisecond), float64(l[n/2]), float64(150*time.Microsecond))
	assert.InDelta(t, float64(40*time.Millisecond), float64(l[n*99/100]), float64(6*time.Millisecond))
}

type toy struct{ n int }

func TestNetworkFIFOPerConnection(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Uniform{Min: 1, Max: 1000}, 0)
	last := Instant(0)
	for i := 0; i < 1000; i++ {
		d, why := net.Send(Instant(i), 1, 2, toy{i})
		require.Equal(t, NotDropped, why)
		require.GreaterOrEqual(t, d.At, last, "message %d overtook an earlier one", i)
		last = d.At
	}
}

func TestNetworkLoss(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Constant(time.Millisecond), 0.25)
	lost := 0
	for i := 0; i < 10000; i++ {
		if _, why := net.Send(0, 1, 2, toy{i}); why == DropLoss {
			lost++
		}
	}
	assert.InDelta(t, 2500, lost, 200)
}

func TestNetworkPartitionAndHeal(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Constant(10), 0)
	inflight, why := net.Send(0, 1, 2, toy{1})
	require.Equal(t, NotDropped, why)
	net.Cut(1, 2) // one way
	_, why = net.Send(1, 1, 2, toy{2})
	assert.Equal(t, DropPartition, why)
	assert.Equal(t, DropPartition, net.Accept(&inflight), "in-flight messages on a cut path are lost")
	_, why = net.Send(1, 2, 1, toy{3})
	assert.Equal(t, NotDropped, why, "the other direction still works")
	net.Heal(1, 2)
	_, why = net.Send(2, 1, 2, toy{4})
	assert.Equal(t, NotDropped, why)
}

func TestNetworkResetDropsInFlightBothWays(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Constant(10), 0)
	a, _ := net.Send(0, 1, 2, toy{1})
	b, _ := net.Send(0, 2, 1, toy{2})
	other, _ := net.Send(0, 1, 3, toy{3})
	net.Reset(2, 1)
	assert.Equal(t, DropReset, net.Accept(&a))
	assert.Equal(t, DropReset, net.Accept(&b))
	assert.Equal(t, NotDropped, net.Accept(&other), "other connections are unaffected")
	c, _ := net.Send(1, 1, 2, toy{4})
	assert.Equal(t, NotDropped, net.Accept(&c), "a new message uses the new connection")
}

func TestNetworkFilter(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Constant(10), 0)
	net.SetFilter(func(_ Instant, from, to NodeID, m toy) Verdict {
		return Verdict{Drop: m.n%2 == 0, Delay: 5}
	})
	_, why := net.Send(0, 1, 2, toy{2})
	assert.Equal(t, DropFilter, why)
	d, why := net.Send(0, 1, 2, toy{3})
	assert.Equal(t, NotDropped, why)
	assert.Equal(t, Instant(15), d.At)
}

// TestKeyerOrderIndependentOfOtherEvents: with SetKeyer, the order of two
// simultaneous events depends on the seed and on their identities only, not
// on how many other events were scheduled (the tie-break stream would shift).
func TestKeyerOrderIndependentOfOtherEvents(t *testing.T) {
	order := func(seed uint64, noise int) []int {
		q := NewQueue[int](nil)
		q.SetKeyer(seed, func(_ Instant, v int) uint64 { return uint64(v) })
		for i := 0; i < noise; i++ {
			q.Schedule(1, 1000+i)
		}
		for i := 0; i < 10; i++ {
			q.Schedule(5, i)
		}
		var got []int
		q.Run(Budget{Until: Never}, func(_ Instant, v int) {
			if v < 1000 {
				got = append(got, v)
			}
		})
		return got
	}
	assert.Equal(t, order(1, 0), order(1, 37), "other events do not reshuffle ties")
	assert.NotEqual(t, order(1, 0), order(2, 0), "the seed decides the interleaving")
	// Equal identities keep insertion order (FIFO per connection).
	q := NewQueue[int](nil)
	q.SetKeyer(3, func(Instant, int) uint64 { return 7 })
	for i := 0; i < 5; i++ {
		q.Schedule(1, i)
	}
	var got []int
	q.Run(Budget{Until: Never}, func(_ Instant, v int) { got = append(got, v) })
	assert.Equal(t, []int{0, 1, 2, 3, 4}, got)
	// TieKey predicts the key of an event that was never scheduled.
	q2 := NewQueue[int](nil)
	q2.SetKeyer(3, func(_ Instant, v int) uint64 { return uint64(v) })
	q2.Schedule(9, 4)
	q2.Pop()
	assert.Equal(t, q2.TieKey(9, 4), q2.CurrentTieKey())
}

func TestNetworkBandwidthSerialisesSenderEgress(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Constant(time.Millisecond), 0)
	net.SetBandwidth(1000, func(m toy) int { return m.n }) // 1000 B/s
	a, _ := net.Send(0, 1, 2, toy{500})                    // 0.5 s on the wire
	b, _ := net.Send(0, 1, 3, toy{100})                    // queued behind a: 0.6 s
	c, _ := net.Send(0, 4, 2, toy{100})                    // another sender: 0.1 s
	assert.Equal(t, Instant(500*time.Millisecond+time.Millisecond), a.At)
	assert.Equal(t, Instant(600*time.Millisecond+time.Millisecond), b.At)
	assert.Equal(t, Instant(100*time.Millisecond+time.Millisecond), c.At)
}

func TestNetworkRetransmitTurnsLossIntoDelay(t *testing.T) {
	net := NewNetwork[toy](NewStreams(1).Stream("net"), Constant(time.Millisecond), 0.5)
	net.SetRetransmit(200*time.Millisecond, 6)
	delayed, dropped := 0, 0
	for i := 0; i < 2000; i++ {
		d, why := net.Send(Instant(i)*Instant(time.Hour), 1, 2, toy{i})
		switch {
		case why == DropLoss:
			dropped++
		case d.At-Instant(i)*Instant(time.Hour) > Instant(time.Millisecond):
			delayed++
			// one or more RTOs: 200 ms, then 200+400, ...
			extra := time.Duration(d.At-Instant(i)*Instant(time.Hour)) - time.Millisecond
			assert.Contains(t, []time.Duration{200, 600, 1400, 3000, 6200, 12600}, extra/time.Millisecond)
		}
	}
	assert.InDelta(t, 1000, delayed, 100, "about half the messages are lost once or more")
	assert.InDelta(t, 2000.0/128, dropped, 15, "dropped only after 7 consecutive losses (0.5^7)")
}

func TestRunStop(t *testing.T) {
	q := NewQueue[int](nil)
	for i := 0; i < 10; i++ {
		q.Schedule(Instant(i), i)
	}
	n := 0
	reason := q.Run(Budget{Until: Never}, func(_ Instant, v int) {
		n++
		if v == 3 {
			q.Stop()
		}
	})
	assert.Equal(t, Stopped, reason)
	assert.Equal(t, 4, n)
	assert.Equal(t, Quiescent, q.Run(Budget{Until: Never}, func(Instant, int) {}), "a later Run continues")
}
