package client

import (
	"math"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is the client's network layer: NetworkClient's connection
// handling with ClusterConnectionStates (reconnect backoff, connection setup
// timeout) and ConsumerNetworkClient's unsent queue, as network-model.md §2
// describes them. A member holds one connection per broker for
// FindCoordinator and one separate connection to its coordinator (node id
// Integer.MAX_VALUE − broker id, AbstractCoordinator.FindCoordinatorResponseHandler).
//
// Deviations (doc.go lists them too): requests leave as soon as their
// connection is READY (no 100-in-flight cap, no partially written sends);
// timeouts and disconnects are acted on at the next thread wake-up the
// model already has, not on a 100 ms network poll cadence; ApiVersions is
// part of the harness's connection setup.

// ConnOp asks the harness to open or close one of the member's connections.
// AfterSends is how many of Output.Sends precede it.
type ConnOp struct {
	Broker     int32
	Coord      bool // the coordinator connection
	Open       bool // open (connect) or close
	AfterSends int
}

// netClient is the member's NetworkClient and ConsumerNetworkClient:
// requests in flight, network events waiting for a thread, connections.
type netClient struct {
	nextCorr   uint64
	inflight   []inflight
	queue      []queued
	conns      []connection
	connecting int // conns in connConnecting
}

// connState is ClusterConnectionStates' state of one connection.
type connState uint8

const (
	connDisconnected connState = iota // never connected, closed, or in reconnect backoff
	connConnecting                    // handshake (and ApiVersions) under way
	connReady
)

// connection is one NodeConnectionState.
type connection struct {
	broker      int32
	coord       bool
	state       connState
	attempted   bool             // ClusterConnectionStates has an entry for the node
	lastAttempt protocol.Instant // lastConnectAttemptMs: the connect start or the disconnect
	backoff     time.Duration    // reconnectBackoffMs
	setup       time.Duration    // connectionSetupTimeoutMs of the attempt under way
	failed      int32            // failedAttempts (reconnect backoff exponent)
	failedConn  int32            // failedConnectAttempts (setup timeout exponent)
}

// Kafka's defaults (CommonClientConfigs; network-model.md §2.2).
const (
	DefaultReconnectBackoff         = 50 * time.Millisecond
	DefaultReconnectBackoffMax      = time.Second
	DefaultSocketSetupTimeout       = 10 * time.Second
	DefaultSocketSetupTimeoutMax    = 30 * time.Second
	DefaultSocketSetupTimeoutMax270 = 127 * time.Second // 2.7.0 (KIP-601 as first released)
)

// netEra is what changed in the network layer across the client eras.
type netEra struct {
	exponentialReconnect bool // reconnect.backoff.max.ms (0.11, KIP-144)
	setupTimeout         bool // socket.connection.setup.timeout.ms (2.7, KIP-601)
	jitterCapped         bool // the jittered backoff is capped at its max (3.0+)
	setupMax             time.Duration
}

// netEraOf gives the network-layer era of a profile. Profiles newer than
// the table (kafka-3.8 …) behave as 3.x.
func netEraOf(profile string) netEra {
	switch profile {
	case "kafka-0.10":
		return netEra{}
	case "kafka-2.3", "kafka-2.4", "kafka-2.5", "kafka-2.6":
		return netEra{exponentialReconnect: true}
	case "kafka-2.7":
		return netEra{exponentialReconnect: true, setupTimeout: true, setupMax: DefaultSocketSetupTimeoutMax270}
	case "kafka-2.8", "kafka-2.x":
		return netEra{exponentialReconnect: true, setupTimeout: true, setupMax: DefaultSocketSetupTimeoutMax}
	}
	return netEra{exponentialReconnect: true, setupTimeout: true, jitterCapped: true, setupMax: DefaultSocketSetupTimeoutMax}
}

// connectionFor returns the member's connection to broker (its coordinator
// connection with coord), creating its state on first use.
func (m *Member) connectionFor(broker int32, coord bool) *connection {
	if c := m.findConnection(broker, coord); c != nil {
		return c
	}
	m.net.conns = append(m.net.conns, connection{broker: broker, coord: coord})
	return &m.net.conns[len(m.net.conns)-1]
}

func (m *Member) findConnection(broker int32, coord bool) *connection {
	for i := range m.net.conns {
		if m.net.conns[i].broker == broker && m.net.conns[i].coord == coord {
			return &m.net.conns[i]
		}
	}
	return nil
}

// canConnect is ClusterConnectionStates.canConnect: disconnected and the
// reconnect backoff since the last attempt has passed.
func (c *connection) canConnect(now protocol.Instant) bool {
	return c.state == connDisconnected && (!c.attempted || now >= c.lastAttempt.Add(c.backoff))
}

// inBackoff is ConsumerNetworkClient.isUnavailable: connectionFailed (the
// state is DISCONNECTED) and connectionDelay > 0.
func (c *connection) inBackoff(now protocol.Instant) bool {
	return c.state == connDisconnected && c.attempted && now < c.lastAttempt.Add(c.backoff)
}

// backoffValue is ExponentialBackoff(base, 2, max, 0.2).backoff(k); 0.10
// has a fixed reconnect.backoff.ms without jitter.
func (m *Member) backoffValue(base, maxD time.Duration, k int32, exponential, capped bool) time.Duration {
	if !exponential {
		return base
	}
	return protocol.ExponentialBackoff(base, maxD, k, m.rng, capped)
}

// initiateConnect is NetworkClient.initiateConnect with
// ClusterConnectionStates.connecting: the attempt's setup timeout is drawn
// from failedConnectAttempts (KIP-601).
func (m *Member) initiateConnect(now protocol.Instant, out *Output, c *connection) {
	m.setConnState(c, connConnecting)
	c.attempted = true
	c.lastAttempt = now
	if m.cfg.era.setupTimeout {
		c.setup = m.backoffValue(m.cfg.SocketSetupTimeout, m.cfg.SocketSetupTimeoutMax, c.failedConn, true, true)
	}
	out.Conns = append(out.Conns, ConnOp{Broker: c.broker, Coord: c.coord, Open: true, AfterSends: len(out.Sends)})
	m.emit(out, protocol.Event{Kind: protocol.EvConnect, Peer: brokerName(c.broker), Detail: connDetail(c.coord), Count: c.failed, Gen: m.gen.id})
}

func connDetail(coord bool) string {
	if coord {
		return "coordinator"
	}
	return "node"
}

// disconnected is ClusterConnectionStates.disconnected: DISCONNECTED, the
// backoff clock restarts at now and the exponent grows (failedAttempts++).
// A failed connect attempt also grows the setup timeout's exponent.
func (m *Member) disconnected(now protocol.Instant, c *connection) {
	if c.state == connConnecting {
		c.failedConn++
	} else {
		c.failedConn = 0
	}
	m.setConnState(c, connDisconnected)
	c.attempted = true
	c.lastAttempt = now
	c.backoff = m.backoffValue(m.cfg.ReconnectBackoff, m.cfg.ReconnectBackoffMax, c.failed, m.cfg.era.exponentialReconnect, m.cfg.era.jitterCapped)
	c.failed++
}

// closeConnection is NetworkClient.close(node) (a request timeout,
// disconnectAsync after markCoordinatorUnknown, a setup timeout) or a
// disconnect noticed from below (why says which): the connection is
// DISCONNECTED and every request on it, in flight or unsent, fails with a
// DisconnectException. tellHarness: the member closes it (else the network
// already did).
func (m *Member) closeConnection(now protocol.Instant, out *Output, c *connection, why string, tellHarness bool) {
	if c.state == connDisconnected {
		m.failConnection(now, out, c.broker, c.coord, false, 0)
		return
	}
	m.disconnected(now, c)
	if tellHarness {
		out.Conns = append(out.Conns, ConnOp{Broker: c.broker, Coord: c.coord, AfterSends: len(out.Sends)})
	}
	m.emit(out, protocol.Event{Kind: protocol.EvDisconnected, Peer: brokerName(c.broker), Detail: connDetail(c.coord),
		Reason: why, Count: int32(c.backoff.Milliseconds()), Gen: m.gen.id})
	m.failConnection(now, out, c.broker, c.coord, false, 0)
}

// connected: the connection is READY (ClusterConnectionStates.ready resets
// both exponents); its unsent requests leave now (ConsumerNetworkClient
// .trySend stamps their send time).
func (m *Member) connected(now protocol.Instant, out *Output, broker int32, coord bool) {
	c := m.findConnection(broker, coord)
	if c == nil || c.state != connConnecting {
		return
	}
	m.setConnState(c, connReady)
	c.failed, c.failedConn = 0, 0
	c.backoff = m.cfg.ReconnectBackoff
	m.emit(out, protocol.Event{Kind: protocol.EvConnected, Peer: brokerName(broker), Detail: connDetail(coord), Gen: m.gen.id})
	for i := range m.net.inflight {
		e := &m.net.inflight[i]
		if e.unsent && !e.failNow && e.broker == broker && e.coordConn == coord {
			e.unsent = false
			e.deadline = now.Add(e.timeout)
			out.Sends = append(out.Sends, Send{Broker: broker, Corr: e.corr, Req: e.req, Coord: coord})
			e.req = nil
		}
	}
}

// connectFailed: the attempt was refused (RST) or the kernel gave up on
// its SYNs.
func (m *Member) connectFailed(now protocol.Instant, out *Output, broker int32, coord bool) {
	c := m.findConnection(broker, coord)
	if c == nil || c.state != connConnecting {
		return
	}
	m.closeConnection(now, out, c, "refused", false)
}

// remoteDisconnect: the peer closed the connection (FIN/RST) or the
// kernel gave up retransmitting (tcp_retries2).
func (m *Member) remoteDisconnect(now protocol.Instant, out *Output, broker int32, coord bool, why string) {
	c := m.findConnection(broker, coord)
	if c == nil || c.state == connDisconnected {
		return
	}
	m.closeConnection(now, out, c, why, false)
}

// tryConnect is NetworkClient.tryConnect after FindCoordinator succeeded:
// a connection to the coordinator is started unless one exists or it is in
// backoff.
func (m *Member) tryConnect(now protocol.Instant, out *Output, broker int32) {
	c := m.connectionFor(broker, true)
	if c.canConnect(now) {
		m.initiateConnect(now, out, c)
	}
}

// leastLoadedNode is NetworkClient.leastLoadedNode for FindCoordinator,
// starting from a rotating offset: a READY connection with the fewest
// requests in flight, else one being set up, else one that may connect;
// -1 when every broker is in reconnect backoff.
func (m *Member) leastLoadedNode(now protocol.Instant) int32 {
	n := len(m.cfg.Brokers)
	best, bestLoad := int32(-1), math.MaxInt
	connecting, connectable := int32(-1), int32(-1)
	for k := 0; k < n; k++ {
		b := m.cfg.Brokers[(m.coord.nextBroker+k)%n]
		c := m.findConnection(b, false)
		switch {
		case c == nil || c.canConnect(now):
			if connectable < 0 {
				connectable = b
			}
		case c.state == connReady:
			load := 0
			for i := range m.net.inflight {
				if m.net.inflight[i].broker == b && !m.net.inflight[i].coordConn && !m.net.inflight[i].unsent {
					load++
				}
			}
			if load < bestLoad {
				best, bestLoad = b, load
			}
		case c.state == connConnecting:
			if connecting < 0 {
				connecting = b
			}
		}
	}
	m.coord.nextBroker++
	switch {
	case best >= 0:
		return best
	case connecting >= 0:
		return connecting
	}
	return connectable
}

// nextConnDeadline is the earliest setup timeout of a connecting connection.
func (m *Member) nextConnDeadline() protocol.Instant {
	d := protocol.Never
	if !m.cfg.era.setupTimeout || m.net.connecting == 0 {
		return d
	}
	for i := range m.net.conns {
		if c := &m.net.conns[i]; c.state == connConnecting {
			// Strictly after: now − lastConnectAttemptMs > timeout.
			d = min(d, c.lastAttempt.Add(c.setup+time.Millisecond))
		}
	}
	return d
}

// handleSetupTimeouts is NetworkClient.handleTimedOutConnections (KIP-601).
func (m *Member) handleSetupTimeouts(now protocol.Instant, out *Output) {
	if !m.cfg.era.setupTimeout || m.net.connecting == 0 {
		return
	}
	for i := range m.net.conns {
		if c := &m.net.conns[i]; c.state == connConnecting && now > c.lastAttempt.Add(c.setup) {
			m.closeConnection(now, out, c, "setup-timeout", true)
		}
	}
}

// applyNetDefaults fills the zero connection settings with Kafka's defaults
// for cfg's era.
func applyNetDefaults(cfg *Config) {
	era := netEraOf(string(cfg.Profile))
	if cfg.ReconnectBackoff == 0 {
		cfg.ReconnectBackoff = DefaultReconnectBackoff
	}
	if cfg.ReconnectBackoffMax == 0 {
		cfg.ReconnectBackoffMax = DefaultReconnectBackoffMax
	}
	if !era.exponentialReconnect {
		cfg.ReconnectBackoffMax = cfg.ReconnectBackoff
	}
	if cfg.SocketSetupTimeout == 0 {
		cfg.SocketSetupTimeout = DefaultSocketSetupTimeout
	}
	if cfg.SocketSetupTimeoutMax == 0 {
		cfg.SocketSetupTimeoutMax = era.setupMax
		if cfg.SocketSetupTimeoutMax == 0 {
			cfg.SocketSetupTimeoutMax = DefaultSocketSetupTimeoutMax
		}
	}
}

// setConnState changes a connection's state, counting the connecting ones.
func (m *Member) setConnState(c *connection, to connState) {
	if c.state == connConnecting {
		m.net.connecting--
	}
	if to == connConnecting {
		m.net.connecting++
	}
	c.state = to
}

// inflight is one request awaiting its response (NetworkClient's in-flight
// requests plus the handler's captured sentGeneration).
type inflight struct {
	corr      uint64
	deadline  protocol.Instant
	broker    int32
	api       protocol.APIKey
	coordConn bool       // the coordinator connection (node id MAX_VALUE - broker), not the ordinary one
	commit    commitKind // OffsetCommit: whose future listens (commit.go)
	sentGen   generation
	// unsent: still in ConsumerNetworkClient's unsent queue (its connection
	// is being set up); deadline then counts from its creation and its
	// expiry is a TimeoutException, not a disconnect. failNow: its node is
	// in reconnect backoff, so it fails as a disconnect at the next poll
	// (checkDisconnects).
	unsent  bool
	failNow bool
	timeout time.Duration
	req     protocol.Request // kept while unsent
}

// queuedKind is what a queued network event is.
type queuedKind uint8

const (
	qResponse      queuedKind = iota
	qDisconnect               // every connection to broker was reset (Disconnected)
	qConnDown                 // one connection was closed by the peer or the kernel
	qConnected                // one connection is READY
	qConnectFailed            // one connection attempt failed
)

// queued is a network event no thread could handle yet.
type queued struct {
	kind   queuedKind
	coord  bool // which connection (qConnDown, qConnected, qConnectFailed)
	broker int32
	corr   uint64            // response: its correlation id; disconnect: the highest corr sent before it
	resp   protocol.Response // qResponse
	why    string            // qConnDown: peer-closed, or reset (an RST, or tcp_retries2 gave up)
}

// send appends a request to out and records it in flight.
//
// ConsumerNetworkClient.send + trySend: on a READY connection the request
// leaves now; on one being set up it waits in the unsent queue; a
// disconnected one is connected first (unsent meanwhile), unless it is in
// reconnect backoff, when the request fails as a disconnect at the next poll
// (checkDisconnects).
func (m *Member) send(now protocol.Instant, out *Output, broker int32, coordConn bool, req protocol.Request, timeout time.Duration) uint64 {
	corr := m.net.nextCorr
	m.net.nextCorr++
	e := inflight{
		corr: corr, deadline: now.Add(timeout), broker: broker, api: req.API(),
		coordConn: coordConn, sentGen: m.gen, timeout: timeout,
	}
	c := m.connectionFor(broker, coordConn)
	switch c.state {
	case connReady:
		out.Sends = append(out.Sends, Send{Broker: broker, Corr: corr, Req: req, Coord: coordConn})
	case connConnecting:
		e.unsent, e.req = true, req
	case connDisconnected:
		e.unsent, e.req = true, req
		if c.canConnect(now) {
			m.initiateConnect(now, out, c)
		} else {
			e.failNow, e.deadline = true, now
		}
	}
	m.net.inflight = append(m.net.inflight, e)
	return corr
}

// earliestInflight is the next network deadline: a request timeout, an
// unsent request's expiry or a connection setup timeout.
func (m *Member) earliestInflight() protocol.Instant {
	d := m.nextConnDeadline()
	for i := range m.net.inflight {
		d = min(d, m.net.inflight[i].deadline)
	}
	return d
}

// failConnection fails every in-flight request on one connection (or, with
// anyConn, on every connection to broker) with corr <= upTo (0: all), as
// DisconnectExceptions (NetworkClient closing the connection).
func (m *Member) failConnection(now protocol.Instant, out *Output, broker int32, coordConn, anyConn bool, upTo uint64) {
	list := m.cfg.scratch[:0]
	m.cfg.scratch = nil // a nested call (or another member's) allocates its own
	kept := m.net.inflight[:0]
	for _, e := range m.net.inflight {
		if e.broker == broker && (anyConn || e.coordConn == coordConn) && (upTo == 0 || e.corr <= upTo) {
			list = append(list, e)
		} else {
			kept = append(kept, e)
		}
	}
	m.net.inflight = kept
	for _, e := range list {
		m.onRequestFailure(now, out, e, true)
	}
	m.cfg.scratch = list[:0]
}

// handleTimeouts is NetworkClient.handleTimedOutRequests: a request past its
// deadline closes its connection; every request on it fails as a disconnect.
//
// Before it, handleTimedOutConnections (setup timeouts). An unsent request
// whose node is in reconnect backoff fails as a disconnect
// (checkDisconnects); one that waited request.timeout.ms since its creation
// fails alone with a TimeoutException and closes nothing
// (ConsumerNetworkClient.failExpiredRequests).
func (m *Member) handleTimeouts(now protocol.Instant, out *Output) {
	m.handleSetupTimeouts(now, out)
	for range maxTimersPerTick {
		idx := -1
		for i := range m.net.inflight {
			if m.net.inflight[i].deadline <= now && (idx < 0 || m.net.inflight[i].deadline < m.net.inflight[idx].deadline) {
				idx = i
			}
		}
		if idx < 0 || m.stopped {
			return
		}
		e := m.net.inflight[idx]
		if e.unsent {
			m.net.inflight = slices.Delete(m.net.inflight, idx, idx+1)
			if !e.failNow {
				m.emit(out, protocol.Event{Kind: protocol.EvRequestTimeout, API: e.api, Peer: brokerName(e.broker), Detail: "unsent", Gen: m.gen.id, ReqCorr: e.corr})
			}
			m.onRequestFailure(now, out, e, e.failNow)
			continue
		}
		m.emit(out, protocol.Event{Kind: protocol.EvRequestTimeout, API: e.api, Peer: brokerName(e.broker), Gen: m.gen.id, ReqCorr: e.corr})
		if e.coordConn && m.coord.known && m.coord.node == e.broker {
			m.markCoordinatorUnknown(now, out, deadRequestTimeout, protocol.None, true)
		}
		// Every request was sent through connectionFor: its state exists.
		c := m.findConnection(e.broker, e.coordConn)
		if c == nil {
			m.assertFailed(out, "net", "a request timed out on a connection the client never had")
			return
		}
		m.closeConnection(now, out, c, "request-timeout", true)
	}
}

// flushQueue handles queued network events in arrival order on the current
// thread. It returns false when the application thread stopped polling
// (it became busy or the member stopped) and events may remain queued.
func (m *Member) flushQueue(now protocol.Instant, out *Output) bool {
	for len(m.net.queue) > 0 {
		if m.stopped || (m.onApp && m.app.phase != appPolling) {
			return false
		}
		q := m.net.queue[0]
		copy(m.net.queue, m.net.queue[1:])
		m.net.queue = m.net.queue[:len(m.net.queue)-1]
		switch q.kind {
		case qResponse:
			m.handleResponse(now, out, q.corr, q.resp)
		case qDisconnect:
			for i := range m.net.conns {
				if c := &m.net.conns[i]; c.broker == q.broker && c.state != connDisconnected {
					m.disconnected(now, c)
				}
			}
			m.failConnection(now, out, q.broker, false, true, q.corr)
		case qConnDown:
			m.remoteDisconnect(now, out, q.broker, q.coord, q.why)
		case qConnected:
			m.connected(now, out, q.broker, q.coord)
		case qConnectFailed:
			m.connectFailed(now, out, q.broker, q.coord)
		}
	}
	return !m.stopped && (!m.onApp || m.app.phase == appPolling)
}
