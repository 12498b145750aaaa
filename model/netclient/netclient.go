// Package netclient is the consumer's network layer, shared by both group
// protocols' clients: Kafka's NetworkClient with ClusterConnectionStates
// (connections per broker, reconnect.backoff(.max).ms with jitter,
// socket.connection.setup.timeout(.max).ms, least-loaded node, request.timeout.ms
// closing the connection and failing every request in flight on it) and the
// unsent queue in front of it — ConsumerNetworkClient for the classic
// KafkaConsumer (model/classic/client), NetworkClientDelegate for the
// AsyncKafkaConsumer of the consumer protocol (model/consumer/client), which
// in Kafka 4.x sits on the same NetworkClient. network-model.md §2 describes
// it.
//
// A client holds one connection per broker for requests sent to a node
// (FindCoordinator) and one separate connection to its coordinator (node id
// Integer.MAX_VALUE − broker id, AbstractCoordinator.FindCoordinatorResponseHandler
// and CoordinatorRequestManager). What changed across releases is an Era,
// chosen once per client.
//
// Like the models around it, a Client is a pure state machine: it returns the
// requests to send and the connections to open or close in an Output, and it
// calls its Owner (the member or process it belongs to) for what is the
// owner's business: the events it emits, the random stream, and the failure
// of a request (the handler's onFailure).
//
// Deviations: requests leave as soon as their connection is READY (no
// 100-in-flight cap, no partially written sends); timeouts and disconnects
// are acted on at the next thread wake-up the owner already has, not on a
// network poll cadence; ApiVersions is part of the harness's connection
// setup.
package netclient

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Send is one request the client asks the harness to send.
type Send struct {
	Broker int32  // destination broker id
	Corr   uint64 // correlation id, unique per client; the response carries it back
	Req    protocol.Request
	Coord  bool // on the coordinator connection (else the broker's ordinary one)
}

// ConnOp asks the harness to open or close one of the client's connections.
// AfterSends is how many of Output.Sends precede it.
type ConnOp struct {
	Broker     int32
	Coord      bool // the coordinator connection
	Open       bool // open (connect) or close
	AfterSends int
}

// Output collects what one call into a client's model produced, in order.
// The caller owns the buffer and resets it between calls.
type Output struct {
	Sends  []Send
	Events []protocol.Event
	Conns  []ConnOp // connections to open or close
}

// Reset empties the buffers, keeping capacity.
func (o *Output) Reset() {
	o.Sends = o.Sends[:0]
	o.Events = o.Events[:0]
	o.Conns = o.Conns[:0]
}

// Kafka's defaults (CommonClientConfigs; network-model.md §2.2).
const (
	DefaultReconnectBackoff         = 50 * time.Millisecond
	DefaultReconnectBackoffMax      = time.Second
	DefaultSocketSetupTimeout       = 10 * time.Second
	DefaultSocketSetupTimeoutMax    = 30 * time.Second
	DefaultSocketSetupTimeoutMax270 = 127 * time.Second // 2.7.0 (KIP-601 as first released)
)

// maxTimersPerTick bounds the expired requests one HandleTimeouts handles
// (TIGER_STYLE: a limit on everything); the owner's next tick resumes.
const maxTimersPerTick = 64

// Era is what changed in the network layer across the client releases.
// The client's profile row chooses one of the named eras below (Era010 …
// Era37); nothing here looks at a profile name.
type Era struct {
	ExponentialReconnect bool // reconnect.backoff.max.ms (0.11, KIP-144)
	SetupTimeout         bool // socket.connection.setup.timeout.ms (2.7, KIP-601)
	// JitterCapped: the jittered reconnect backoff and setup timeout are
	// capped at their maximum (3.7.0: ExponentialBackoff.backoff returns
	// min(value, maxInterval), KIP-580's rewrite). 2.7.0–3.6.x return the
	// jittered value uncapped, up to 1.2 × max (ExponentialBackoff.backoff
	// @2.7.0 … @3.6.2).
	JitterCapped bool
	// OldestAttempt: leastLoadedNode prefers, among the nodes that may
	// connect, the one whose last connection attempt is oldest (2.7.0,
	// KIP-601: NetworkClient.leastLoadedNode @2.7.0); before, the last such
	// node in its random-offset order (NetworkClient.leastLoadedNode @2.3.0
	// … @2.6.3).
	OldestAttempt bool
	SetupMax      time.Duration
	// EnqueueTimer: request.timeout.ms counts from the request's enqueue,
	// not from its send (NetworkClientDelegate.UnsentRequest's timer, whose
	// remainder becomes the ClientRequest's timeout: makeClientRequest,
	// AsyncKafkaConsumer 3.7+). ConsumerNetworkClient.trySend starts the
	// timeout when the request leaves.
	EnqueueTimer bool
}

