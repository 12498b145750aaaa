package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Tests of the client's network layer (netclient.go): NetworkClient,
// ClusterConnectionStates and ConsumerNetworkClient as network-model.md §2
// describes them at Kafka 3.7.0.

// manual is a driver whose connections the test opens by hand.
func manual(t *testing.T, profile string, mutate ...func(*Config)) *driver {
	d := newDriver(t, profile, mutate...)
	d.manualConns = true
	return d
}

// popConn removes and returns the oldest connection operation.
func (d *driver) popConn() ConnOp {
	d.t.Helper()
	require.NotEmpty(d.t, d.conns, "no connection operation")
	op := d.conns[0]
	d.conns = d.conns[1:]
	return op
}

func (d *driver) connected(op ConnOp) {
	d.call(func(o *Output) { d.m.Connected(d.now, op.Broker, op.Coord, o) })
}

// Requests wait while their connection is set up and leave when it is READY
// (ConsumerNetworkClient.trySend); FindCoordinator uses the node connection,
// group requests the separate coordinator connection (AbstractCoordinator
// .FindCoordinatorResponseHandler: node id Integer.MAX_VALUE − broker id).
func TestRequestsWaitForTheirConnection(t *testing.T) {
	d := manual(t, "kafka-3.7")
	d.start()
	op := d.popConn()
	assert.Equal(t, ConnOp{Broker: 0, Open: true}, op)
	assert.Zero(t, d.count(protocol.APIFindCoordinator), "unsent until the connection is READY")
	d.now = d.now.Add(5 * time.Millisecond)
	d.connected(op)
	f := d.pop(protocol.APIFindCoordinator)
	assert.False(t, f.Coord)
	d.respond(f, &protocol.FindCoordinatorResponse{NodeID: 1})
	co := d.popConn()
	assert.Equal(t, ConnOp{Broker: 1, Coord: true, Open: true}, co, "tryConnect to the coordinator")
	d.advance(10 * time.Millisecond)
	assert.Zero(t, d.count(protocol.APIJoinGroup))
	d.connected(co)
	j := d.pop(protocol.APIJoinGroup)
	assert.True(t, j.Coord)
	assert.Equal(t, int32(1), j.Broker)
}

// NetworkClient.handleTimedOutRequests (3.7.0 ~847-855) and
// ConsumerNetworkClientTest.testDisconnectWithInFlightRequests @3.7.0: a
// request past request.timeout.ms closes its connection and every request
// in flight on it fails with a DisconnectException; the coordinator is
// marked unknown with cause request-timeout; the connection is in reconnect
// backoff afterwards.
func TestRequestTimeoutClosesTheConnection(t *testing.T) {
	d := newDriver(t, "kafka-3.7", func(c *Config) { c.SessionTimeout = time.Minute })
	d.stable(tp(0))
	d.advance(3 * time.Second)
	hb := d.pop(protocol.APIHeartbeat)
	d.m.cfg.AutoCommit = true // the driver's member has a template of its own
	d.call(func(o *Output) { d.m.sendOffsetCommit(d.now, o, commitClose) })
	commit := d.pop(protocol.APIOffsetCommit)
	require.Equal(t, hb.Broker, commit.Broker)
	d.advance(30*time.Second + time.Millisecond)
	to := d.eventsOf(protocol.EvRequestTimeout)
	require.NotEmpty(t, to)
	assert.Equal(t, protocol.APIHeartbeat, to[0].API)
	dead := d.eventsOf(protocol.EvCoordinatorDead)
	require.NotEmpty(t, dead)
	assert.Equal(t, deadRequestTimeout, dead[0].Dead)
	assert.Equal(t, deadRequestTimeout.String(), dead[0].Reason)
	disc := d.eventsOf(protocol.EvDisconnected)
	require.NotEmpty(t, disc)
	assert.Equal(t, "request-timeout", disc[0].Reason)
	assert.Equal(t, "coordinator", disc[0].Detail)
	assert.InDelta(t, 50, disc[0].Count, 10, "reconnect.backoff.ms 50 ms ± 20 % jitter")
	// The commit in flight on the same connection failed with it: no
	// request of that connection is left.
	for _, e := range d.m.net.Inflight() {
		assert.False(t, e.Coord() && e.Broker == hb.Broker && !e.Unsent(), "request %v still in flight", e.API)
	}
}

// An unsent request (its connection still connecting) expires after
// request.timeout.ms from its creation with a TimeoutException: alone, the
// connection attempt goes on and the coordinator is not marked dead
// (ConsumerNetworkClient.failExpiredRequests 3.7.0 ~479-486, 690-705).
func TestUnsentRequestExpiresAlone(t *testing.T) {
	d := manual(t, "kafka-3.7", func(c *Config) { c.SocketSetupTimeout = time.Minute; c.SocketSetupTimeoutMax = time.Minute })
	d.start()
	d.popConn() // never answered
	d.advance(30*time.Second + time.Millisecond)
	to := d.eventsOf(protocol.EvRequestTimeout)
	require.Len(t, to, 1)
	assert.Equal(t, "unsent", to[0].Detail)
	assert.Empty(t, d.eventsOf(protocol.EvDisconnected), "the connection attempt is not closed")
	assert.Empty(t, d.conns)
}

