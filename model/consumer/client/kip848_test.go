package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/consumer/client"
	"github.com/rebalsim/rebalsim/model/protocol"
)

func tps(ps ...int32) []protocol.TopicPartition {
	out := make([]protocol.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = protocol.TopicPartition{Topic: "t", Partition: p}
	}
	return out
}

// With enable.auto.commit every reconciliation starts with a commit of the
// owned partitions, also one that only assigns: the new partitions are
// assigned after the commit's answer. Without auto-commit, no commit.
// Kafka: AbstractMembershipManager.maybeReconcile →
// ConsumerMembershipManager.signalReconciliationStarted →
// CommitRequestManager.maybeAutoCommitSyncBeforeRebalance @v8.0.0, @v8.3.0;
// ConsumerMembershipManagerTest.testReconcileNewPartitionsAssignedWhenOtherPartitionsOwned @v8.0.0.
func TestProcessCommitsAtEveryReconciliation(t *testing.T) {
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
		// The first assignment: nothing owned, so nothing to commit.
		p.Step(ms(4), 0, corr, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 1, HeartbeatIntervalMs: 5000,
			Assignment: tps(0), HasAssignment: true}, &out)
		var ack uint64
		for at := 5; at < 1000 && ack == 0; at++ {
			p.TickApp(ms(at), &out)
			for _, s := range out.Sends {
				_, commit := s.Req.(*protocol.OffsetCommitRequest)
				require.False(t, commit, "no commit of no offsets (requestAutoCommit)")
				if _, ok := s.Req.(*protocol.ConsumerGroupHeartbeatRequest); ok {
					ack = s.Corr
				}
			}
		}
		require.NotZero(t, ack)
		require.Equal(t, tps(0), p.Member().Owned())
		out.Reset()
		// A second partition, nothing revoked.
		p.Step(ms(1000), 0, ack, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 2, HeartbeatIntervalMs: 5000,
			Assignment: tps(0, 1), HasAssignment: true}, &out)
		var commit uint64
		for at := 1001; at < 1500; at++ {
			p.TickApp(ms(at), &out)
			for _, s := range out.Sends {
				if c, ok := s.Req.(*protocol.OffsetCommitRequest); ok && commit == 0 {
					commit = s.Corr
					assert.Equal(t, tps(0), c.Partitions, "the owned partition's offsets")
				}
			}
		}
		if !auto {
			assert.Zero(t, commit)
			assert.Equal(t, tps(0, 1), p.Member().Owned())
			continue
		}
		require.NotZero(t, commit, "a commit before the assignment")
		assert.Equal(t, tps(0), p.Member().Owned(), "nothing assigned while the commit is in flight")
		p.Step(ms(1500), 0, commit, &protocol.OffsetCommitResponse{}, &out)
		for at := 1501; at < 2500 && len(p.Member().Owned()) < 2; at++ {
			p.TickApp(ms(at), &out)
		}
		assert.Equal(t, tps(0, 1), p.Member().Owned(), "assigned after the commit")
	}
}