// The network-layer eras of the Kafka clients. A client profile row names
// one (model/classic/client profileTable); patch releases share their minor's era
// (CommonClientConfigs, ClusterConnectionStates, ExponentialBackoff and
// NetworkClient.leastLoadedNode are the same across 2.6.0–2.6.3,
// 2.7.0–2.7.2, 2.8.0–2.8.2).
var (
	// Era010: a fixed reconnect.backoff.ms, no jitter (0.10.0).
	Era010 = Era{}
	// Era23: 2.3–2.6.x: exponential reconnect backoff with ±20 % jitter
	// (KIP-144, 0.11), no connection setup timeout.
	Era23 = Era{ExponentialReconnect: true}
	// Era27: 2.7.x: KIP-601's setup timeout, its max 127 s
	// (CommonClientConfigs.DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS
	// @2.7.0 … @2.7.2), leastLoadedNode's oldest-attempt preference.
	Era27 = Era{ExponentialReconnect: true, SetupTimeout: true, OldestAttempt: true, SetupMax: DefaultSocketSetupTimeoutMax270}
	// Era28: 2.8.0–3.6.x: the setup timeout's max is 30 s (@2.8.0); the
	// jittered values are still uncapped.
	Era28 = Era{ExponentialReconnect: true, SetupTimeout: true, OldestAttempt: true, SetupMax: DefaultSocketSetupTimeoutMax}
	// Era37: 3.7.0 and later: the jittered values are capped at their max
	// (ExponentialBackoff.backoff @3.7.0).
	Era37 = Era{ExponentialReconnect: true, SetupTimeout: true, OldestAttempt: true, JitterCapped: true, SetupMax: DefaultSocketSetupTimeoutMax}
)

// AsyncEra is the era of the AsyncKafkaConsumer (group.protocol=consumer,
// Kafka 4.0+): the 3.7+ NetworkClient under NetworkClientDelegate.
func AsyncEra() Era {
	e := Era37
	e.EnqueueTimer = true
	return e
}

// Config is the network layer's configuration (Kafka property names in the
// comments) and its era.
type Config struct {
	Era                   Era
	ReconnectBackoff      time.Duration // reconnect.backoff.ms
	ReconnectBackoffMax   time.Duration // reconnect.backoff.max.ms
	SocketSetupTimeout    time.Duration // socket.connection.setup.timeout.ms
	SocketSetupTimeoutMax time.Duration // socket.connection.setup.timeout.max.ms
}

// ApplyDefaults fills the zero settings with Kafka's defaults for c.Era.
func (c *Config) ApplyDefaults() {
	if c.ReconnectBackoff == 0 {
		c.ReconnectBackoff = DefaultReconnectBackoff
	}
	if c.ReconnectBackoffMax == 0 {
		c.ReconnectBackoffMax = DefaultReconnectBackoffMax
	}
	if !c.Era.ExponentialReconnect {
		c.ReconnectBackoffMax = c.ReconnectBackoff
	}
	if c.SocketSetupTimeout == 0 {
		c.SocketSetupTimeout = DefaultSocketSetupTimeout
	}
	if c.SocketSetupTimeoutMax == 0 {
		c.SocketSetupTimeoutMax = c.Era.SetupMax
		if c.SocketSetupTimeoutMax == 0 {
			c.SocketSetupTimeoutMax = DefaultSocketSetupTimeoutMax
		}
	}
}