// NetworkClientTest.testConnectionSetupTimeout @3.7.0 (KIP-601): a connect
// attempt that is not READY after socket.connection.setup.timeout.ms (10 s
// ± 20 %) is closed; the next attempt's timeout doubles (20 s ± 20 %), up to
// socket.connection.setup.timeout.max.ms. Pending requests on it fail as
// disconnects.
func TestConnectionSetupTimeout(t *testing.T) {
	d := manual(t, "kafka-3.7", func(c *Config) { c.Brokers = []int32{0} })
	d.start()
	first := d.popConn()
	require.True(t, first.Open)
	d.advance(8 * time.Second)
	assert.Empty(t, d.eventsOf(protocol.EvDisconnected), "not before 8 s (10 s − 20 %)")
	d.advance(4*time.Second + time.Millisecond)
	disc := d.eventsOf(protocol.EvDisconnected)
	require.Len(t, disc, 1)
	assert.Equal(t, "setup-timeout", disc[0].Reason)
	assert.Equal(t, ConnOp{Broker: 0, AfterSends: 0}, d.popConn(), "the attempt is closed")
	c := d.m.net.Conn(0, false)
	require.NotNil(t, c)
	assert.Equal(t, int32(1), c.FailedConnectAttempts())
	// The lookup is retried: a new attempt after the reconnect backoff,
	// with a doubled setup timeout.
	d.advance(2 * time.Second)
	again := d.popConn()
	require.True(t, again.Open)
	c = d.m.net.Conn(again.Broker, false)
	assert.GreaterOrEqual(t, c.SetupTimeout(), 16*time.Second)
	assert.LessOrEqual(t, c.SetupTimeout(), 24*time.Second)
}

// AbstractCoordinator.checkAndGetCoordinator (3.7.0 ~976-981) with
// ConsumerNetworkClient.isUnavailable: a known coordinator whose connection
// failed and is in reconnect backoff is marked unknown ("coordinator
// unavailable"); once the backoff has passed it is not.
func TestCoordinatorUnavailableInReconnectBackoff(t *testing.T) {
	d := newDriver(t, "kafka-3.7")
	d.stable(tp(0))
	c := d.m.net.Conn(0, true)
	require.NotNil(t, c)
	d.m.net.Disconnect(d.now, c, netOwner{d.m})
	d.call(func(o *Output) { d.m.checkCoordinator(d.now.Add(c.Backoff()), o) })
	assert.Empty(t, d.eventsOf(protocol.EvCoordinatorDead), "the backoff has passed")
	d.call(func(o *Output) { d.m.checkCoordinator(d.now, o) })
	dead := d.eventsOf(protocol.EvCoordinatorDead)
	require.Len(t, dead, 1)
	assert.Equal(t, deadUnavailable, dead[0].Dead)
	assert.Equal(t, deadUnavailable.String(), dead[0].Reason)
}

// A refused connection attempt (RST: nobody listens on the broker) fails
// the requests waiting for it as disconnects (checkDisconnects), which
// marks the coordinator unknown; the connection is in reconnect backoff.
func TestRefusedConnectFailsWaitingRequests(t *testing.T) {
	d := manual(t, "kafka-3.7")
	d.start()
	d.connected(d.popConn())
	d.respond(d.pop(protocol.APIFindCoordinator), &protocol.FindCoordinatorResponse{NodeID: 0})
	co := d.popConn()
	d.advance(time.Millisecond) // the JoinGroup waits, unsent
	d.call(func(o *Output) { d.m.ConnectFailed(d.now, co.Broker, true, o) })
	d.advance(time.Millisecond)
	d.assertDisconnectMarked("refused")
	assert.True(t, d.m.net.Conn(0, true).InBackoff(d.now))
}

// A connection torn down from below (the broker's process crashed: FIN/RST)
// fails its requests as disconnects at the next poll (NetworkClient
// .processDisconnection) and marks the coordinator unknown.
func TestPeerCloseFailsRequests(t *testing.T) {
	d := newDriver(t, "kafka-3.7")
	d.stable(tp(0))
	d.advance(3 * time.Second)
	hb := d.pop(protocol.APIHeartbeat)
	d.call(func(o *Output) { d.m.ConnectionClosed(d.now, hb.Broker, true, "peer-closed", o) })
	d.advance(time.Millisecond)
	d.assertDisconnectMarked("peer-closed")
}

// assertDisconnectMarked: the coordinator was marked unknown as a
// disconnect, and the connection was closed for why.
func (d *driver) assertDisconnectMarked(why string) {
	d.t.Helper()
	dead := d.eventsOf(protocol.EvCoordinatorDead)
	require.NotEmpty(d.t, dead)
	assert.Equal(d.t, deadDisconnect, dead[0].Dead)
	assert.Equal(d.t, deadDisconnect.String(), dead[0].Reason)
	disc := d.eventsOf(protocol.EvDisconnected)
	require.NotEmpty(d.t, disc)
	assert.Equal(d.t, why, disc[0].Reason)
}
