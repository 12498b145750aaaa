package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// oneHeap is the queue as it was before the calendar (kept as the
// reference: the simplest queue that is obviously right): every entry
// in one 4-ary min-heap, cancelled timers marked dead in the slot table and
// skipped at the top. TestQueueMatchesOneHeap holds the calendar queue to
// its sequence of pops.
type oneHeap struct {
	heap    []entry
	slots   []slot[int]
	free    []uint32
	seq     uint64
	now     Instant
	keyer   func(Instant, int) uint64
	keySeed uint64
	curKey  uint64
}

func (q *oneHeap) key(at Instant, v int) uint64 {
	q.seq++
	hi := q.seq
	if q.keyer != nil {
		hi = splitmix(q.keySeed^q.keyer(at, v)^uint64(at)*0x9e3779b97f4a7c15) >> 32
	}
	return hi<<32 | q.seq&0xffffffff
}

func (q *oneHeap) push(at Instant, t *Timer, v int) uint32 {
	if at < q.now {
		panic("past")
	}
	var s uint32
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[s] = slot[int]{timer: t, val: v}
	} else {
		s = uint32(len(q.slots))
		q.slots = append(q.slots, slot[int]{timer: t, val: v})
	}
	q.heap = append(q.heap, entry{at: at, key: q.key(at, v), slot: s})
	up(q.heap, len(q.heap)-1)
	return s
}

func (q *oneHeap) arm(t *Timer, at Instant, v int) {
	q.cancel(t)
	t.used, t.at = true, at
	t.slot = q.push(at, t, v)
}

func (q *oneHeap) cancel(t *Timer) {
	if _, armed := t.Armed(); armed {
		q.slots[t.slot].timer = deadTimer
	}
	t.used, t.at = true, Never
}

