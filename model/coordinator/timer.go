package coordinator

import (
	"container/heap"

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

// timerHeap orders timers by (at, seq): a total order, so equal deadlines
// fire in the order they were armed.
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}

// schedule arms (or re-arms) t at at.
func (b *Broker) schedule(t *timer, at protocol.Instant) {
	b.timerSeq++
	t.at = at
	t.seq = b.timerSeq
	if t.armed() {
		heap.Fix(&b.timers, t.index)
		return
	}
	heap.Push(&b.timers, t)
}

// cancel disarms t; a no-op if it is not armed.
func (b *Broker) cancel(t *timer) {
	if !t.armed() {
		return
	}
	heap.Remove(&b.timers, t.index)
}