// Owner is what a Client calls back into: the member or process it belongs
// to. T is the data the owner keeps with each request (the handler's
// captured state, e.g. the classic client's sentGeneration).
type Owner[T any] interface {
	// Net is the client's configuration.
	Net() *Config
	// Rand is the owner's random stream (backoff jitter).
	Rand() *rand.Rand
	// Emit adds an event of the network layer to out, filling in the
	// owner's fields (node, group, generation).
	Emit(out *Output, ev protocol.Event)
	// Failed is the request handler's onFailure: a DisconnectException
	// (disconnect) or, for an unsent request that expired, a
	// TimeoutException.
	Failed(now protocol.Instant, out *Output, r Request[T], disconnect bool)
	// TimedOut is called when a sent request passed its deadline, before
	// its connection is closed (the owner may mark its coordinator unknown
	// with cause request-timeout).
	TimedOut(now protocol.Instant, out *Output, r Request[T])
	// Stopped: the owner stopped; nothing more is handled.
	Stopped() bool
	// Scratch is a reusable buffer for the requests one close fails; a
	// nested close takes it and leaves nil.
	Scratch() *[]Request[T]
	// Invariant reports a broken invariant of the network layer.
	Invariant(out *Output, msg string)
}

// Client is one consumer's NetworkClient: requests in flight (sent or
// waiting in the unsent queue) and connections. Its zero value is ready to
// use; correlation ids start at 1.
type Client[T any] struct {
	lastCorr   uint64
	inflight   []Request[T]
	conns      []Conn
	connecting int // conns in Connecting
}

// ConnState is ClusterConnectionStates' state of one connection.
type ConnState uint8

const (
	Disconnected ConnState = iota // never connected, closed, or in reconnect backoff
	Connecting                    // handshake (and ApiVersions) under way
	Ready
)

// Conn is one NodeConnectionState.
type Conn struct {
	broker      int32
	coord       bool
	state       ConnState
	attempted   bool             // ClusterConnectionStates has an entry for the node
	lastAttempt protocol.Instant // lastConnectAttemptMs: the connect start or the disconnect
	backoff     time.Duration    // reconnectBackoffMs
	setup       time.Duration    // connectionSetupTimeoutMs of the attempt under way
	failed      int32            // failedAttempts (reconnect backoff exponent)
	failedConn  int32            // failedConnectAttempts (setup timeout exponent)
}

// State is the connection's state.
func (c *Conn) State() ConnState { return c.state }

// Backoff is the reconnect backoff in force after the last disconnect.
func (c *Conn) Backoff() time.Duration { return c.backoff }

// SetupTimeout is the setup timeout of the attempt under way (or the last).
func (c *Conn) SetupTimeout() time.Duration { return c.setup }

// FailedConnectAttempts is failedConnectAttempts (the setup timeout's exponent).
func (c *Conn) FailedConnectAttempts() int32 { return c.failedConn }

// CanConnect is ClusterConnectionStates.canConnect: disconnected and the
// reconnect backoff since the last attempt has passed.
func (c *Conn) CanConnect(now protocol.Instant) bool {
	return c.state == Disconnected && (!c.attempted || now >= c.lastAttempt.Add(c.backoff))
}

// InBackoff is ConsumerNetworkClient.isUnavailable and
// NetworkClientDelegate.nodeUnavailable: connectionFailed (the state is
// DISCONNECTED) and connectionDelay > 0.
func (c *Conn) InBackoff(now protocol.Instant) bool {
	return c.state == Disconnected && c.attempted && now < c.lastAttempt.Add(c.backoff)
}

// Failed is ClusterConnectionStates.connectionFailed as 0.10's
// coordinatorUnknown read it: disconnected after an attempt, backoff or not.
func (c *Conn) Failed() bool { return c.state == Disconnected && c.attempted }

// ReconnectAt is when a disconnected connection may connect again.
func (c *Conn) ReconnectAt() protocol.Instant {
	if !c.attempted {
		return 0
	}
	return c.lastAttempt.Add(c.backoff)
}

