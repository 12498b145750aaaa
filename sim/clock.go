package sim

import (
	"fmt"
	"time"

	"github.com/rebalsim/rebalsim/vtime"
)

// Instant is virtual time in nanoseconds since the start of a run: the one
// vtime.Instant the models use too (an alias, so no conversions).
type Instant = vtime.Instant

// Never is the instant of an unarmed deadline (vtime.Never).
const Never = vtime.Never

// entry is one heap entry: no pointers, so sifting is cheap and needs no
// write barriers. The queue's total order is (at, key): time, then key, whose
// high 32 bits are a tie-break derived from the seed (so one seed gives one
// interleaving of simultaneous events and other seeds explore others) and
// whose low 32 bits are the insertion sequence (so events with equal
// tie-breaks, e.g. two messages on one connection, keep their order).
type entry struct {
	at   Instant
	key  uint64
	slot uint32
}

func (a *entry) less(b *entry) bool {
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

// slot holds an entry's payload. A timer pointer equal to deadTimer marks
// the entry of a timer that was re-armed or cancelled since: Next skips it
// by looking at the slot table alone, without following the timer pointer
// into its owner's memory (a cache miss per event in a 100,000-member
// world). The mark lives in the pointer rather than in a bool beside it so
// that a slot is 8 + sizeof(T) bytes, not 16 + sizeof(T) (issue 15, memory
// per member: the table holds a few slots per member at its high-water mark).
type slot[T any] struct {
	timer *Timer // nil for plain events; deadTimer once cancelled
	val   T
}

// deadTimer is the mark of a cancelled entry's slot (slot.timer). It is
// never armed and never written to.
var deadTimer = new(Timer)

// Timer is a cancellable, re-armable timer living in a Queue. The zero value
// is an unarmed timer. Cancellation is lazy: a cancelled or re-armed timer's
// old entry stays in the heap, marked dead, and is skipped when it reaches
// the top. A timer belongs to the one queue it is armed in, and must not be
// copied while armed.
//
// A Timer is 16 bytes (issue 15, memory per member: every member holds
// several): used replaced a uint64 arming count whose only reader asked
// whether it was non-zero.
type Timer struct {
	at   Instant
	slot uint32 // the queue slot of the pending entry, while armed
	used bool   // armed or cancelled at least once (the zero Timer's at, 0, is not a deadline)
}

// Armed reports whether the timer is armed and when it fires.
func (t *Timer) Armed() (Instant, bool) { return t.at, t.at != Never && t.used }

// Queue is the event queue of one simulated world: a 4-ary min-heap of
// (at, key) entries whose payloads live in a slot table with a free list. It
// is not safe for concurrent use (a world is single-threaded by design).
type Queue[T any] struct {
	heap  []entry
	slots []slot[T]
	free  []uint32
	seq   uint64
	now   Instant
	fired uint64
	// keyer, when set, gives each event a tie-break derived from the seed and
	// the event's identity instead of insertion order (SetKeyer).
	keyer   func(at Instant, v T) uint64
	keySeed uint64
	curKey  uint64
	stop    bool
}

// Stop makes Run return Stopped after the event being fired.
func (q *Queue[T]) Stop() { q.stop = true }

// SetKeyer makes the tie-break of an event a hash of the seed and of
// identity(at, v) — who the event is for and what it is — instead of
// insertion order. Then the relative order of two simultaneous events
// depends only on the seed and on the two events, not on
// how many other events were scheduled before them: removing or adding
// events elsewhere (an optimisation, another member) does not reshuffle the
// interleavings of everyone else.
func (q *Queue[T]) SetKeyer(seed uint64, identity func(at Instant, v T) uint64) {
	q.keyer = identity
	q.keySeed = splitmix(seed ^ 0x6a09e667f3bcc908)
}

// NewQueue returns an empty queue at instant 0. Simultaneous events fire in
// insertion order until SetKeyer installs the seeded tie-break.
func NewQueue[T any]() *Queue[T] {
	return &Queue[T]{heap: make([]entry, 0, 64)}
}

// Now is the instant of the event being (or last) fired.
func (q *Queue[T]) Now() Instant { return q.now }

// Fired is the number of events fired so far (cancelled timers excluded).
func (q *Queue[T]) Fired() uint64 { return q.fired }

// Len is the number of entries in the heap, including cancelled timers.
func (q *Queue[T]) Len() int { return len(q.heap) }

// Schedule adds an event at instant at, which must not be in the past.
func (q *Queue[T]) Schedule(at Instant, v T) {
	q.push(at, nil, v)
}

// After schedules an event d after now.
func (q *Queue[T]) After(d time.Duration, v T) { q.Schedule(q.now.Add(d), v) }

// Arm (re-)arms t to fire at instant at with value v, cancelling any earlier
// arming of t.
func (q *Queue[T]) Arm(t *Timer, at Instant, v T) {
	q.kill(t)
	t.used = true
	t.at = at
	t.slot = q.push(at, t, v)
}

// Cancel disarms t. Cancelling an unarmed timer does nothing.
func (q *Queue[T]) Cancel(t *Timer) {
	q.kill(t)
	t.used = true
	t.at = Never
}

// kill marks the pending entry of an armed timer dead.
func (q *Queue[T]) kill(t *Timer) {
	if _, armed := t.Armed(); armed {
		q.slots[t.slot].timer = deadTimer
	}
}

func (q *Queue[T]) push(at Instant, t *Timer, v T) uint32 {
	if at < q.now {
		panic(fmt.Sprintf("sim: event scheduled in the past: %v < now %v", at, q.now))
	}
	var s uint32
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[s] = slot[T]{timer: t, val: v}
	} else {
		if len(q.slots) >= 1<<32-1 {
			panic("sim: more than 2^32 pending events")
		}
		s = uint32(len(q.slots))
		q.slots = append(q.slots, slot[T]{timer: t, val: v})
	}
	q.seq++
	hi := q.seq // no keyer: insertion order (the kernel's own tests)
	if q.keyer != nil {
		hi = splitmix(q.keySeed^q.keyer(at, v)^uint64(at)*0x9e3779b97f4a7c15) >> 32
	}
	q.heap = append(q.heap, entry{at: at, key: hi<<32 | q.seq&0xffffffff, slot: s})
	q.up(len(q.heap) - 1)
	return s
}

