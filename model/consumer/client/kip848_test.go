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

// stableMember drives one member to STABLE owning parts, heartbeating every
// 5 s, by hand (no broker): it returns the member and the time of its last
// heartbeat.
func stableMember(t *testing.T, parts []protocol.TopicPartition) (*client.Member, protocol.Instant) {
	t.Helper()
	m := client.New(client.Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}}, rand.New(rand.NewPCG(1, 7)))
	var out client.Output
	now := protocol.Instant(0)
	m.CoordinatorFound(now, &out)
	m.AppPoll(now, &out)
	require.Len(t, out.Sends, 1, "the join heartbeat")
	out = client.Output{}
	m.Response(now, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 1, HeartbeatIntervalMs: 5000,
		HasAssignment: true, Assignment: parts}, &out)
	for out.Callback != client.NoCallback {
		out = client.Output{}
		m.CallbackDone(now, &out)
	}
	require.Len(t, out.Sends, 1, "the ack")
	m.Response(now, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 1, HeartbeatIntervalMs: 5000}, &out)
	require.Equal(t, client.Stable, m.State())
	return m, now
}

// After a NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE response the next
// heartbeat goes out as soon as the coordinator is found, not one
// heartbeat interval after the failed one: onErrorResponse calls
// HeartbeatRequestState.onFailedAttempt (the heartbeat timer reset to 0)
// and then reset() (no backoff). Kafka:
// AbstractHeartbeatRequestManager.onErrorResponse @v8.0.0, @v8.3.0;
// ConsumerHeartbeatRequestManagerTest.testHeartbeatResponseOnErrorHandling
// @v8.0.0 (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: assertNextHeartbeatTiming(0)).
func TestHeartbeatAtOnceAfterCoordinatorError(t *testing.T) {
	for _, e := range []protocol.ErrorCode{protocol.NotCoordinator, protocol.CoordinatorNotAvailable} {
		t.Run(e.String(), func(t *testing.T) {
			m, now := stableMember(t, []protocol.TopicPartition{{Topic: "t", Partition: 0}})
			now = now.Add(5 * time.Second)
			var out client.Output
			m.Tick(now, &out)
			require.Len(t, out.Sends, 1, "the regular heartbeat")
			now = now.Add(10 * time.Millisecond)
			out = client.Output{}
			m.Response(now, &protocol.ConsumerGroupHeartbeatResponse{Error: e}, &out)
			require.False(t, m.CoordinatorKnown())
			m.CoordinatorUnknown()
			now = now.Add(200 * time.Millisecond) // the new coordinator is found
			m.CoordinatorFound(now, &out)
			require.Len(t, out.Sends, 1, "the heartbeat goes as soon as the coordinator is found")
			require.True(t, out.Sends[0].OwnedSent && out.Sends[0].SubscribedTopics != nil, "with the full fields (resetHeartbeatState)")
		})
	}
}

func tps(ps ...int32) []protocol.TopicPartition {
	out := make([]protocol.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = protocol.TopicPartition{Topic: "t", Partition: p}
	}
	return out
}