// Request is one request awaiting its response (NetworkClient's in-flight
// requests, or one in the unsent queue) with the owner's data.
type Request[T any] struct {
	Corr     uint64
	Deadline protocol.Instant
	Broker   int32
	API      protocol.APIKey
	// flags: reqCoord, on the coordinator connection (node id MAX_VALUE -
	// broker), not the ordinary one; reqUnsent, still in the unsent queue
	// (its connection is being set up; its expiry is a TimeoutException,
	// not a disconnect); reqFailNow, its node is in reconnect backoff, so it
	// fails as a disconnect at the next poll (checkDisconnects). Bits of one
	// byte, not three bools, so the entry stays within requestSize.
	flags uint8
	// Tag is a small datum of the owner's beside Data, in what would be
	// padding (TagLast sets it): the classic member's commit kind, so its
	// Data is one pointer and the entry within requestSize.
	Tag  uint8
	Data T
	// held is the request and its timeout, kept while unsent (nil once it
	// left): behind a pointer because almost every request leaves at once
	// on a READY connection, so an entry is 24 bytes smaller: a steady
	// consumer's two in-flight entries fit 80 bytes, not 128.
	held *heldRequest
}

// requestSize is Request's size on 64-bit platforms with a pointer-sized
// Data (the classic member's): a steady consumer holds two in flight, and
// two fit the 80-byte allocation size class; change it deliberately.
const requestSize = 40

var _ [requestSize - unsafe.Sizeof(Request[*int]{})]struct{} // fails to compile if Request grows

const (
	reqCoord uint8 = 1 << iota
	reqUnsent
	reqFailNow
)

// heldRequest is an unsent request waiting for its connection.
type heldRequest struct {
	req     protocol.Request
	timeout time.Duration
}

// Coord reports whether the request is on the coordinator connection (node
// id MAX_VALUE - broker), not the ordinary one.
func (r *Request[T]) Coord() bool { return r.flags&reqCoord != 0 }

// Unsent reports whether the request still waits in the unsent queue.
func (r *Request[T]) Unsent() bool { return r.flags&reqUnsent != 0 }

// failNow: the request's node is in reconnect backoff, so it fails as a
// disconnect at the next poll (checkDisconnects).
func (r *Request[T]) failNow() bool { return r.flags&reqFailNow != 0 }

// BrokerName is a broker's id as events carry it.
func BrokerName(id int32) string { return strconv.Itoa(int(id)) }

func connDetail(coord bool) string {
	if coord {
		return "coordinator"
	}
	return "node"
}

// Conn returns the connection to broker (the coordinator connection with
// coord), or nil if the client never had one.
func (n *Client[T]) Conn(broker int32, coord bool) *Conn {
	for i := range n.conns {
		if n.conns[i].broker == broker && n.conns[i].coord == coord {
			return &n.conns[i]
		}
	}
	return nil
}

// ConnHinted is Conn with a caller's hint of the connection's position
// (connections are never removed, so a position once found stays right):
// one comparison instead of a scan on the hot path (the lazy poll replay asks
// for the coordinator connection at every member event). A miss scans and
// updates the hint.
func (n *Client[T]) ConnHinted(broker int32, coord bool, hint *uint16) *Conn {
	if i := int(*hint); i < len(n.conns) && n.conns[i].broker == broker && n.conns[i].coord == coord {
		return &n.conns[i]
	}
	for i := range n.conns {
		if n.conns[i].broker == broker && n.conns[i].coord == coord {
			if i <= math.MaxUint16 {
				*hint = uint16(i)
			}
			return &n.conns[i]
		}
	}
	return nil
}

// ConnFor returns the connection to broker, creating its state on first use.
func (n *Client[T]) ConnFor(broker int32, coord bool) *Conn {
	if c := n.Conn(broker, coord); c != nil {
		return c
	}
	n.conns = append(n.conns, Conn{broker: broker, coord: coord})
	return &n.conns[len(n.conns)-1]
}

// Inflight is the list of requests in flight or unsent. Shared: do not
// mutate.
func (n *Client[T]) Inflight() []Request[T] { return n.inflight }

