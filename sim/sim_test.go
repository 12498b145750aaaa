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
	q := NewQueue[int]()
	for i, at := range []Instant{30, 10, 20, 10, 0} {
		q.Schedule(at, i)
	}
	var got []int
	q.Run(Budget{Until: Never}, func(now Instant, v int) { got = append(got, v) })
	// Without a keyer equal times fire in insertion order.
	assert.Equal(t, []int{4, 1, 3, 2, 0}, got)
}

func TestQueueTieBreakDependsOnSeed(t *testing.T) {
	order := func(seed uint64) []int {
		q := NewQueue[int]()
		q.SetKeyer(seed, func(_ Instant, v int) uint64 { return uint64(v) })
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
	q := NewQueue[int]()
	q.SetKeyer(1, func(_ Instant, v int) uint64 { return uint64(v) })
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
	q := NewQueue[string]()
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
	q := NewQueue[int]()
	var fire func(now Instant, v int)
	fire = func(now Instant, v int) { q.Schedule(now+10, v+1) } // a self-rescheduling ticker
	q.Schedule(0, 0)
	assert.Equal(t, TimeBudget, q.Run(Budget{Until: 95}, fire))
	assert.Equal(t, Instant(95), q.Now())
	assert.Equal(t, uint64(10), q.Fired())
	assert.Equal(t, EventBudget, q.Run(Budget{Until: Never, MaxEvents: 15}, fire))
	assert.Equal(t, uint64(15), q.Fired())
	q2 := NewQueue[int]()
	q2.Schedule(1, 1)
	assert.Equal(t, Quiescent, q2.Run(Budget{Until: Never}, func(Instant, int) {}))
}

func TestScheduleInPastPanics(t *testing.T) {
	q := NewQueue[int]()
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

// TestKeyerOrderIndependentOfOtherEvents: with SetKeyer, the order of two
// simultaneous events depends on the seed and on their identities only, not
// on how many other events were scheduled (a draw per event would shift).
func TestKeyerOrderIndependentOfOtherEvents(t *testing.T) {
	order := func(seed uint64, noise int) []int {
		q := NewQueue[int]()
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
	q := NewQueue[int]()
	q.SetKeyer(3, func(Instant, int) uint64 { return 7 })
	for i := 0; i < 5; i++ {
		q.Schedule(1, i)
	}
	var got []int
	q.Run(Budget{Until: Never}, func(_ Instant, v int) { got = append(got, v) })
	assert.Equal(t, []int{0, 1, 2, 3, 4}, got)
	// TieKey predicts the key of an event that was never scheduled.
	q2 := NewQueue[int]()
	q2.SetKeyer(3, func(_ Instant, v int) uint64 { return uint64(v) })
	q2.Schedule(9, 4)
	q2.Pop()
	assert.Equal(t, q2.TieKey(9, 4), q2.CurrentTieKey())
}

func TestRunStop(t *testing.T) {
	q := NewQueue[int]()
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

// TestTimersMatchReferenceModel re-arms, cancels and fires timers at random
// and checks every pop against a reference (the live timer with the least
// (deadline, arming order)): the queue's dead marks for superseded entries
// and its bottom-up pop keep exactly that order.
func TestTimersMatchReferenceModel(t *testing.T) {
	r := NewStreams(7).Stream("ops")
	q := NewQueue[int]()
	timers := make([]Timer, 40)
	type live struct {
		at  Instant
		seq int
	}
	ref := map[int]live{}
	seq := 0
	for op := 0; op < 50000; op++ {
		i := r.IntN(len(timers))
		switch k := r.IntN(10); {
		case k < 5:
			at := q.Now() + Instant(r.IntN(50))
			q.Arm(&timers[i], at, i)
			seq++
			ref[i] = live{at, seq}
		case k < 7:
			q.Cancel(&timers[i])
			delete(ref, i)
		default:
			want, wantOK := -1, false
			for j, l := range ref {
				if !wantOK || l.at < ref[want].at || (l.at == ref[want].at && l.seq < ref[want].seq) {
					want, wantOK = j, true
				}
			}
			at, v, ok := q.Pop()
			require.Equal(t, wantOK, ok, "op %d", op)
			if ok {
				require.Equal(t, want, v, "op %d", op)
				require.Equal(t, ref[want].at, at, "op %d", op)
				_, armed := timers[v].Armed()
				require.False(t, armed)
				delete(ref, v)
			}
		}
	}
}
