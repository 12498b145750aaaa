package consumer_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	client "github.com/rebalsim/rebalsim/model/client/consumer"
	"github.com/rebalsim/rebalsim/model/protocol"
)

func ms(n int) protocol.Instant { return protocol.Instant(time.Duration(n) * time.Millisecond) }

// TestProcessFindsCoordinatorThenHeartbeats: the network thread asks a
// bootstrap broker for the coordinator (FindCoordinator on the ordinary
// connection, opened first), opens the coordinator connection and only
// then sends the joining heartbeat (epoch 0, full fields) —
// CoordinatorRequestManager then the heartbeat request manager
// (kafka-consumer-protocol.md §3.6, §3.3).
func TestProcessFindsCoordinatorThenHeartbeats(t *testing.T) {
	p := client.NewProcess(client.ProcessConfig{
		Member:  client.Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}},
		Brokers: []int32{0},
	}, rand.New(rand.NewPCG(1, 2)))
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
		p := client.NewProcess(client.ProcessConfig{
			Member:     client.Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}},
			Brokers:    []int32{0},
			AutoCommit: auto,
		}, rand.New(rand.NewPCG(1, 2)))
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