// Find returns the request with correlation id corr, or nil.
func (n *Client[T]) Find(corr uint64) *Request[T] {
	for i := range n.inflight {
		if n.inflight[i].Corr == corr {
			return &n.inflight[i]
		}
	}
	return nil
}

// Complete removes and returns the request a response with correlation id
// corr answers; false when it is no longer in flight (timed out,
// disconnected): NetworkClient drops such a response with its connection.
func (n *Client[T]) Complete(corr uint64) (Request[T], bool) {
	for i := range n.inflight {
		if n.inflight[i].Corr == corr {
			r := n.inflight[i]
			n.inflight = slices.Delete(n.inflight, i, i+1)
			return r, true
		}
	}
	return Request[T]{}, false
}

// LastCorr is the highest correlation id given out so far.
func (n *Client[T]) LastCorr() uint64 { return n.lastCorr }

// Clear forgets every request (the client stopped); connections stay.
func (n *Client[T]) Clear() { n.inflight = n.inflight[:0] }

// backoffValue is ExponentialBackoff(base, 2, max, 0.2).backoff(k); 0.10
// has a fixed reconnect.backoff.ms without jitter.
func backoffValue(rng *rand.Rand, base, maxD time.Duration, k int32, exponential, capped bool) time.Duration {
	if !exponential {
		return base
	}
	return protocol.ExponentialBackoff(base, maxD, k, rng, capped)
}

// setState changes a connection's state, counting the connecting ones.
func (n *Client[T]) setState(c *Conn, to ConnState) {
	if c.state == Connecting {
		n.connecting--
	}
	if to == Connecting {
		n.connecting++
	}
	c.state = to
}

// initiateConnect is NetworkClient.initiateConnect with
// ClusterConnectionStates.connecting: the attempt's setup timeout is drawn
// from failedConnectAttempts (KIP-601).
func (n *Client[T]) initiateConnect(now protocol.Instant, out *Output, c *Conn, o Owner[T]) {
	cfg := o.Net()
	n.setState(c, Connecting)
	c.attempted = true
	c.lastAttempt = now
	if cfg.Era.SetupTimeout {
		// ClusterConnectionStates.updateConnectionSetupTimeout: the same
		// ExponentialBackoff as the reconnect backoff, capped from 3.7.0.
		c.setup = backoffValue(o.Rand(), cfg.SocketSetupTimeout, cfg.SocketSetupTimeoutMax, c.failedConn, true, cfg.Era.JitterCapped)
	}
	out.Conns = append(out.Conns, ConnOp{Broker: c.broker, Coord: c.coord, Open: true, AfterSends: len(out.Sends)})
	o.Emit(out, protocol.Event{Kind: protocol.EvConnect, Peer: BrokerName(c.broker), Detail: connDetail(c.coord), Count: c.failed})
}

// Disconnect is ClusterConnectionStates.disconnected: DISCONNECTED, the
// backoff clock restarts at now and the exponent grows (failedAttempts++).
// A failed connect attempt also grows the setup timeout's exponent. The
// requests on the connection are not touched (Close fails them).
func (n *Client[T]) Disconnect(now protocol.Instant, c *Conn, o Owner[T]) {
	cfg := o.Net()
	if c.state == Connecting {
		c.failedConn++
	} else {
		c.failedConn = 0
	}
	n.setState(c, Disconnected)
	c.attempted = true
	c.lastAttempt = now
	c.backoff = backoffValue(o.Rand(), cfg.ReconnectBackoff, cfg.ReconnectBackoffMax, c.failed, cfg.Era.ExponentialReconnect, cfg.Era.JitterCapped)
	c.failed++
}

// Close is NetworkClient.close(node) (a request timeout, disconnectAsync
// after markCoordinatorUnknown, a setup timeout) or a disconnect noticed
// from below (why says which): the connection is DISCONNECTED and every
// request on it, in flight or unsent, fails with a DisconnectException.
// tellHarness: the client closes it (else the network already did).
func (n *Client[T]) Close(now protocol.Instant, out *Output, c *Conn, why string, tellHarness bool, o Owner[T]) {
	if c.state == Disconnected {
		n.fail(now, out, c.broker, c.coord, false, 0, o)
		return
	}
	n.Disconnect(now, c, o)
	if tellHarness {
		out.Conns = append(out.Conns, ConnOp{Broker: c.broker, Coord: c.coord, AfterSends: len(out.Sends)})
	}
	o.Emit(out, protocol.Event{Kind: protocol.EvDisconnected, Peer: BrokerName(c.broker), Detail: connDetail(c.coord),
		Reason: why, Count: int32(c.backoff.Milliseconds())})
	n.fail(now, out, c.broker, c.coord, false, 0, o)
}

