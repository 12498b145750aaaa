package sim

import (
	"fmt"
	"math/bits"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/vtime"
)

// Instant is virtual time in nanoseconds since the start of a run: the one
// vtime.Instant the models use too (an alias, so no conversions).
type Instant = vtime.Instant

// Never is the instant of an unarmed deadline (vtime.Never).
const Never = vtime.Never

// entry is one queue entry: no pointers, so sifting is cheap and needs no
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
// that a slot is 8 + sizeof(T) bytes, not 16 + sizeof(T): the table holds a
// few slots per member at its high-water mark, so a slot's size is paid per
// member.
type slot[T any] struct {
	timer *Timer // nil for plain events; deadTimer once cancelled
	val   T
}

// slotOverhead is what a slot adds to its payload on 64-bit platforms (the
// timer pointer that is also the dead mark); change it deliberately.
const slotOverhead = 8

var _ [slotOverhead - (unsafe.Sizeof(slot[[24]byte]{}) - 24)]struct{} // fails to compile if slot grows

// link is the entry of a slot while it waits in a calendar bucket: a bucket
// is a list threaded through the link table (parallel to the slot table),
// so the calendar allocates nothing once the tables have reached their
// high-water mark (per-bucket arrays grew, bucket by bucket, for as long as
// a run lasted: TestSteadyStateAllocationFree), and a bucket costs 4 bytes
// (the index of its first slot).
//
// The table holds a link per slot, so a link's size is paid per member: it
// keeps only the low coarseShift bits of at, the offset in its ring bucket,
// whose number the bucket's position gives (a full Instant would make it 24
// bytes).
type link struct {
	key  uint64
	lo   uint32 // at & (1<<coarseShift - 1)
	next uint32 // the bucket's next slot (noSlot: the last)
}

// linkSize is link's size on 64-bit platforms; change it deliberately.
const linkSize = 16

var _ [linkSize - unsafe.Sizeof(link{})]struct{} // fails to compile if link grows

// noSlot ends a bucket list.
const noSlot = ^uint32(0)

// deadTimer is the mark of a cancelled entry's slot (slot.timer). It is
// never armed and never written to.
var deadTimer = new(Timer)

// Timer is a cancellable, re-armable timer living in a Queue. The zero value
// is an unarmed timer. Cancellation is lazy: a cancelled or re-armed timer's
// old entry stays in the queue, marked dead, and is skipped when it is
// popped. A timer belongs to the one queue it is armed in, and must not be
// copied while armed.
//
// Every member holds several Timers, so a Timer's size is paid per member:
// used is a bool because the only question asked of it is whether the timer
// was ever armed.
type Timer struct {
	at   Instant
	slot uint32 // the queue slot of the pending entry, while armed
	used bool   // armed or cancelled at least once (the zero Timer's at, 0, is not a deadline)
}

// timerSize is Timer's size on 64-bit platforms; change it deliberately.
const timerSize = 16

var _ [timerSize - unsafe.Sizeof(Timer{})]struct{} // fails to compile if Timer grows

// Armed reports whether the timer is armed and when it fires.
func (t *Timer) Armed() (Instant, bool) { return t.at, t.at != Never && t.used }