// A target that arrives while a reconciliation runs is not merged into
// it: the running one applies the target it started from
// (resolvedAssignment), finishes and is acknowledged; the new target is
// reconciled after the ack. Kafka: AbstractMembershipManager.maybeReconcile
// ("Another reconciliation is already in progress") and
// revokeAndAssign (currentAssignment = resolvedAssignment) @v8.0.0,
// @v8.3.0; ConsumerMembershipManagerTest.
// testDelayedReconciliationResultAppliedWhenTargetChangedWithNewAssignment @v8.0.0.
func TestTargetDuringReconciliationWaitsForTheAck(t *testing.T) {
	m, now := stableMember(t, tps(0, 1))
	resp := func(epoch int32, assignment []protocol.TopicPartition) *client.Output {
		var out client.Output
		r := &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: epoch, HeartbeatIntervalMs: 5000}
		if assignment != nil {
			r.HasAssignment, r.Assignment = true, assignment
		}
		m.Response(now, r, &out)
		return &out
	}
	now = now.Add(5 * time.Second)
	var out client.Output
	m.Tick(now, &out)
	require.Len(t, out.Sends, 1)
	o := resp(2, tps(0)) // revoke t-1
	require.Equal(t, client.CallbackRevoked, o.Callback)
	require.Equal(t, tps(1), o.CallbackParts)
	// While onPartitionsRevoked runs, the next heartbeat brings a new target.
	now = now.Add(5 * time.Second)
	out = client.Output{}
	m.Tick(now, &out)
	require.Len(t, out.Sends, 1)
	o = resp(3, tps(0, 2))
	require.Equal(t, client.NoCallback, o.Callback, "no second reconciliation while one runs")
	out = client.Output{}
	m.CallbackDone(now, &out)
	require.Equal(t, client.CallbackAssigned, out.Callback)
	require.Empty(t, out.CallbackParts, "the running reconciliation assigns what its own target added: nothing")
	out = client.Output{}
	m.CallbackDone(now, &out)
	require.Equal(t, tps(0), m.Owned(), "the first target, not a merge of both")
	require.Len(t, out.Sends, 1, "acknowledged at once")
	require.Equal(t, tps(0), out.Sends[0].Owned)
	require.Equal(t, client.CallbackAssigned, out.Callback, "then the new target is reconciled")
	require.Equal(t, tps(2), out.CallbackParts)
	require.True(t, out.ReconcileStarted)
	out = client.Output{}
	m.Response(now, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 3, HeartbeatIntervalMs: 5000}, &out)
	m.CallbackDone(now, &out)
	require.Equal(t, tps(0, 2), m.Owned())
	require.Len(t, out.Sends, 1, "the second ack")
	require.Equal(t, tps(0, 2), out.Sends[0].Owned)
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

// Without auto-commit, from 4.3 (KAFKA-20332) a reconciliation that revokes
// starts only from the application's poll(); one that only adds may start
// from the network thread (the heartbeat response). Before 4.3 both start
// at the response. Kafka: AbstractMembershipManager.maybeReconcile
// `!canCommit && (autoCommitEnabled || !revokedPartitions.isEmpty())`
// @v8.3.0 (`autoCommitEnabled && !canCommit` @v8.2.0);
// ConsumerMembershipManagerTest.testReconcilePartitionsRevokedNoAutoCommitNoCallbacks @v8.3.0.
func TestRevocationStartsFromPoll43(t *testing.T) {
	for _, pollOnly := range []bool{false, true} {
		m := client.New(client.Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}, RevokeFromPollOnly: pollOnly},
			rand.New(rand.NewPCG(1, 7)))
		var out client.Output
		m.CoordinatorFound(0, &out)
		m.AppPoll(0, &out)
		out = client.Output{}
		m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 1, HeartbeatIntervalMs: 5000,
			HasAssignment: true, Assignment: tps(0, 1)}, &out)
		require.Equal(t, client.CallbackAssigned, out.Callback, "adding only: started at the response (pollOnly=%v)", pollOnly)
		m.CallbackDone(0, &out)
		m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 1, HeartbeatIntervalMs: 5000}, &out)
		require.Equal(t, client.Stable, m.State())
		out = client.Output{}
		m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 2, HeartbeatIntervalMs: 5000,
			HasAssignment: true, Assignment: tps(0)}, &out)
		if !pollOnly {
			require.Equal(t, client.CallbackRevoked, out.Callback, "before 4.3: started at the response")
			continue
		}
		require.Equal(t, client.NoCallback, out.Callback, "4.3: a revocation waits for poll()")
		require.True(t, m.NeedsPoll())
		out = client.Output{}
		m.AppPoll(0, &out)
		require.Equal(t, client.CallbackRevoked, out.Callback)
		require.Equal(t, tps(1), out.CallbackParts)
	}
}