// TieKey is the tie-break an event v at instant at would get under the
// queue's keyer (0 without one). With CurrentTieKey it lets a caller decide
// whether an event it did not schedule (a lazily replayed timer) would have
// fired before the current one.
func (q *Queue[T]) TieKey(at Instant, v T) uint64 {
	if q.keyer == nil {
		return 0
	}
	return splitmix(q.keySeed^q.keyer(at, v)^uint64(at)*0x9e3779b97f4a7c15) >> 32
}

// CurrentTieKey is the tie-break of the event being fired (or last fired).
func (q *Queue[T]) CurrentTieKey() uint64 { return q.curKey >> 32 }

// Next returns the instant of the earliest live event, or Never. It discards
// cancelled timers at the top of the heap.
func (q *Queue[T]) Next() Instant {
	for len(q.heap) > 0 {
		top := &q.heap[0]
		if q.slots[top.slot].timer == deadTimer {
			q.release(q.pop())
			continue
		}
		return top.at
	}
	return Never
}

// Pop removes the earliest live event, advances the clock to it and returns
// it. ok is false when the queue is empty.
func (q *Queue[T]) Pop() (at Instant, v T, ok bool) {
	if q.Next() == Never {
		return 0, v, false
	}
	at, v = q.fireTop()
	return at, v, true
}

// fireTop removes the top entry, which Next has just found live, advances
// the clock to it and returns it (Pop without a second Next: Run has
// already called it).
func (q *Queue[T]) fireTop() (at Instant, v T) {
	e := q.pop()
	sl := &q.slots[e.slot]
	if sl.timer != nil {
		sl.timer.at = Never
	}
	v = sl.val
	q.release(e)
	q.now = e.at
	q.curKey = e.key
	q.fired++
	return e.at, v
}

func (q *Queue[T]) release(e entry) {
	q.slots[e.slot] = slot[T]{}
	q.free = append(q.free, e.slot)
}

// pop removes the top entry. The hole it leaves is moved down along the
// smallest children to a leaf, and the last entry is sifted up from there
// (Floyd's bottom-up deletion): the last entry usually belongs near the
// bottom, so this makes about one comparison fewer per level than sifting it
// down from the root, and the comparisons left are easier to predict. The
// order is total ((at, key) is unique), so the sequence of pops does not
// depend on how the heap is arranged.
func (q *Queue[T]) pop() entry {
	h := q.heap
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	q.heap = h
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c+3 < n {
			m := c
			if h[c+1].less(&h[m]) {
				m = c + 1
			}
			if h[c+2].less(&h[m]) {
				m = c + 2
			}
			if h[c+3].less(&h[m]) {
				m = c + 3
			}
			h[i] = h[m]
			i = m
			continue
		}
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < n; j++ {
			if h[j].less(&h[m]) {
				m = j
			}
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
	q.up(i)
	return top
}

func (q *Queue[T]) up(i int) {
	h := q.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// Budget limits a run: simulated time and number of events.
type Budget struct {
	Until     Instant // events after this instant are not fired
	MaxEvents uint64  // 0 = no limit
}

// StopReason says why Run returned.
type StopReason int

const (
	// Quiescent: no event left.
	Quiescent StopReason = iota
	// TimeBudget: the next event is after Budget.Until.
	TimeBudget
	// EventBudget: Budget.MaxEvents events were fired.
	EventBudget
	// Stopped: the fire function called Stop.
	Stopped
)

func (r StopReason) String() string {
	switch r {
	case Quiescent:
		return "quiescent"
	case TimeBudget:
		return "time-budget"
	case EventBudget:
		return "event-budget"
	case Stopped:
		return "stopped"
	}
	return "unknown"
}

// Run fires events in order until the budget is spent or nothing is left.
// fire may schedule more events. On TimeBudget the clock is advanced to
// Budget.Until.
func (q *Queue[T]) Run(b Budget, fire func(now Instant, v T)) StopReason {
	q.stop = false
	for {
		if q.stop {
			return Stopped
		}
		if b.MaxEvents != 0 && q.fired >= b.MaxEvents {
			return EventBudget
		}
		next := q.Next()
		if next == Never {
			return Quiescent
		}
		if next > b.Until {
			if b.Until > q.now {
				q.now = b.Until
			}
			return TimeBudget
		}
		at, v := q.fireTop()
		fire(at, v)
	}
}
