package client

import (
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file connects the member to its network layer, the shared
// netclient.Client (NetworkClient, ClusterConnectionStates and
// ConsumerNetworkClient's unsent queue, network-model.md §2), and holds
// what is the classic member's own: the network events waiting for a
// thread (ConsumerNetworkClient's pending completions, handled by whichever
// thread polls next: doc.go, "Which thread").

// ConnOp asks the harness to open or close one of the member's connections
// (netclient.ConnOp). AfterSends is how many of Output.Sends precede it.
type ConnOp = netclient.ConnOp

// Kafka's defaults (CommonClientConfigs; network-model.md §2.2).
const (
	DefaultReconnectBackoff         = netclient.DefaultReconnectBackoff
	DefaultReconnectBackoffMax      = netclient.DefaultReconnectBackoffMax
	DefaultSocketSetupTimeout       = netclient.DefaultSocketSetupTimeout
	DefaultSocketSetupTimeoutMax    = netclient.DefaultSocketSetupTimeoutMax
	DefaultSocketSetupTimeoutMax270 = netclient.DefaultSocketSetupTimeoutMax270
)

// netClient is the member's NetworkClient and ConsumerNetworkClient:
// requests in flight and connections (the shared netclient.Client), and the
// network events waiting for a thread.
type netClient struct {
	netclient.Client[reqData]
	queue []queued
}

// reqData is what a request's handler captured when it was sent.
//
// An OffsetCommit's commit kind (whose future listens, commit.go) is the
// entry's Tag, beside it, so an entry stays within inflightSize.
type reqData struct {
	sentGen *generation // CoordinatorResponseHandler.sentGeneration (the member's immutable generation at send)
}

// inflight is one request awaiting its response.
type inflight = netclient.Request[reqData]

// inflightSize is a request in flight's size on 64-bit platforms (a member
// keeps a few, and their slice's capacity). Change it deliberately.
const inflightSize = 40

var _ [inflightSize - unsafe.Sizeof(inflight{})]struct{} // fails to compile if a request in flight grows

// netOwner is the member as its network client's netclient.Owner.
type netOwner struct{ m *Member }

func (o netOwner) Net() *netclient.Config { return &o.m.cfg.net }
func (o netOwner) Rand() *rand.Rand       { return o.m.rng }
func (o netOwner) Stopped() bool          { return o.m.stopped }
func (o netOwner) Scratch() *[]inflight   { return &o.m.cfg.scratch }
func (o netOwner) Emit(out *Output, ev protocol.Event) {
	ev.Gen = o.m.gen.id()
	o.m.emit(out, ev)
}
func (o netOwner) Failed(now protocol.Instant, out *Output, e inflight, disconnect bool) {
	o.m.onRequestFailure(now, out, e, disconnect)
}

// TimedOut: a request timeout on the coordinator connection marks the
// coordinator unknown with that cause before the connection closes
// (AbstractCoordinator: the DisconnectException's onFailure would say
// "disconnect").
func (o netOwner) TimedOut(now protocol.Instant, out *Output, e inflight) {
	m := o.m
	if e.Coord() && m.coord.known && m.coord.node == e.Broker {
		m.markCoordinatorDisconnected(out, deadRequestTimeout)
	}
}
func (o netOwner) Invariant(out *Output, msg string) { o.m.assertFailed(out, "net", msg) }

// applyNetDefaults fills the zero connection settings with Kafka's defaults
// for the network era of cfg's profile row b.
func applyNetDefaults(cfg *Config, b *behaviour) {
	n := netConfig(cfg, b)
	cfg.ReconnectBackoff, cfg.ReconnectBackoffMax = n.ReconnectBackoff, n.ReconnectBackoffMax
	cfg.SocketSetupTimeout, cfg.SocketSetupTimeoutMax = n.SocketSetupTimeout, n.SocketSetupTimeoutMax
}

// netConfig is the network layer's configuration of cfg, defaults filled,
// in the network era of cfg's profile row b (lookupBehaviour resolved the
// name once; an alias or a patch release gets its row's era).
func netConfig(cfg *Config, b *behaviour) netclient.Config {
	n := netclient.Config{Era: b.net,
		ReconnectBackoff: cfg.ReconnectBackoff, ReconnectBackoffMax: cfg.ReconnectBackoffMax,
		SocketSetupTimeout: cfg.SocketSetupTimeout, SocketSetupTimeoutMax: cfg.SocketSetupTimeoutMax}
	n.ApplyDefaults()
	return n
}

// send records a request in flight (with the generation it was sent in)
// and appends it to out when its connection is READY
// (netclient.Client.Send).
func (m *Member) send(now protocol.Instant, out *Output, broker int32, coordConn bool, req protocol.Request, timeout time.Duration) uint64 {
	return m.net.Send(now, out, broker, coordConn, req, timeout, reqData{sentGen: m.gen}, netOwner{m})
}

// nextDeadline is the next network deadline: a request timeout, an
// unsent request's expiry or a connection setup timeout.
func (n *netClient) nextDeadline(cfg *template) protocol.Instant { return n.NextDeadline(&cfg.net) }

// leastLoadedNode is NetworkClient.leastLoadedNode for FindCoordinator
// (netclient.Client.LeastLoadedNode): each call starts its scan at a random
// offset, randOffset.nextInt(nodes.size()) (NetworkClient.leastLoadedNode
// @2.3.0 … @3.7.0), drawn from the member's stream.
func (n *netClient) leastLoadedNode(now protocol.Instant, cfg *template, rng *rand.Rand) int32 {
	return n.LeastLoadedNode(now, cfg.net.Era, cfg.Brokers, rng.IntN(len(cfg.Brokers)))
}

// asyncCommitsInFlight: an async auto-commit (or onJoinPrepare's) is
// still in flight (ConsumerCoordinator.pendingAsyncCommits > 0).
func (n *netClient) asyncCommitsInFlight() bool {
	for _, e := range n.Inflight() {
		if e.API == protocol.APIOffsetCommit && commitKind(e.Tag) != commitClose {
			return true
		}
	}
	return false
}

// requestsInFlightTo: a request on the coordinator connection to node is
// pending (ConsumerNetworkClient.pendingRequestCount(coordinator) > 0).
func (n *netClient) requestsInFlightTo(node int32) bool {
	for _, e := range n.Inflight() {
		if e.Coord() && e.Broker == node {
			return true
		}
	}
	return false
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

// queued is a network event no thread could handle yet. The close reason
// is an index into the template's table of reasons, not a string, so an
// event stays within queuedSize (a member keeps its queue's capacity).
type queued struct {
	kind   queuedKind
	coord  bool   // which connection (qConnDown, qConnected, qConnectFailed)
	why    uint16 // qConnDown: template.whys index: peer-closed, or reset (an RST, or tcp_retries2 gave up)
	broker int32
	corr   uint64            // response: its correlation id; disconnect: the highest corr sent before it
	resp   protocol.Response // qResponse
}

// queuedSize is queued's size on 64-bit platforms. Change it deliberately.
const queuedSize = 32

var _ [queuedSize - unsafe.Sizeof(queued{})]struct{} // fails to compile if queued grows

// maxCloseReasons bounds the template's table of connection-close reasons
// (queued.why is a uint16); the harness passes a handful of constants.
const maxCloseReasons = 1 << 16

// whyIndex interns a connection-close reason in the template's table;
// false when the table is full.
func (t *template) whyIndex(why string) (uint16, bool) {
	for i, w := range t.whys {
		if w == why {
			return uint16(i), true
		}
	}
	if len(t.whys) >= maxCloseReasons {
		return 0, false
	}
	t.whys = append(t.whys, why)
	return uint16(len(t.whys) - 1), true
}

// firePendingCompletions is ConsumerNetworkClient.poll's
// firePendingCompletedRequests for the events no thread could handle yet:
// the queued network events, in arrival order, on the thread polling now
// (m.onApp), each handed to m (the coordinator's response handlers) or to
// the network client. It returns false when the application thread stopped
// polling (it became busy or the member stopped) and events may remain
// queued.
func (n *netClient) firePendingCompletions(m *Member, now protocol.Instant, out *Output) bool {
	for len(n.queue) > 0 {
		if m.stopped || (m.onApp && m.app.phase != appPolling) {
			return false
		}
		q := n.queue[0]
		copy(n.queue, n.queue[1:])
		n.queue = n.queue[:len(n.queue)-1]
		switch q.kind {
		case qResponse:
			m.handleResponse(now, out, q.corr, q.resp)
		case qDisconnect:
			n.ResetBroker(now, out, q.broker, q.corr, netOwner{m})
		case qConnDown:
			n.RemoteDisconnect(now, out, q.broker, q.coord, m.cfg.whys[q.why], netOwner{m})
		case qConnected:
			n.Connected(now, out, q.broker, q.coord, netOwner{m})
		case qConnectFailed:
			n.ConnectFailed(now, out, q.broker, q.coord, netOwner{m})
		}
	}
	return !m.stopped && (!m.onApp || m.app.phase == appPolling)
}