// Connected: the connection is READY (ClusterConnectionStates.ready resets
// both exponents); its unsent requests leave now (ConsumerNetworkClient
// .trySend stamps their send time; NetworkClientDelegate keeps the
// enqueue's timer). It reports whether the connection was being set up.
func (n *Client[T]) Connected(now protocol.Instant, out *Output, broker int32, coord bool, o Owner[T]) bool {
	c := n.Conn(broker, coord)
	if c == nil || c.state != Connecting {
		return false
	}
	cfg := o.Net()
	n.setState(c, Ready)
	c.failed, c.failedConn = 0, 0
	c.backoff = cfg.ReconnectBackoff
	o.Emit(out, protocol.Event{Kind: protocol.EvConnected, Peer: BrokerName(broker), Detail: connDetail(coord)})
	for i := range n.inflight {
		e := &n.inflight[i]
		if e.Unsent() && !e.failNow() && e.Broker == broker && e.Coord() == coord {
			e.flags &^= reqUnsent
			if !cfg.Era.EnqueueTimer {
				e.Deadline = now.Add(e.held.timeout)
			}
			out.Sends = append(out.Sends, Send{Broker: broker, Corr: e.Corr, Req: e.held.req, Coord: coord})
			e.held = nil
		}
	}
	return true
}

// ConnectFailed: the attempt was refused (RST) or the kernel gave up on
// its SYNs.
func (n *Client[T]) ConnectFailed(now protocol.Instant, out *Output, broker int32, coord bool, o Owner[T]) {
	c := n.Conn(broker, coord)
	if c == nil || c.state != Connecting {
		return
	}
	n.Close(now, out, c, "refused", false, o)
}

// RemoteDisconnect: the peer closed the connection (FIN/RST) or the kernel
// gave up retransmitting (tcp_retries2).
func (n *Client[T]) RemoteDisconnect(now protocol.Instant, out *Output, broker int32, coord bool, why string, o Owner[T]) {
	c := n.Conn(broker, coord)
	if c == nil || c.state == Disconnected {
		return
	}
	n.Close(now, out, c, why, false, o)
}

// ResetBroker: every connection to broker was reset; the requests to it
// with correlation id up to upTo fail as disconnects.
func (n *Client[T]) ResetBroker(now protocol.Instant, out *Output, broker int32, upTo uint64, o Owner[T]) {
	for i := range n.conns {
		if c := &n.conns[i]; c.broker == broker && c.state != Disconnected {
			n.Disconnect(now, c, o)
		}
	}
	n.fail(now, out, broker, false, true, upTo, o)
}

// TryConnect is NetworkClient.ready's connect (NetworkClientUtils.tryConnect
// after FindCoordinator succeeded): a connection is started unless one
// exists or it is in backoff.
func (n *Client[T]) TryConnect(now protocol.Instant, out *Output, broker int32, coord bool, o Owner[T]) {
	c := n.ConnFor(broker, coord)
	if c.CanConnect(now) {
		n.initiateConnect(now, out, c, o)
	}
}

