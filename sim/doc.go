// Package sim is the deterministic discrete-event kernel: virtual time, an
// event queue with a total order, cancellable timers, run budgets, named
// random streams derived from one seed, duration distributions, and a TCP
// network model (connections, retransmission, head-of-line blocking,
// partitions, crashes; network.go) generic over its message type. It knows
// nothing of Kafka and is tested with toy messages.
//
// Ordering rule: events fire by (time, tie-break key, insertion sequence).
// The key is drawn from a stream of the run seed, so one seed always gives
// one interleaving of simultaneous events, and different seeds explore
// different interleavings (this is how a consumer's two threads race).
package sim