// Queue is the event queue of one simulated world. It is not safe for
// concurrent use (a world is single-threaded by design).
//
// The entries, (at, key) and a payload slot in a table with a free list,
// live in four tiers, each holding later entries than the one before (a
// two-level calendar queue: one 4-ary heap of every entry took a fifth of
// the 100-member hour's run time, mostly mispredicted comparisons, and was
// the largest single cost of the 10,000-member one, whose heap of ~23,500
// entries, 564 KB, missed the cache on every pop; queue_ref_test.go keeps
// that heap as the reference the queue is checked against):
//
//   - near, a 4-ary min-heap of the entries before the fine horizon
//     (fbase << fineShift ns): the contents of one fine bucket, and what is
//     scheduled before its end (an event at now, whatever its key).
//   - fine, fineBuckets unsorted buckets of 2^fineShift ns (4.1 µs) from the
//     fine horizon to the end of the coarse bucket being worked through
//     (cbase << coarseShift): most message deliveries, 0–2 ms ahead.
//   - ring, a calendar of ringBuckets unsorted buckets of 2^coarseShift ns
//     (4.2 ms) from there on, 17 s in all: the timers (polls 100 ms,
//     heartbeats 3 s, auto-commits 5 s ahead).
//   - far, a 4-ary min-heap of the entries beyond the ring (rare: session
//     timeouts, a scenario's late actions).
//
// A bucket is a list of slots threaded through the link table; a push links
// its slot in front, and nothing is sorted until the bucket is reached. When
// near is empty, the earliest non-empty fine bucket (found in a bitmap) is
// copied into near, which is heapified, and the fine horizon moves past it;
// when fine is empty too, the earliest non-empty ring bucket is spread over
// the fine buckets, the coarse horizon moves past it, and far's entries that
// the moved window now covers go into their ring buckets. Every entry of a
// tier precedes every entry of the next, so the top of near is the queue's
// least (at, key): the order of pops is exactly the one heap's, whatever the
// tiers' shapes (TestQueueMatchesOneHeap replays random workloads against
// that heap).
//
// Why two levels: the record scenarios' events come in bursts (the members
// of a group heartbeat and commit in step). Weighted by event, a 4.2 ms
// bucket holds some 210 events at 100 members and 2,100 at 1,000, a 4.1 µs
// one 1.4 and 4.5 (measured on the pops of 10 simulated minutes), while a
// ring of 4.1 µs buckets spanning the 5 s timers would take 5 MB per queue.
//
// Tried and dropped (cachegrind): a branchless 128-bit compare
// (math/bits.Sub64) in entry.less ran as many instructions and mispredicted
// 9 % more conditional branches in the 100-member hour (the heaps are small
// now); slots and links side by side in one table of 40-byte cells missed
// D1 0.7 % less in 10,000 members × 2 min but ran 4 % more instructions.
type Queue[T any] struct {
	near    []entry
	fine    [fineBuckets]uint32 // the fine buckets' first slots
	fineOcc [fineBuckets / 64]uint64
	nFine   int      // entries in fine
	ring    []uint32 // the ring buckets' first slots, allocated at the first use
	occ     []uint64 // bit i: ring[i] is not empty
	nRing   int      // entries in ring
	far     []entry
	fbase   int64 // the fine horizon: near holds the entries of fine buckets < fbase
	cbase   int64 // the coarse horizon: fine holds the entries of fine buckets < cbase << (coarseShift-fineShift)
	slots   []slot[T]
	links   []link // parallel to slots
	free    []uint32
	seq     uint64
	now     Instant
	fired   uint64
	// keyer, when set, gives each event a tie-break derived from the seed and
	// the event's identity instead of insertion order (SetKeyer).
	keyer   func(at Instant, v T) uint64
	keySeed uint64
	curKey  uint64
	stop    bool
}

// The calendar's shape: fine buckets of 2^12 ns (4.1 µs), 1024 to a ring
// bucket of 2^22 ns (4.2 ms); 4096 ring buckets span 17.2 s, which holds the
// heartbeat (3 s), auto-commit (5 s) and poll timers. The bucket heads and
// bitmaps take 20.6 KB per queue. Fine buckets of 16.4 µs ran 0.4 % more
// instructions in 10,000 members × 2 min and mispredicted 18 % more
// branches in the 100-member hour (cachegrind).
const (
	fineShift   = 12
	coarseShift = 22
	fineBuckets = 1 << (coarseShift - fineShift)
	fineMask    = fineBuckets - 1
	ringBuckets = 4096 // a power of two
	ringMask    = ringBuckets - 1
)

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
	return &Queue[T]{near: make([]entry, 0, 64)}
}

// Now is the instant of the event being (or last) fired.
func (q *Queue[T]) Now() Instant { return q.now }

// Fired is the number of events fired so far (cancelled timers excluded).
func (q *Queue[T]) Fired() uint64 { return q.fired }

// Len is the number of entries in the queue, including cancelled timers.
func (q *Queue[T]) Len() int { return len(q.near) + q.nFine + q.nRing + len(q.far) }

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
	} else {
		if len(q.slots) >= 1<<32-1 {
			panic("sim: more than 2^32 pending events")
		}
		s = uint32(len(q.slots))
		q.slots = append(q.slots, slot[T]{})
		q.links = append(q.links, link{})
	}
	q.seq++
	hi := q.seq // no keyer: insertion order (the kernel's own tests)
	if q.keyer != nil {
		hi = splitmix(q.keySeed^q.keyer(at, v)^uint64(at)*0x9e3779b97f4a7c15) >> 32
	}
	q.slots[s] = slot[T]{timer: t, val: v}
	q.insert(entry{at: at, key: hi<<32 | q.seq&0xffffffff, slot: s})
	return s
}

// insert puts e in its tier.
func (q *Queue[T]) insert(e entry) {
	f := int64(e.at) >> fineShift
	switch {
	case f < q.fbase:
		q.near = append(q.near, e)
		up(q.near, len(q.near)-1)
	case f < q.cbase<<(coarseShift-fineShift):
		q.link(q.fine[:], q.fineOcc[:], f&fineMask, e)
		q.nFine++
	case f>>(coarseShift-fineShift) < q.cbase+ringBuckets:
		if q.ring == nil {
			q.ring = make([]uint32, ringBuckets)
			q.occ = make([]uint64, ringBuckets/64)
		}
		q.link(q.ring, q.occ, f>>(coarseShift-fineShift)&ringMask, e)
		q.nRing++
	default:
		q.far = append(q.far, e)
		up(q.far, len(q.far)-1)
	}
}