// LeastLoadedNode is NetworkClient.leastLoadedNode (@2.3.0 … @3.9.0, the
// same method from 2.7.0 on), starting from brokers[offset % len], the
// caller's draw of randOffset.nextInt(nodes.size()): a READY connection with
// the fewest requests in flight (the first with none ends the scan), else
// the last one being set up in scan order, else one that may connect: from
// 2.7.0 (era.OldestAttempt, KIP-601) the one whose last connection attempt
// is oldest (lastConnectAttemptMs, 0 for a node never tried; the first of
// equals), before it the last in scan order; -1 when every broker is in
// reconnect backoff.
//
// Deviation: the 0.10.0 method (any node out of blackout with the fewest
// requests in flight, ready or not) is modelled as the 2.3 one.
func (n *Client[T]) LeastLoadedNode(now protocol.Instant, era Era, brokers []int32, offset int) int32 {
	best, bestLoad := int32(-1), math.MaxInt
	connecting, connectable := int32(-1), int32(-1)
	var connectableAt protocol.Instant
	for k := range brokers {
		b := brokers[(offset+k)%len(brokers)]
		c := n.Conn(b, false)
		switch {
		case c != nil && c.state == Ready:
			load := 0
			for i := range n.inflight {
				if n.inflight[i].Broker == b && !n.inflight[i].Coord() && !n.inflight[i].Unsent() {
					load++
				}
			}
			if load == 0 {
				return b
			}
			if load < bestLoad {
				best, bestLoad = b, load
			}
		case c != nil && c.state == Connecting:
			connecting = b
		case c == nil || c.CanConnect(now):
			// lastConnectAttemptMs: 0 for a node never tried, before any
			// attempt (the simulator's clock starts at 0, Java's at the epoch).
			at := protocol.Instant(math.MinInt64)
			if c != nil && c.attempted {
				at = c.lastAttempt
			}
			if connectable < 0 || !era.OldestAttempt || connectableAt > at {
				connectable, connectableAt = b, at
			}
		}
	}
	switch {
	case best >= 0:
		return best
	case connecting >= 0:
		return connecting
	}
	return connectable
}

// NextReconnect is the earliest instant one of brokers' ordinary
// connections leaves its reconnect backoff (Never when none is in it).
func (n *Client[T]) NextReconnect(now protocol.Instant, brokers []int32) protocol.Instant {
	d := protocol.Never
	for _, b := range brokers {
		if c := n.Conn(b, false); c != nil && c.InBackoff(now) {
			d = min(d, c.ReconnectAt())
		}
	}
	return d
}

// nextConnDeadline is the earliest setup timeout of a connecting connection.
func (n *Client[T]) nextConnDeadline(cfg *Config) protocol.Instant {
	d := protocol.Never
	if !cfg.Era.SetupTimeout || n.connecting == 0 {
		return d
	}
	for i := range n.conns {
		if c := &n.conns[i]; c.state == Connecting {
			// Strictly after: now − lastConnectAttemptMs > timeout.
			d = min(d, c.lastAttempt.Add(c.setup+time.Millisecond))
		}
	}
	return d
}

// NextDeadline is the next network deadline: a request timeout, an unsent
// request's expiry or a connection setup timeout.
func (n *Client[T]) NextDeadline(cfg *Config) protocol.Instant {
	d := n.nextConnDeadline(cfg)
	for i := range n.inflight {
		d = min(d, n.inflight[i].Deadline)
	}
	return d
}

// handleSetupTimeouts is NetworkClient.handleTimedOutConnections (KIP-601).
func (n *Client[T]) handleSetupTimeouts(now protocol.Instant, out *Output, o Owner[T]) {
	if !o.Net().Era.SetupTimeout || n.connecting == 0 {
		return
	}
	for i := range n.conns {
		if c := &n.conns[i]; c.state == Connecting && now > c.lastAttempt.Add(c.setup) {
			n.Close(now, out, c, "setup-timeout", true, o)
		}
	}
}

