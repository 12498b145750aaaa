// Package sim is the deterministic discrete-event kernel: virtual time, an
// event queue with a total order, cancellable timers, run budgets, named
// random streams derived from one seed, duration distributions, and a TCP
// network model (connections, retransmission, head-of-line blocking,
// partitions, crashes; network.go) generic over its message type. It knows
// nothing of Kafka and is tested with toy messages.
//
// Ordering rule: events fire by (time, tie-break key, insertion sequence).
// The harness sets the key with Queue.SetKeyer: a hash of the run seed and
// of the event's identity (who it is for and what it is), so one seed always
// gives one interleaving of simultaneous events, different seeds explore
// different interleavings (this is how a consumer's two threads race), and
// adding or removing events elsewhere reshuffles no one else. Without a
// keyer simultaneous events fire in insertion order; only the kernel's own
// tests run a queue without one.
//
// The queue is a two-level calendar queue (one heap of every event was the
// largest single cost of a 10,000-member run): a small 4-ary heap of
// the events of one 4.1 µs bucket, the unsorted 4.1 µs buckets of the rest of
// the current 4.2 ms (most message deliveries), a ring of 4,096 unsorted
// 4.2 ms buckets for the 17 s after that (the timers) and a 4-ary heap of
// the rare events beyond; a bucket is a list threaded through a table of
// links (linkSize, checked when compiling) beside the queue's slot table. A
// tier is sorted or spread into the one before only when that one runs dry. Every event of a tier precedes every event of the next, so
// the pops are exactly those of one heap ordered by (time, key): the tiers
// change the cost, never the order.
//
// Virtual time and durations are the vtime package's Instant, Never and
// Dist (Instant, Never, Dist and Constant here are aliases of them).
package sim