// link puts e in front of bucket i's list.
func (q *Queue[T]) link(heads []uint32, occ []uint64, i int64, e entry) {
	q.links[e.slot] = link{key: e.key, lo: uint32(e.at) & (1<<coarseShift - 1), next: pushFront(heads, occ, i, e.slot)}
}

// pushFront makes slot s the first of bucket i's list, marking the bucket
// occupied, and returns the slot that was first (noSlot: none), which s's
// link must point to.
func pushFront(heads []uint32, occ []uint64, i int64, s uint32) (next uint32) {
	next = noSlot
	if occ[i>>6]&(1<<(i&63)) != 0 {
		next = heads[i]
	} else {
		occ[i>>6] |= 1 << (i & 63)
	}
	heads[i] = s
	return next
}

// advance moves the entries of the earliest non-empty fine bucket into near
// (which must be empty), first spreading the earliest non-empty ring bucket
// over the fine buckets if these are empty. It reports false when the queue
// is empty.
func (q *Queue[T]) advance() bool {
	for q.nFine == 0 {
		if q.nRing == 0 {
			if len(q.far) == 0 {
				return false
			}
			q.cbase = int64(q.far[0].at) >> coarseShift
			q.refill()
		}
		// The first set bit from the coarse horizon's position on, wrapping
		// around: the ring holds buckets cbase … cbase+ringBuckets-1 only.
		p := q.cbase & ringMask
		w := p >> 6
		m := q.occ[w] &^ (1<<(p&63) - 1)
		for m == 0 {
			w = (w + 1) & (ringBuckets/64 - 1)
			m = q.occ[w]
		}
		i := w<<6 + int64(bits.TrailingZeros64(m))
		q.occ[w] &^= 1 << (i & 63)
		for s := q.ring[i]; s != noSlot; {
			l := &q.links[s]
			next := l.next
			l.next = pushFront(q.fine[:], q.fineOcc[:], int64(l.lo)>>fineShift, s)
			q.nRing--
			q.nFine++
			s = next
		}
		c := q.cbase + (i-p)&ringMask
		q.cbase = c + 1
		q.fbase = c << (coarseShift - fineShift)
		q.refill()
	}
	// The first set fine bit: fine holds fine buckets fbase … the coarse
	// horizon's first, within one ring bucket, so no bit before fbase's
	// position is set.
	p := q.fbase & fineMask
	w := p >> 6
	m := q.fineOcc[w]
	for m == 0 {
		w++
		m = q.fineOcc[w]
	}
	i := w<<6 + int64(bits.TrailingZeros64(m))
	q.fineOcc[w] &^= 1 << (i & 63)
	hi := Instant(q.cbase-1) << coarseShift // fine holds the ring bucket before the coarse horizon
	for s := q.fine[i]; s != noSlot; {
		l := &q.links[s]
		q.near = append(q.near, entry{at: hi | Instant(l.lo), key: l.key, slot: s})
		s = l.next
	}
	q.nFine -= len(q.near)
	q.fbase += i - p + 1
	heapify(q.near)
	return true
}

// refill moves far's entries that the ring's window now covers into their
// buckets.
func (q *Queue[T]) refill() {
	for len(q.far) > 0 && int64(q.far[0].at)>>coarseShift < q.cbase+ringBuckets {
		q.insert(popHeap(&q.far))
	}
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
// cancelled timers at the top of the queue.
func (q *Queue[T]) Next() Instant {
	for {
		if len(q.near) == 0 && !q.advance() {
			return Never
		}
		top := &q.near[0] // advance leaves near non-empty
		if q.slots[top.slot].timer == deadTimer {
			q.release(popHeap(&q.near))
			continue
		}
		return top.at
	}
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
	e := popHeap(&q.near)
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

// popHeap removes the top entry of the 4-ary heap *hp. The hole it leaves
// is moved down along the smallest children to a leaf, and the last entry is
// sifted up from there (Floyd's bottom-up deletion): the last entry usually
// belongs near the bottom, so this makes about one comparison fewer per
// level than sifting it down from the root, and the comparisons left are
// easier to predict. The order is total ((at, key) is unique), so the
// sequence of pops does not depend on how the heap is arranged.
func popHeap(hp *[]entry) entry {
	h := *hp
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	*hp = h
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
	up(h, i)
	return top
}

// up sifts h[i] up the 4-ary heap h.
func up(h []entry, i int) {
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

// heapify makes h a 4-ary heap (Floyd's: sift every inner node down,
// the last first).
func heapify(h []entry) {
	n := len(h)
	for i := (n - 2) / 4; i >= 0 && n > 1; i-- {
		x := h[i]
		j := i
		for {
			c := 4*j + 1
			if c >= n {
				break
			}
			m := c
			for k := c + 1; k < c+4 && k < n; k++ {
				if h[k].less(&h[m]) {
					m = k
				}
			}
			if !h[m].less(&x) {
				break
			}
			h[j] = h[m]
			j = m
		}
		h[j] = x
	}
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
