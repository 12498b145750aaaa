package coordinator

import (
	"github.com/rebalsim/rebalsim/model/protocol"
	"unsafe"
)

// timerKind names what a timer models (Kafka's purgatory operations).
type timerKind uint8

const (
	// tkHeartbeat: DelayedHeartbeat of a member (heartbeatPurgatory).
	tkHeartbeat timerKind = iota
	// tkPending: DelayedHeartbeat(isPending=true) of a KIP-394 pending id.
	tkPending
	// tkJoin: DelayedJoin / InitialDelayedJoin (rebalancePurgatory).
	tkJoin
	// tkSync: DelayedSync (KAFKA-12890).
	tkSync
	// tkLoad: completion of loadGroupsAndOffsets after onElection.
	tkLoad
	// tkAppend: completion of a group-record append (storeGroup's
	// DelayedProduce, see append.go).
	tkAppend
	// tkLinger: the flush of the group's open write batch (the Java
	// coordinator's append linger, linger.go).
	tkLinger
)

// timer is one armed deadline. It is embedded in the object it belongs to,
// so re-arming never allocates (Kafka's "reschedule" supersedes the previous
// expiry, which is exactly heap.Fix on the same timer).
//
// Every member embeds one (memberSize), so it is kept small: the arming
// order lives only in the heap entry, and the one object a timer is for
// besides its group is in who, by kind.
type timer struct {
	at   protocol.Instant
	id   int32 // while armed, its id in the broker's timerHeap; -1 when not armed
	kind timerKind
	g    *group
	who  any // tkHeartbeat: *member; tkPending: *pendingMember; tkLoad: *partition; else nil
}

// timerSize is timer's size on 64-bit platforms, part of memberSize.
const timerSize = 40

var _ [timerSize - unsafe.Sizeof(timer{})]struct{} // fails to compile if timer grows

func (t *timer) armed() bool { return t.id >= 0 }

// timerHeap is a 4-ary min-heap of armed timers ordered by (at, seq): a
// total order (seq is unique), so equal deadlines fire in the order they
// were armed and the firing order does not depend on the heap's shape.
// Entries carry their keys so that sifting compares without following the
// timer pointers (a 10,000-member group has 10,000 heartbeat timers), and
// each armed timer has a small id whose heap position is kept in pos, a
// dense array beside the heap: sifting an entry updates pos, not a field of
// the timer inside its member (a heartbeat's re-arm moves an entry through
// about seven levels, and writing each moved timer's position into its own
// member was a cache miss per level in a 10,000-member world).
type timerHeap struct {
	h    []heapEntry
	pos  []int32  // by id: the position in h of that timer's entry
	ptr  []*timer // by id: the armed timer (nil: the id is free)
	free []int32  // ids not in use
}

// heapEntry is an armed timer's deadline, arming order and id, packed
// (heapEntrySize: every member's heartbeat timer has one), the order in
// the high 40 bits of key and the id in the low 24 (seqBits, idBits). A
// sequence is unique, so ordering by key is ordering by sequence.
type heapEntry struct {
	at  protocol.Instant
	key uint64
}

// heapEntrySize is heapEntry's size: two words, the packing's point.
const heapEntrySize = 16

var _ [heapEntrySize - unsafe.Sizeof(heapEntry{})]struct{} // fails to compile if heapEntry grows

const (
	idBits  = 24
	seqBits = 64 - idBits
)

func newHeapEntry(at protocol.Instant, seq uint64, id int32) heapEntry {
	if seq>>seqBits != 0 || id < 0 || id >= 1<<idBits {
		panic("coordinator: timer sequence or id out of range")
	}
	return heapEntry{at: at, key: seq<<idBits | uint64(id)}
}

func (e *heapEntry) id() int32   { return int32(e.key & (1<<idBits - 1)) }
func (e *heapEntry) seq() uint64 { return e.key >> idBits }

func (a *heapEntry) less(b *heapEntry) bool {
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

func (th *timerHeap) len() int { return len(th.h) }

// top is the earliest armed timer (the heap must not be empty).
func (th *timerHeap) top() *timer { return th.ptr[th.h[0].id()] }

func (th *timerHeap) up(i int) {
	h, pos := th.h, th.pos
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		pos[h[i].id()] = int32(i)
		i = p
	}
	h[i] = x
	pos[x.id()] = int32(i)
}

// down sifts h[i] down; it reports whether it moved.
func (th *timerHeap) down(i int) bool {
	h, pos := th.h, th.pos
	n := len(h)
	i0 := i
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h[j].less(&h[m]) {
				m = j
			}
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		pos[h[i].id()] = int32(i)
		i = m
	}
	h[i] = x
	pos[x.id()] = int32(i)
	return i != i0
}

// fix restores the order after h[i]'s key changed (container/heap.Fix).
func (th *timerHeap) fix(i int) {
	if !th.down(i) {
		th.up(i)
	}
}

// push arms t (not armed) with its at and arming order seq.
func (th *timerHeap) push(t *timer, seq uint64) {
	var id int32
	if n := len(th.free); n > 0 {
		id = th.free[n-1]
		th.free = th.free[:n-1]
		th.ptr[id] = t
	} else {
		id = int32(len(th.ptr))
		th.ptr = append(th.ptr, t)
		th.pos = append(th.pos, 0)
	}
	t.id = id
	th.h = append(th.h, newHeapEntry(t.at, seq, id))
	th.up(len(th.h) - 1)
}

// remove takes out the entry at i and disarms its timer.
func (th *timerHeap) remove(i int) *timer {
	h := th.h
	n := len(h) - 1
	id := h[i].id()
	t := th.ptr[id]
	if i != n {
		h[i] = h[n]
		th.pos[h[i].id()] = int32(i)
	}
	h[n] = heapEntry{}
	th.h = h[:n]
	if i != n {
		th.fix(i)
	}
	th.ptr[id] = nil
	th.free = append(th.free, id)
	t.id = -1
	return t
}

// schedule arms (or re-arms) t at at.
func (b *Broker) schedule(t *timer, at protocol.Instant) {
	b.timerSeq++
	t.at = at
	if t.armed() {
		i := b.timers.pos[t.id]
		b.timers.h[i] = newHeapEntry(at, b.timerSeq, t.id)
		b.timers.fix(int(i))
		return
	}
	b.timers.push(t, b.timerSeq)
}

// cancel disarms t; a no-op if it is not armed.
func (b *Broker) cancel(t *timer) {
	if !t.armed() {
		return
	}
	b.timers.remove(int(b.timers.pos[t.id]))
}