// popTop removes the heap's top (sift down from the root).
func (q *oneHeap) popTop() entry {
	h := q.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	q.heap = h
	i := 0
	for {
		m := i
		for c := 4*i + 1; c <= 4*i+4 && c < n; c++ {
			if h[c].less(&h[m]) {
				m = c
			}
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.slots[top.slot] = slot[int]{}
	q.free = append(q.free, top.slot)
	return top
}

func (q *oneHeap) next() Instant {
	for len(q.heap) > 0 {
		if q.slots[q.heap[0].slot].timer == deadTimer {
			q.popTop()
			continue
		}
		return q.heap[0].at
	}
	return Never
}

func (q *oneHeap) pop() (Instant, int, bool) {
	if q.next() == Never {
		return 0, 0, false
	}
	sl := q.slots[q.heap[0].slot]
	if sl.timer != nil {
		sl.timer.at = Never
	}
	e := q.popTop()
	q.now, q.curKey = e.at, e.key
	return e.at, sl.val, true
}

// TestQueueMatchesOneHeap runs random workloads on the calendar queue and on
// oneHeap and requires the same sequence of pops, clocks and tie-keys:
// deliveries 0–2 ms ahead, events at exactly now (whose keys may be below
// the current one), timers 100 ms–45 s ahead (re-armed and cancelled at
// random), events beyond the ring (minutes to hours ahead, and at Never),
// time budgets that move the clock past empty stretches, and long idle gaps
// that leave the ring empty. With and without a keyer.
func TestQueueMatchesOneHeap(t *testing.T) {
	for _, c := range []struct {
		name  string
		keyed bool
		seed  uint64
		ops   int
		dense bool // most events within a few fine buckets of now
	}{{"insertion-order", false, 1, 200_000, false}, {"keyed", true, 2, 200_000, false}, {"keyed-2", true, 3, 200_000, false},
		{"dense", true, 4, 200_000, true}, {"dense-insertion-order", false, 5, 200_000, true}} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(c.seed, 99))
			q := NewQueue[int]()
			ref := &oneHeap{}
			if c.keyed {
				id := func(_ Instant, v int) uint64 { return uint64(v % 97) } // many equal keys
				q.SetKeyer(c.seed, id)
				ref.keyer, ref.keySeed = id, splitmix(c.seed^0x6a09e667f3bcc908)
			}
			const nt = 300
			qt, rt := make([]Timer, nt), make([]Timer, nt)
			pending := 0
			ahead := func() Instant {
				if c.dense && r.IntN(4) != 0 {
					return Instant(r.Int64N(int64(40 * time.Microsecond)))
				}
				switch k := r.IntN(100); {
				case k < 5:
					return 0 // exactly now
				case k < 60:
					return Instant(r.Int64N(int64(2 * time.Millisecond)))
				case k < 64:
					return Instant(r.Int64N(int64(50 * time.Millisecond))) // a few buckets
				case k < 94:
					return Instant(100*time.Millisecond) + Instant(r.Int64N(int64(45*time.Second)))
				case k < 98:
					return Instant(time.Minute) + Instant(r.Int64N(int64(time.Hour))) // beyond the ring
				default: // on (or one before) a fine or ring bucket's edge
					shift := []int{fineShift, coarseShift}[r.IntN(2)]
					now := q.Now()
					edge := (now>>shift+1+Instant(r.IntN(300)))<<shift - Instant(r.IntN(2))
					return edge - now
				}
			}
			for op := 0; op < c.ops; op++ {
				now := q.Now()
				require.Equal(t, ref.now, now)
				switch k := r.IntN(100); {
				case k < 30 || pending < 5:
					at, v := now+ahead(), r.IntN(1000)
					if r.IntN(500) == 0 {
						at = Never
					}
					q.Schedule(at, v)
					ref.push(at, nil, v)
					pending++
				case k < 45:
					i := r.IntN(nt)
					at := now + ahead()
					q.Arm(&qt[i], at, 1000+i)
					ref.arm(&rt[i], at, 1000+i)
					pending++
				case k < 50:
					i := r.IntN(nt)
					q.Cancel(&qt[i])
					ref.cancel(&rt[i])
				case k < 51:
					// A time budget: the clock moves to until, maybe past
					// empty buckets and a reached one.
					until := now + Instant(r.Int64N(int64(10*time.Second)))
					if r.IntN(20) == 0 {
						until = now + Instant(r.Int64N(int64(2*time.Hour)))
					}
					var got []int
					q.Run(Budget{Until: until, MaxEvents: q.Fired() + uint64(r.IntN(5))}, func(_ Instant, v int) { got = append(got, v) })
					for _, v := range got {
						_, rv, ok := ref.pop()
						require.True(t, ok)
						require.Equal(t, rv, v, "op %d", op)
						pending--
					}
					require.Equal(t, ref.curKey, q.curKey, "op %d", op)
					if q.Now() > ref.now { // TimeBudget moved the clock
						ref.now = q.Now()
					}
					require.Equal(t, ref.next(), q.Next(), "op %d", op)
				default:
					require.Equal(t, ref.next(), q.Next(), "op %d", op)
					at, v, ok := q.Pop()
					rat, rv, rok := ref.pop()
					require.Equal(t, rok, ok, "op %d", op)
					require.Equal(t, rat, at, "op %d", op)
					require.Equal(t, rv, v, "op %d", op)
					require.Equal(t, ref.curKey, q.curKey, "op %d", op)
					if ok {
						pending--
					} else {
						pending = 0
					}
					if v >= 1000 {
						_, armed := qt[v-1000].Armed()
						require.False(t, armed)
					}
				}
				require.Equal(t, len(ref.heap), q.Len(), "op %d", op)
			}
			// Drain both.
			for {
				at, v, ok := q.Pop()
				rat, rv, rok := ref.pop()
				require.Equal(t, rok, ok)
				if !ok {
					break
				}
				require.Equal(t, rat, at)
				require.Equal(t, rv, v)
			}
			require.Equal(t, len(ref.heap), q.Len()) // the events at Never
		})
	}
}
