package harness

import (
	"math/bits"

	"github.com/rebalsim/rebalsim/sim"
)

// delPage is how many deliveries one page of a delTable holds: 256 × 96
// bytes fill the 24 KiB size class (TestDelTable).
const delPage = 256

// delTable holds the deliveries of pending evDeliver and evServe events
// (ev.di). Its high-water mark is far above what is usually pending: when a
// rebalance completes, every member's JoinGroup and SyncGroup response is
// in flight at once (one a member), while in the steady state a few in a
// hundred members have a message in flight. So the table is paged, a
// delivery takes the lowest free index (a bitmap), and a page is released
// once it and the page before it are empty (the spare keeps a count that
// hovers at a page boundary from allocating a page each time it crosses it):
// what stays live is about the pending deliveries, not the run's peak
// (issue 15, memory per member; an array sized for the peak cost 130 bytes
// a member). The index is only a handle: the queue's order does not depend
// on it (evIdentity).
type delTable struct {
	pages [][]sim.Delivery[envelope] // nil: released (or never used)
	used  []uint64                   // bit i: index i holds a delivery
	count []uint16                   // deliveries per page
	low   int                        // no zero bit in used before this word
}

// put stores d and returns its index.
func (t *delTable) put(d *sim.Delivery[envelope]) uint32 {
	w := t.low
	for w < len(t.used) && t.used[w] == ^uint64(0) {
		w++
	}
	t.low = w
	if w == len(t.used) {
		t.pages = append(t.pages, nil)
		t.count = append(t.count, 0)
		t.used = append(t.used, make([]uint64, delPage/64)...)
	}
	b := bits.TrailingZeros64(^t.used[w])
	t.used[w] |= 1 << b
	i := w*64 + b
	p := i / delPage
	if t.pages[p] == nil {
		t.pages[p] = make([]sim.Delivery[envelope], delPage)
	}
	t.count[p]++
	t.pages[p][i%delPage] = *d
	return uint32(i)
}

// take removes and returns the delivery at index i.
func (t *delTable) take(i uint32) sim.Delivery[envelope] {
	p, o := int(i)/delPage, int(i)%delPage
	d := t.pages[p][o]
	t.pages[p][o] = sim.Delivery[envelope]{}
	w := int(i) / 64
	t.used[w] &^= 1 << (i % 64)
	t.low = min(t.low, w)
	t.count[p]--
	if t.count[p] == 0 {
		// Release the page after this one if it is empty too; this one
		// stays as the spare.
		if q := p + 1; q < len(t.pages) && t.count[q] == 0 {
			t.pages[q] = nil
		}
		if p > 0 && t.count[p-1] == 0 {
			t.pages[p] = nil
		}
	}
	return d
}
