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
// Virtual time and durations are the vtime package's Instant, Never and
// Dist (Instant, Never, Dist and Constant here are aliases of them).
package sim
