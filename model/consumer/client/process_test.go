package client_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/consumer/client"
	"github.com/rebalsim/rebalsim/model/protocol"
)

func ms(n int) protocol.Instant { return protocol.Instant(time.Duration(n) * time.Millisecond) }

// newProcess is member id-0 of group g subscribed to t, with one bootstrap
// broker (0) and enable.auto.commit autoCommit.
func newProcess(autoCommit bool) *client.Process {
	return client.NewProcess(client.ProcessConfig{
		Member:     client.Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}},
		Brokers:    []int32{0},
		AutoCommit: autoCommit,
	}, rand.New(rand.NewPCG(1, 2)))
}

// TestProcessFindsCoordinatorThenHeartbeats: the network thread asks a
// bootstrap broker for the coordinator (FindCoordinator on the ordinary
// connection, opened first), opens the coordinator connection and only
// then sends the joining heartbeat (epoch 0, full fields) —
// CoordinatorRequestManager then the heartbeat request manager
// (kafka-consumer-protocol.md §3.6, §3.3).
func TestProcessFindsCoordinatorThenHeartbeats(t *testing.T) {
	p := newProcess(false)
	var out client.ProcOutput
	p.Start(0, &out)
	require.Len(t, out.Conns, 1, "the ordinary connection to the bootstrap broker")
	assert.False(t, out.Conns[0].Coord)
	assert.Empty(t, out.Sends, "nothing leaves before the connection is ready")
	out.Reset()
	p.TickApp(0, &out) // the first poll(): subscribe, JOINING
	p.Connected(ms(1), 0, false, &out)
	require.Len(t, out.Sends, 1)
	find, ok := out.Sends[0].Req.(*protocol.FindCoordinatorRequest)
	require.True(t, ok)
	assert.Equal(t, "g", find.Key)
	corr := out.Sends[0].Corr
	out.Reset()
	p.Step(ms(2), 0, corr, &protocol.FindCoordinatorResponse{NodeID: 0}, &out)
	require.Len(t, out.Conns, 1)
	assert.True(t, out.Conns[0].Coord, "the coordinator connection (MAX_VALUE - node id)")
	assert.Empty(t, out.Sends)
	out.Reset()
	p.Connected(ms(3), 0, true, &out)
	require.Len(t, out.Sends, 1)
	hb, ok := out.Sends[0].Req.(*protocol.ConsumerGroupHeartbeatRequest)
	require.True(t, ok)
	assert.Equal(t, protocol.JoinEpoch, hb.MemberEpoch)
	assert.Equal(t, []string{"t"}, hb.SubscribedTopics, "a joining heartbeat is full")
	assert.True(t, out.Sends[0].Coord)
}

// TestProcessCommitsBeforeRevocation: with enable.auto.commit the
// revocation callback waits for the commit of the owned partitions
// (AbstractMembershipManager.revokeAndAssign: commit, then
// onPartitionsRevoked, §3.7 step 3); without it the callback is handed
// to the application at its next poll.
func TestProcessCommitsBeforeRevocation(t *testing.T) {
	for _, auto := range []bool{true, false} {
		p := newProcess(auto)
		var out client.ProcOutput
		p.Start(0, &out)
		p.TickApp(0, &out)
		p.Connected(ms(1), 0, false, &out)
		p.Step(ms(2), 0, out.Sends[0].Corr, &protocol.FindCoordinatorResponse{NodeID: 0}, &out)
		out.Reset()
		p.Connected(ms(3), 0, true, &out)
		corr := out.Sends[0].Corr
		out.Reset()
		two := []protocol.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
		p.Step(ms(4), 0, corr, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 1, HeartbeatIntervalMs: 5000, Assignment: two, HasAssignment: true}, &out)
		// The assignment is applied at the next poll, then acknowledged.
		for at := 5; at < 1000 && len(p.Member().Owned()) < 2; at++ {
			p.TickApp(ms(at), &out)
		}
		require.Len(t, p.Member().Owned(), 2)
		var ack uint64
		for _, s := range out.Sends {
			if _, ok := s.Req.(*protocol.ConsumerGroupHeartbeatRequest); ok {
				ack = s.Corr
			}
		}
		require.NotZero(t, ack)
		out.Reset()
		p.Step(ms(1000), 0, ack, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 2, HeartbeatIntervalMs: 5000,
			Assignment: two[:1], HasAssignment: true}, &out)
		if auto {
			// With auto-commit the reconciliation (and its commit) starts
			// at the application's next poll() (maybeReconcile(true)).
			for at := 1000; at < 1100 && len(out.Sends) == 0; at++ {
				p.TickApp(ms(at), &out)
			}
		}
		var commits int
		for _, s := range out.Sends {
			if c, ok := s.Req.(*protocol.OffsetCommitRequest); ok {
				commits++
				assert.Equal(t, int32(2), c.GenerationID, "the commit carries the member epoch")
				assert.Len(t, c.Partitions, 2, "every owned partition's offsets")
				for at := 1001; at < 1500; at++ {
					p.TickApp(ms(at), &out)
				}
				assert.Len(t, p.Member().Owned(), 2, "nothing revoked while the commit is in flight")
				p.Step(ms(1500), 0, s.Corr, &protocol.OffsetCommitResponse{}, &out)
			}
		}
		if auto {
			assert.Equal(t, 1, commits)
		} else {
			assert.Zero(t, commits)
		}
		for at := 1501; at < 2500 && len(p.Member().Owned()) > 1; at++ {
			p.TickApp(ms(at), &out)
		}
		assert.Len(t, p.Member().Owned(), 1, "revoked after the commit (auto=%v)", auto)
	}
}