// Send records a request and, if its connection is READY, appends it to
// out; it returns its correlation id.
//
// ConsumerNetworkClient.send + trySend (NetworkClientDelegate.add +
// trySend): on a READY connection the request leaves now; on one being set
// up it waits in the unsent queue; a disconnected one is connected first
// (unsent meanwhile), unless it is in reconnect backoff, when the request
// fails as a disconnect at the next poll (checkDisconnects).
func (n *Client[T]) Send(now protocol.Instant, out *Output, broker int32, coord bool, req protocol.Request, timeout time.Duration, data T, o Owner[T]) uint64 {
	n.lastCorr++
	corr := n.lastCorr
	e := Request[T]{Corr: corr, Deadline: now.Add(timeout), Broker: broker, API: req.API(), Data: data}
	if coord {
		e.flags = reqCoord
	}
	c := n.ConnFor(broker, coord)
	switch c.state {
	case Ready:
		out.Sends = append(out.Sends, Send{Broker: broker, Corr: corr, Req: req, Coord: coord})
	case Connecting:
		e.flags, e.held = e.flags|reqUnsent, &heldRequest{req: req, timeout: timeout}
	case Disconnected:
		e.flags, e.held = e.flags|reqUnsent, &heldRequest{req: req, timeout: timeout}
		if c.CanConnect(now) {
			n.initiateConnect(now, out, c, o)
		} else {
			e.flags, e.Deadline = e.flags|reqFailNow, now
		}
	}
	n.inflight = append(n.inflight, e)
	return corr
}

// TagLast sets the Tag of the request Send recorded last (Send always
// records one).
func (n *Client[T]) TagLast(tag uint8) {
	n.inflight[len(n.inflight)-1].Tag = tag
}

// fail fails every request on one connection (or, with anyConn, on every
// connection to broker) with corr <= upTo (0: all), as DisconnectExceptions
// (NetworkClient closing the connection).
func (n *Client[T]) fail(now protocol.Instant, out *Output, broker int32, coord, anyConn bool, upTo uint64, o Owner[T]) {
	scratch := o.Scratch()
	list := (*scratch)[:0]
	*scratch = nil // a nested call (or another owner's) allocates its own
	kept := n.inflight[:0]
	for _, e := range n.inflight {
		if e.Broker == broker && (anyConn || e.Coord() == coord) && (upTo == 0 || e.Corr <= upTo) {
			list = append(list, e)
		} else {
			kept = append(kept, e)
		}
	}
	n.inflight = kept
	for _, e := range list {
		o.Failed(now, out, e, true)
	}
	*scratch = list[:0]
}

// HandleTimeouts is NetworkClient.handleTimedOutRequests: a request past
// its deadline closes its connection; every request on it fails as a
// disconnect.
//
// Before it, handleTimedOutConnections (setup timeouts). An unsent request
// whose node is in reconnect backoff fails as a disconnect
// (checkDisconnects); one that waited request.timeout.ms since its creation
// fails alone with a TimeoutException and closes nothing
// (ConsumerNetworkClient.failExpiredRequests, NetworkClientDelegate.trySend).
func (n *Client[T]) HandleTimeouts(now protocol.Instant, out *Output, o Owner[T]) {
	n.handleSetupTimeouts(now, out, o)
	for range maxTimersPerTick {
		idx := -1
		for i := range n.inflight {
			if n.inflight[i].Deadline <= now && (idx < 0 || n.inflight[i].Deadline < n.inflight[idx].Deadline) {
				idx = i
			}
		}
		if idx < 0 || o.Stopped() {
			return
		}
		e := n.inflight[idx]
		if e.Unsent() {
			n.inflight = slices.Delete(n.inflight, idx, idx+1)
			if !e.failNow() {
				o.Emit(out, protocol.Event{Kind: protocol.EvRequestTimeout, API: e.API, Peer: BrokerName(e.Broker), Detail: "unsent", ReqCorr: e.Corr})
			}
			o.Failed(now, out, e, e.failNow())
			continue
		}
		o.Emit(out, protocol.Event{Kind: protocol.EvRequestTimeout, API: e.API, Peer: BrokerName(e.Broker), ReqCorr: e.Corr})
		o.TimedOut(now, out, e)
		// Every request was sent through ConnFor: its state exists.
		c := n.Conn(e.Broker, e.Coord())
		if c == nil {
			o.Invariant(out, "a request timed out on a connection the client never had")
			return
		}
		n.Close(now, out, c, "request-timeout", true, o)
	}
}

// ForceBackoff puts a disconnected connection in reconnect backoff from at
// for d, without a draw from the owner's random stream: for the owners'
// tests that start from a broker in backoff.
func (c *Conn) ForceBackoff(at protocol.Instant, d time.Duration) {
	c.attempted, c.lastAttempt, c.backoff = true, at, d
}
