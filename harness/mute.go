package harness

import (
	"slices"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/sim"
)

// The broker reads one request at a time per connection.
//
// Kafka's SocketServer.Processor.processCompletedReceives (@3.9.0) mutes a
// channel when it hands a request to the request handlers
// (ChannelMuteEvent.REQUEST_RECEIVED, selector.mute), and
// processCompletedSends unmutes it only when that request's response has
// been sent (ChannelMuteEvent.RESPONSE_SENT, tryUnmuteChannel). A request
// parked in purgatory (a JoinGroup waiting for the rebalance, a SyncGroup
// waiting for the leader) therefore holds back every later request of its
// connection, though the client pipelines them (KafkaConsumer's
// NetworkClient allows 100 in flight per connection): a LeaveGroup sent by
// close() while the member's JoinGroup or SyncGroup is parked is read only
// after that request is answered.
//
// The model: a request that reaches a broker on a connection with one
// being served or parked (muted) waits in the connection's queue, in
// arrival order; when the broker sends the answer of the request being
// served (replied), the next one is read: it enters the broker's service
// (coordinator.request.time) as if it arrived then. Its EvDeliver is traced
// when it reaches the broker's socket, not when it is read.
//
// Deviations:
//   - The answer is taken as sent when the broker hands it to TCP (w.send),
//     not when the last byte left (Selector's completed send).
//   - A request answered never (a model path that parks a request and
//     drops it, as GroupCoordinator.removeMemberAndUpdateGroup @3.9.0 does
//     with a removed member's SyncGroup callback) keeps its connection
//     muted for good, as in Kafka: the client's request.timeout.ms closes
//     it and it opens a new one.
//   - The queue goes with the connection. When the next request is to be
//     read and its connection is gone on the client's side (the process
//     crashed, closed or its host went down, or the client closed or reset
//     the connection: the network's epoch moved on), the queued requests
//     are dropped (traced EvDrop, fate closed). Kafka keeps reading a
//     gracefully closed channel's outstanding receives until a send fails
//     (Selector.close, closingChannels, @3.9.0), and the answer of the
//     request it was serving fails to send to a closed peer, so the
//     remaining receives go with the channel; a host that went down
//     silently leaves Kafka's channel open until the broker's idle timeout
//     (connections.max.idle.ms), and the broker would read them: here they
//     are dropped.
//   - A broker that dies (crash, host down) loses its connections: a
//     connection's mute belongs to the broker's life (epoch) it was set
//     in, and the queued requests of a dead broker are freed when it dies
//     (muteBrokerDied); after a failover the clients reconnect on new
//     connections.

// muteState is one connection's mute (world.mutes, by conn id): the
// broker life it was set in (the broker's epoch + 1; 0: not muted). The
// requests waiting on a muted connection are in world.muteQ (indexes in
// world.dels, arrival order), kept apart: few connections ever have one.
type muteState struct {
	life   uint32
	broker int32
}

// muteOf is the mute of connection c (nil: never muted).
func (w *world) muteOf(c coordinator.Conn) *muteState {
	if int(c) < len(w.mutes) {
		return &w.mutes[c]
	}
	return nil
}

// admit decides whether a request that reached broker b on its connection
// is read now (true: the connection is muted for it) or waits behind the
// connection's request in service (false: d is queued).
func (w *world) admit(b *broker, d *sim.Delivery[envelope]) bool {
	c := d.Msg.conn
	if c == 0 {
		return true
	}
	if int(c) >= len(w.mutes) {
		w.mutes = append(w.mutes, make([]muteState, int(c)+1-len(w.mutes))...)
	}
	m := &w.mutes[c]
	if m.life != b.epoch+1 {
		*m = muteState{life: b.epoch + 1, broker: int32(b.node)}
		return true
	}
	if w.muteQ == nil {
		w.muteQ = map[coordinator.Conn][]uint32{}
	}
	w.muteQ[c] = append(w.muteQ[c], w.putDel(d))
	return false
}

// replied is called when broker b sent the answer on connection c: the
// connection is unmuted and its next waiting request, if any, is read.
func (w *world) replied(now sim.Instant, b *broker, c coordinator.Conn) {
	m := w.muteOf(c)
	if m == nil || m.life != b.epoch+1 {
		return
	}
	for q := w.muteQ[c]; len(q) > 0; q = w.muteQ[c] {
		di := q[0]
		if q = slices.Delete(q, 0, 1); len(q) == 0 {
			delete(w.muteQ, c)
		} else {
			w.muteQ[c] = q
		}
		if !w.connAlive(b, c) {
			var d sim.Delivery[envelope]
			w.takeDel(di, &d)
			w.msgEvent(now, tracing.EvDrop, b.name, w.nodeName(d.From), &d.Msg, tracing.FateClosed)
			continue
		}
		w.read(now, b, di)
		return
	}
	m.life = 0
}

// connAlive reports whether connection c is still open on its client's
// side: its process lives and the network's connection is the same one.
func (w *world) connAlive(b *broker, c coordinator.Conn) bool {
	ci := w.conns[c]
	s := w.slots[ci.slot]
	return s.live(ci.inc()) && w.net.Epoch(s.node, b.node, ci.ch()) == ci.epoch
}

// read hands the waiting request at dels[di] to broker b's service: an
// evServe, after the service time when the broker has one, else at now.
func (w *world) read(now sim.Instant, b *broker, di uint32) {
	at := now
	if b.service != nil {
		start := max(now, b.busyUntil)
		b.busyUntil = start.Add(b.service.Draw(b.rng))
		at = b.busyUntil
	}
	w.q.Schedule(at, ev{kind: evServe, idx: int32(b.node), di: di, inc: b.epoch})
}

// muteBrokerDied frees the waiting requests of broker b's connections when
// b dies (their mutes are stale: b.epoch moved on), in connection order.
// life is the mutes' life: the dead broker's epoch + 1 before it died.
func (w *world) muteBrokerDied(b *broker, life uint32) {
	for c := range w.mutes {
		m := &w.mutes[c]
		if m.life != life || m.broker != int32(b.node) {
			continue
		}
		for _, di := range w.muteQ[coordinator.Conn(c)] {
			var d sim.Delivery[envelope]
			w.takeDel(di, &d)
		}
		delete(w.muteQ, coordinator.Conn(c))
		*m = muteState{}
	}
}
