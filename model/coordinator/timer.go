package coordinator

import (
	"github.com/rebalsim/rebalsim/model/protocol"
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
)

// timer is one armed deadline. It is embedded in the object it belongs to,
// so re-arming never allocates (Kafka's "reschedule" supersedes the previous
// expiry, which is exactly heap.Fix on the same timer).
type timer struct {
	at    protocol.Instant
	seq   uint64 // insertion order: the tie-break among equal deadlines
	index int    // position in the heap; -1 when not armed
	kind  timerKind
	g     *group
	m     *member
	p     *pendingMember
	part  *partition
}

func (t *timer) armed() bool { return t.index >= 0 }

// timerHeap is a 4-ary min-heap of armed timers ordered by (at, seq): a
// total order (seq is unique), so equal deadlines fire in the order they
// were armed and the firing order does not depend on the heap's shape.
// Entries carry their keys so that sifting compares without following the
// timer pointers (a 10,000-member group has 10,000 heartbeat timers).
type timerHeap []heapEntry

type heapEntry struct {
	at  protocol.Instant
	seq uint64
	t   *timer
}

func (a *heapEntry) less(b *heapEntry) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (h timerHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		h[i].t.index = i
		i = p
	}
	h[i] = x
	x.t.index = i
}

// down sifts h[i] down; it reports whether it moved.
func (h timerHeap) down(i int) bool {
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
		h[i].t.index = i
		i = m
	}
	h[i] = x
	x.t.index = i
	return i != i0
}

// fix restores the order after h[i]'s key changed (container/heap.Fix).
func (h timerHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// remove takes out the entry at i and disarms its timer.
func (h *timerHeap) remove(i int) *timer {
	old := *h
	n := len(old) - 1
	t := old[i].t
	if i != n {
		old[i] = old[n]
		old[i].t.index = i
	}
	old[n] = heapEntry{}
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	t.index = -1
	return t
}

// schedule arms (or re-arms) t at at.
func (b *Broker) schedule(t *timer, at protocol.Instant) {
	b.timerSeq++
	t.at = at
	t.seq = b.timerSeq
	if t.armed() {
		b.timers[t.index].at, b.timers[t.index].seq = at, t.seq
		b.timers.fix(t.index)
		return
	}
	b.timers = append(b.timers, heapEntry{at: at, seq: t.seq, t: t})
	b.timers.up(len(b.timers) - 1)
}

// cancel disarms t; a no-op if it is not armed.
func (b *Broker) cancel(t *timer) {
	if !t.armed() {
		return
	}
	b.timers.remove(t.index)
}
