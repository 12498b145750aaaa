package harness

import (
	"maps"
	"slices"

	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/sim"
)

// The broker reads one request at a time per connection.
//
// Kafka's SocketServer.Processor.processCompletedReceives (@3.9.0-rc3) mutes a
// channel when it hands a request to the request handlers
// (ChannelMuteEvent.REQUEST_RECEIVED, selector.mute), and
// processCompletedSends unmutes it only when that request's response has
// been sent (ChannelMuteEvent.RESPONSE_SENT, tryUnmuteChannel). A request
// parked in purgatory (a JoinGroup waiting for the rebalance, a SyncGroup
// waiting for the leader) therefore holds back every later request of its
// connection, though the client pipelines them (the consumer's
// NetworkClient allows ConsumerUtils.CONSUMER_MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
// 100, in flight per connection, @3.9.0-rc3): a LeaveGroup sent by
// close() while the member's JoinGroup or SyncGroup is parked is read only
// after that request is answered.
//
// The model: a request that reaches a broker on a connection with one
// being served or parked (muted) waits in the connection's queue, in
// arrival order (broker.admit); when the broker sends the answer of the
// request being served (broker.replied), the next one is read: it enters
// the broker's service (coordinator.request.time) as if it arrived then.
// Its EvDeliver is traced when it reaches the broker's socket, not when it
// is read.
//
// A closed connection does not empty its queue: the requests that reached
// the broker are still read, in order, and their answers are lost with the
// connection (the network drops them). Kafka's broker does not notice a
// client's FIN or RST while the channel is muted (docs/network-model.md
// B6; GroupCoordinator "cannot detect disconnects because sockets are
// muted"); once the parked request's answer is written, the channel is
// unmuted and the bytes already in its socket are read, and a gracefully
// closed channel is kept until its outstanding receives are processed
// (Selector.close, closingChannels, @3.9.0-rc3). So a LeaveGroup that waited
// behind its process's parked JoinGroup still removes the member after the
// process was killed.
//
// Deviations:
//   - The answer is taken as sent when the broker hands it to TCP (w.send),
//     not when the last byte left (Selector's completed send).
//   - A request answered never (a model path that parks a request and
//     drops it, as GroupCoordinator.removeMemberAndUpdateGroup @3.9.0-rc3 does
//     with a removed member's SyncGroup callback) keeps its connection
//     muted for good, as in Kafka: the client's request.timeout.ms closes
//     it and it opens a new one.
//   - A reset whose kernel discarded a queue's unread bytes before the
//     unmute (an RST racing it) is not modelled: they are read.
//   - A broker that dies (crash, host down) loses its connections: its
//     mutes are forgotten and the queued requests freed (muteReset); a
//     request it was serving (evServe) is dropped as before; after a
//     failover the clients reconnect on new connections.

// connMutes is a broker's mute state of its connections (broker.mute):
// muted[c] is set while connection c has a request in service or parked,
// and waiting[c] holds the requests that arrived on c meanwhile (indexes
// in world.dels, arrival order), kept apart: few connections ever have one.
// A broker's death clears both (muteReset): its connections die with it.
type connMutes struct {
	muted   []bool
	waiting map[coordinator.Conn][]uint32
}

// admit decides whether a request that reached broker b is read now (true:
// its connection is muted for it) or waits behind the connection's request
// in service (false: d is queued).
func (b *broker) admit(w *world, d *sim.Delivery[envelope]) bool {
	c, m := d.Msg.conn, &b.mute
	if c == 0 {
		return true // conn 0 is never a connection's id (world.conns): nothing to order
	}
	if int(c) >= len(m.muted) {
		m.muted = append(m.muted, make([]bool, int(c)+1-len(m.muted))...)
	}
	if !m.muted[c] {
		m.muted[c] = true
		return true
	}
	if m.waiting == nil {
		m.waiting = map[coordinator.Conn][]uint32{}
	}
	m.waiting[c] = append(m.waiting[c], w.putDel(d))
	return false
}

// served returns when a request that broker b reads at now has been
// served, and makes the broker busy until then: the broker serves one
// request at a time (Kafka's group lock and request handlers, modelled as
// a single FIFO server of coordinator.request.time; b.service is set).
func (b *broker) served(now sim.Instant) sim.Instant {
	start := max(now, b.busyUntil)
	b.busyUntil = start.Add(b.service.Draw(b.rng))
	return b.busyUntil
}

// answer sends broker b's answer env on its request's connection and reads
// the connection's next waiting request (replied). Every answer a broker
// sends goes through here, so no connection stays muted by an answered
// request.
func (b *broker) answer(w *world, now sim.Instant, env envelope) {
	ci := w.conns[env.conn]
	s := w.slots[ci.slot]
	w.send(now, b.node, s.node, ci.ch(), ci.epoch, env, b.name, s.name)
	b.replied(w, now, env.conn)
}

// replied is called when broker b sent the answer on connection c: the
// connection is unmuted and its next waiting request, if any, is read
// (scheduled: the caller may be iterating the broker's output), whether
// or not the client's side of the connection still exists (see above).
func (b *broker) replied(w *world, now sim.Instant, c coordinator.Conn) {
	m := &b.mute
	if int(c) >= len(m.muted) || !m.muted[c] {
		return
	}
	if q := m.waiting[c]; len(q) > 0 {
		di := q[0]
		if q = slices.Delete(q, 0, 1); len(q) == 0 {
			delete(m.waiting, c)
		} else {
			m.waiting[c] = q
		}
		// Read now: it enters the broker's service as a request that
		// arrived now would (deliver).
		at := now
		if b.service != nil {
			at = b.served(now)
		}
		w.q.Schedule(at, ev{kind: evServe, idx: int32(b.node), di: di, inc: b.epoch})
		return
	}
	m.muted[c] = false
}

// muteReset forgets broker b's mutes when it dies and frees the requests
// that were waiting (in connection order: deterministic).
func (b *broker) muteReset(w *world) {
	m := &b.mute
	for _, c := range slices.Sorted(maps.Keys(m.waiting)) {
		for _, di := range m.waiting[c] {
			var d sim.Delivery[envelope]
			w.takeDel(di, &d)
		}
	}
	*m = connMutes{}
}