// joinedProcess is a process that found its coordinator (broker 0), opened
// the coordinator connection and sent its joining heartbeat, whose
// correlation id it returns with the output buffer emptied.
func joinedProcess(t *testing.T) (*client.Process, *client.ProcOutput, uint64) {
	t.Helper()
	p := newProcess(false)
	out := &client.ProcOutput{}
	p.Start(0, out)
	p.TickApp(0, out)
	p.Connected(ms(1), 0, false, out)
	p.Step(ms(2), 0, out.Sends[0].Corr, &protocol.FindCoordinatorResponse{NodeID: 0}, out)
	out.Reset()
	p.Connected(ms(3), 0, true, out)
	require.Len(t, out.Sends, 1)
	corr := out.Sends[0].Corr
	out.Reset()
	return p, out, corr
}

func eventsOf(out *client.ProcOutput, kind protocol.EventKind) []protocol.Event {
	var evs []protocol.Event
	for _, e := range out.Events {
		if e.Kind == kind {
			evs = append(evs, e)
		}
	}
	return evs
}

// The process's network client is the classic client's (model/classic/client/
// netclient): a heartbeat unanswered for request.timeout.ms closes the
// coordinator connection (NetworkClient.handleTimedOutRequests), which
// fails it as a disconnect; the coordinator is forgotten with cause
// request-timeout and the connection is in reconnect backoff.
func TestProcessRequestTimeoutClosesTheConnection(t *testing.T) {
	p, out, _ := joinedProcess(t)
	p.TickHeartbeat(ms(3+30000-1), out)
	assert.Empty(t, eventsOf(out, protocol.EvRequestTimeout), "not before request.timeout.ms")
	p.TickHeartbeat(ms(3+30000), out)
	to := eventsOf(out, protocol.EvRequestTimeout)
	require.Len(t, to, 1)
	assert.Equal(t, protocol.APIConsumerGroupHeartbeat, to[0].API)
	dead := eventsOf(out, protocol.EvCoordinatorDead)
	require.Len(t, dead, 1)
	assert.Equal(t, protocol.DeadRequestTimeout, dead[0].Dead)
	disc := eventsOf(out, protocol.EvDisconnected)
	require.Len(t, disc, 1)
	assert.Equal(t, "request-timeout", disc[0].Reason)
	assert.Equal(t, "coordinator", disc[0].Detail)
	require.NotEmpty(t, out.Conns)
	assert.Equal(t, client.ConnOp{Broker: 0, Coord: true, AfterSends: out.Conns[0].AfterSends}, out.Conns[0], "the coordinator connection is closed")
}

// NetworkClientTest.testConnectionSetupTimeout @4.0.0 (KIP-601), as the
// AsyncKafkaConsumer lives it: a bootstrap connection not READY after
// socket.connection.setup.timeout.ms (10 s ± 20 %) is closed, the
// FindCoordinator waiting on it fails, and the next attempt comes after
// the reconnect and FindCoordinator backoffs.
func TestProcessConnectionSetupTimeout(t *testing.T) {
	p := newProcess(false)
	var out client.ProcOutput
	p.Start(0, &out)
	require.Len(t, out.Conns, 1)
	out.Reset()
	d := p.NextHeartbeatDeadline()
	assert.GreaterOrEqual(t, d, ms(8000), "the setup timeout: 10 s − 20 %")
	assert.LessOrEqual(t, d, ms(12001), "the setup timeout: 10 s + 20 %")
	p.TickHeartbeat(d, &out)
	disc := eventsOf(&out, protocol.EvDisconnected)
	require.Len(t, disc, 1)
	assert.Equal(t, "setup-timeout", disc[0].Reason)
	require.Len(t, out.Conns, 1)
	assert.False(t, out.Conns[0].Open, "the attempt is closed")
	out.Reset()
	for at := d; at < d.Add(2*time.Second) && len(out.Conns) == 0; at = at.Add(time.Millisecond) {
		p.TickHeartbeat(at, &out)
	}
	require.Len(t, out.Conns, 1, "a new attempt after the backoffs")
	assert.True(t, out.Conns[0].Open)
}

// CoordinatorRequestManager.markCoordinatorUnknown (v8.0.0, Kafka 4.0)
// closes no connection, unlike the classic AbstractCoordinator's
// disconnectAsync: after NOT_COORDINATOR the process looks the coordinator
// up again and, found on the same broker, heartbeats on the connection it
// kept, opening none.
func TestProcessForgettingTheCoordinatorKeepsItsConnection(t *testing.T) {
	p, out, corr := joinedProcess(t)
	p.Step(ms(4), 0, corr, &protocol.ConsumerGroupHeartbeatResponse{Error: protocol.NotCoordinator}, out)
	require.Len(t, eventsOf(out, protocol.EvCoordinatorDead), 1)
	assert.Empty(t, out.Conns, "no connection closed")
	var find uint64
	for at := 4; at < 5000 && find == 0; at++ {
		p.TickHeartbeat(ms(at), out)
		for _, s := range out.Sends {
			if _, ok := s.Req.(*protocol.FindCoordinatorRequest); ok {
				find = s.Corr
			}
		}
	}
	require.NotZero(t, find, "FindCoordinator again, on the READY bootstrap connection")
	out.Reset()
	p.Step(ms(5000), 0, find, &protocol.FindCoordinatorResponse{NodeID: 0}, out)
	assert.Empty(t, out.Conns, "the coordinator connection is still READY")
	var hb int
	for at := 5000; at < 10000 && hb == 0; at++ {
		p.TickHeartbeat(ms(at), out)
		for _, s := range out.Sends {
			if _, ok := s.Req.(*protocol.ConsumerGroupHeartbeatRequest); ok && s.Coord {
				hb++
			}
		}
	}
	assert.Equal(t, 1, hb, "the heartbeat goes on the kept connection")
	assert.Empty(t, out.Conns)
}
