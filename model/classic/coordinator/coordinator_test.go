package coordinator

// Goal: the broker answers and times out exactly as Kafka's Scala
// GroupCoordinator. Method: each test ports one test of
// core/src/test/scala/unit/kafka/coordinator/group/GroupCoordinatorTest.scala
// (named in the test's comment) to virtual time; where our deterministic
// rules replace Kafka's hash order the test says so.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Pre-checks (validateGroupStatus) for every group API, table-driven.
// Mirrors testJoinGroupWrongCoordinator, testSyncGroupNotCoordinator,
// testHeartbeatWrongCoordinator, testLeaveGroupWrongCoordinator,
// testJoinGroupInvalidGroupId / testInvalidGroupId style tests.
//
// Kafka: GroupCoordinatorTest.testJoinGroupWrongCoordinator @3.6.1
// Kafka: GroupCoordinatorTest.testSyncGroupNotCoordinator @3.6.1
// Kafka: GroupCoordinatorTest.testHeartbeatWrongCoordinator @3.6.1
// Kafka: GroupCoordinatorTest.testLeaveGroupWrongCoordinator @3.6.1
// Kafka: GroupCoordinatorTest.testInvalidGroupId @3.6.1
// Kafka: GroupCoordinatorTest.testJoinGroupSessionTimeoutTooSmall @3.6.1
// Kafka: GroupCoordinatorTest.testJoinGroupSessionTimeoutTooLarge @3.6.1
// Kafka: GroupCoordinatorTest.testJoinGroupUnknownConsumerNewGroup @3.6.1
// Kafka: GroupCoordinatorTest.testSyncGroupFromUnknownGroup @3.6.1
// Kafka: GroupCoordinatorTest.testHeartbeatUnknownGroup @3.6.1
// Kafka: GroupCoordinatorTest.testCommitOffsetFromUnknownGroup @3.6.1
// Kafka: GroupCoordinatorTest.testBasicFetchTxnOffsets @3.6.1
func TestPreChecks(t *testing.T) {
	other := "otherGroup"
	cases := []struct {
		name string
		req  protocol.Request
		want protocol.ErrorCode
	}{
		{"join wrong coordinator", &protocol.JoinGroupRequest{GroupID: other, SessionTimeout: defaultSessionTimeout, ProtocolType: "consumer", Protocols: protocols("range")}, protocol.NotCoordinator},
		{"sync wrong coordinator", &protocol.SyncGroupRequest{GroupID: other}, protocol.NotCoordinator},
		{"heartbeat wrong coordinator", &protocol.HeartbeatRequest{GroupID: other}, protocol.NotCoordinator},
		{"leave wrong coordinator", &protocol.LeaveGroupRequest{GroupID: other}, protocol.NotCoordinator},
		{"commit wrong coordinator", &protocol.OffsetCommitRequest{GroupID: other}, protocol.NotCoordinator},
		{"join invalid group id", &protocol.JoinGroupRequest{GroupID: ""}, protocol.InvalidGroupID},
		{"sync invalid group id", &protocol.SyncGroupRequest{GroupID: ""}, protocol.InvalidGroupID},
		{"heartbeat invalid group id", &protocol.HeartbeatRequest{GroupID: ""}, protocol.InvalidGroupID},
		{"leave invalid group id", &protocol.LeaveGroupRequest{GroupID: ""}, protocol.InvalidGroupID},
		{"join session too small (testJoinGroupSessionTimeoutTooSmall)", func() protocol.Request {
			r := dynamicJoin("")
			r.SessionTimeout = testMinSession - 1
			return r
		}(), protocol.InvalidSessionTimeout},
		{"join session too large (testJoinGroupSessionTimeoutTooLarge)", func() protocol.Request {
			r := dynamicJoin("")
			r.SessionTimeout = testMaxSession + 1
			return r
		}(), protocol.InvalidSessionTimeout},
		{"join unknown member new group (testJoinGroupUnknownConsumerNewGroup)", dynamicJoin("memberId"), protocol.UnknownMemberID},
		{"sync unknown group (testSyncGroupFromUnknownGroup)", syncReq("memberId", 1), protocol.UnknownMemberID},
		{"heartbeat unknown group (testHeartbeatUnknownGroup)", hbReq("memberId", 1), protocol.UnknownMemberID},
		{"commit unknown group, generation 1 (testCommitOffsetFromUnknownGroup)", &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: 1, MemberID: "m"}, protocol.IllegalGeneration},
		{"commit unknown group, generation -1 (testBasicFetchTxnOffsets-style simple commit)", &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: -1}, protocol.None},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "kafka-3.x")
			resp := only(t, f.send(7, tc.req), 7)
			assert.Equal(t, tc.want, resp.Err())
		})
	}
}

// testLeaveGroupUnknownGroup: per-member UNKNOWN_MEMBER_ID.
//
// Kafka: GroupCoordinatorTest.testLeaveGroupUnknownGroup @3.6.1
func TestLeaveGroupUnknownGroup(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	lr := only(t, f.send(1, leaveReq(protocol.LeaveGroupMember{MemberID: "m"})), 1).(*protocol.LeaveGroupResponse)
	require.Len(t, lr.Members, 1)
	assert.Equal(t, protocol.UnknownMemberID, lr.Members[0].Error)
}

// FindCoordinator from metadata; -1 = no leader.
func TestFindCoordinator(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	fr := only(t, f.send(1, &protocol.FindCoordinatorRequest{Key: testGroup}), 1).(*protocol.FindCoordinatorResponse)
	assert.Equal(t, protocol.None, fr.Error)
	assert.Equal(t, int32(1), fr.NodeID)
	f.b.SetCoordinator(testGroup, -1)
	fr = only(t, f.send(1, &protocol.FindCoordinatorRequest{Key: testGroup}), 1).(*protocol.FindCoordinatorResponse)
	assert.Equal(t, protocol.CoordinatorNotAvailable, fr.Error)
	fr = only(t, f.send(1, &protocol.FindCoordinatorRequest{Key: "unknown"}), 1).(*protocol.FindCoordinatorResponse)
	assert.Equal(t, protocol.CoordinatorNotAvailable, fr.Error)
}

// KIP-394 (JoinGroup v4+) per profile: the MEMBER_ID_REQUIRED round trip
// that opens testJoinGroupCompletionWhenPendingMemberJoins.
//
// Kafka: GroupCoordinatorTest.testJoinGroupCompletionWhenPendingMemberJoins @3.6.1
func TestJoinGroupRequiresKnownMemberID(t *testing.T) {
	cases := []struct {
		profile string
		version int16
		want    protocol.ErrorCode
	}{
		{"kafka-3.x", 4, protocol.MemberIDRequired},
		{"kafka-3.x", 3, protocol.None}, // parked: no immediate reply
		{"kafka-2.2", 4, protocol.MemberIDRequired},
		{"kafka-0.11", 4, protocol.None}, // broker predates KIP-394
	}
	for _, tc := range cases {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			r := dynamicJoin("")
			r.Version = tc.version
			replies := f.send(1, r)
			if tc.want == protocol.None {
				assert.Empty(t, replies)
				assert.Equal(t, PreparingRebalance, f.state())
				return
			}
			jr := joinResp(t, only(t, replies, 1))
			assert.Equal(t, tc.want, jr.Error)
			assert.Equal(t, "client-1-1", jr.MemberID)
			assert.Equal(t, Empty, f.state(), "no rebalance before the second join")
			// Second JoinGroup with the pending id joins.
			r2 := dynamicJoin(jr.MemberID)
			r2.Version = tc.version
			require.Empty(t, f.send(1, r2))
			assert.Equal(t, PreparingRebalance, f.state())
			jr2 := joinResp(t, only(t, f.advance(testInitialDelay), 1))
			assert.Equal(t, protocol.None, jr2.Error)
			assert.Equal(t, jr.MemberID, jr2.MemberID)
			assert.Equal(t, jr.MemberID, jr2.Leader)
		})
	}
}

// testJoinGroupShouldReceiveErrorIfGroupOverMaxSize.
//
// Kafka: GroupCoordinatorTest.testJoinGroupShouldReceiveErrorIfGroupOverMaxSize @3.6.1
func TestJoinGroupOverMaxSize(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	for i := 1; i <= testMaxSize; i++ {
		require.Empty(t, f.send(Conn(i), dynamicJoin("")))
	}
	jr := joinResp(t, only(t, f.send(9, dynamicJoin("")), 9))
	assert.Equal(t, protocol.GroupMaxSizeReached, jr.Error)
	assert.Equal(t, "", jr.MemberID)
	replies := f.completeInitialJoin()
	assert.Len(t, replies, testMaxSize)
	assert.Len(t, f.b.Members(testGroup), testMaxSize)
	// The CompletingRebalance and Stable branch of acceptJoiningMember: the
	// group size counts; a new member is rejected, a member rejoins.
	require.Equal(t, CompletingRebalance, f.state())
	assert.Equal(t, protocol.GroupMaxSizeReached, joinResp(t, only(t, f.send(9, dynamicJoin("")), 9)).Error)
	leader := joinResp(t, replyOn(t, replies, 1))
	for i := 1; i <= testMaxSize; i++ {
		m := joinResp(t, replyOn(t, replies, Conn(i)))
		f.send(Conn(i), syncReq(m.MemberID, m.GenerationID))
	}
	require.Equal(t, Stable, f.state())
	assert.Equal(t, protocol.GroupMaxSizeReached, joinResp(t, only(t, f.send(9, dynamicJoin("")), 9)).Error)
	require.Empty(t, f.send(1, dynamicJoin(leader.MemberID)), "a member's rejoin is accepted (and rebalances)")
	assert.Equal(t, PreparingRebalance, f.state())
}

// testJoinGroupInconsistentProtocolType / testJoinGroupInconsistentGroupProtocol.
//
// Kafka: GroupCoordinatorTest.testJoinGroupInconsistentProtocolType @3.6.1
// Kafka: GroupCoordinatorTest.testJoinGroupInconsistentGroupProtocol @3.6.1
func TestJoinGroupInconsistentProtocol(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*protocol.JoinGroupRequest)
	}{
		{"protocol type", func(r *protocol.JoinGroupRequest) { r.ProtocolType = "connect" }},
		{"no common protocol", func(r *protocol.JoinGroupRequest) { r.Protocols = protocols("roundrobin") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "kafka-3.x")
			require.Empty(t, f.send(1, dynamicJoin("")))
			r := dynamicJoin("")
			tc.mod(r)
			assert.Equal(t, protocol.InconsistentGroupProtocol, only(t, f.send(2, r), 2).Err())
		})
	}
	// Empty group, empty protocol list.
	f := newFixture(t, "kafka-3.x")
	r := dynamicJoin("")
	r.Protocols = nil
	assert.Equal(t, protocol.InconsistentGroupProtocol, only(t, f.send(1, r), 1).Err())
}

// kafka-0.10 has no initial delay: a lone joiner completes at once.
func TestNoInitialDelayOn010(t *testing.T) {
	f := newFixture(t, "kafka-0.10")
	r := dynamicJoin("")
	r.Version = 0
	r.RebalanceTimeout = 0
	jr := joinResp(t, only(t, f.send(1, r), 1))
	assert.Equal(t, protocol.None, jr.Error)
	assert.Equal(t, int32(1), jr.GenerationID)
}

// testJoinGroupFromUnchangedFollowerDoesNotRebalance and
// testJoinGroupFromUnchangedLeaderShouldRebalance.
//
// Kafka: GroupCoordinatorTest.testJoinGroupFromUnchangedFollowerDoesNotRebalance @3.6.1
// Kafka: GroupCoordinatorTest.testJoinGroupFromUnchangedLeaderShouldRebalance @3.6.1
func TestRejoinInStable(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, gen := f.stableGroup(2)
	leader := f.b.Leader(testGroup)
	require.Equal(t, ids[0], leader, "first joiner leads")
	jr := joinResp(t, only(t, f.send(2, dynamicJoin(ids[1])), 2))
	assert.Equal(t, protocol.None, jr.Error)
	assert.Equal(t, gen, jr.GenerationID)
	assert.Empty(t, jr.Members)
	assert.Equal(t, Stable, f.state())
	require.Empty(t, f.send(1, dynamicJoin(ids[0])))
	assert.Equal(t, PreparingRebalance, f.state())
	ev := f.events(protocol.EvRebalanceStart)
	require.Len(t, ev, 1)
	assert.Equal(t, "metadata", ev[0].Reason)
}

// A rejoin in CompletingRebalance: same metadata resends the JoinGroup
// response, changed metadata rebalances (GroupCoordinator.doJoinGroup's
// CompletingRebalance branch; Kafka has no test of this exact sequence).
func TestRejoinInCompletingRebalance(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	require.Empty(t, f.send(1, dynamicJoin("")))
	require.Empty(t, f.send(2, dynamicJoin("")))
	replies := f.completeInitialJoin()
	leader := joinResp(t, replyOn(t, replies, 1))
	follower := joinResp(t, replyOn(t, replies, 2))
	require.Len(t, leader.Members, 2)
	// Same metadata: immediate answer (leader gets the member list).
	jr := joinResp(t, only(t, f.send(1, dynamicJoin(leader.MemberID)), 1))
	assert.Equal(t, leader.GenerationID, jr.GenerationID)
	assert.Len(t, jr.Members, 2)
	// Changed metadata: rebalance; a parked follower SyncGroup is answered
	// REBALANCE_IN_PROGRESS.
	require.Empty(t, f.send(2, syncReq(follower.MemberID, follower.GenerationID)))
	r := dynamicJoin(leader.MemberID)
	r.Protocols = protocols("range", "roundrobin")
	replies = f.send(1, r)
	assert.Equal(t, protocol.RebalanceInProgress, syncResp(t, only(t, replies, 2)).Error)
	assert.Equal(t, PreparingRebalance, f.state())
}

// testSyncGroupFromIllegalGeneration, testSyncGroupFromUnknownMember,
// testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent.
//
// Kafka: GroupCoordinatorTest.testSyncGroupFromIllegalGeneration @3.6.1
// Kafka: GroupCoordinatorTest.testSyncGroupFromUnknownMember @3.6.1
// Kafka: GroupCoordinatorTest.testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent @3.6.1
func TestSyncGroupErrors(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	jr := f.joinSingle(1, dynamicJoin(""))
	cases := []struct {
		name string
		req  *protocol.SyncGroupRequest
		want protocol.ErrorCode
	}{
		{"illegal generation", syncReq(jr.MemberID, jr.GenerationID+1), protocol.IllegalGeneration},
		{"unknown member", syncReq("unknown", jr.GenerationID), protocol.UnknownMemberID},
		{"protocol name", &protocol.SyncGroupRequest{GroupID: testGroup, GenerationID: jr.GenerationID,
			MemberID: jr.MemberID, ProtocolName: "roundrobin"}, protocol.InconsistentGroupProtocol},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, only(t, f.send(2, tc.req), 2).Err(), tc.name)
	}
}

// Heartbeat matrix (testHeartbeatUnknownConsumerExistingGroup,
// testHeartbeatIllegalGeneration, testValidHeartbeat,
// testHeartbeatDuringRebalanceCausesRebalanceInProgress,
// testHeartbeatEmptyGroup-style) per state.
//
// Kafka: GroupCoordinatorTest.testHeartbeatUnknownConsumerExistingGroup @3.6.1
// Kafka: GroupCoordinatorTest.testHeartbeatIllegalGeneration @3.6.1
// Kafka: GroupCoordinatorTest.testValidHeartbeat @3.6.1
// Kafka: GroupCoordinatorTest.testHeartbeatDuringRebalanceCausesRebalanceInProgress @3.6.1
// Kafka: GroupCoordinatorTest.testHeartbeatEmptyGroup @3.6.1
func TestHeartbeatMatrix(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, gen := f.stableGroup(2)
	cases := []struct {
		name string
		req  *protocol.HeartbeatRequest
		want protocol.ErrorCode
	}{
		{"valid", hbReq(ids[0], gen), protocol.None},
		{"unknown member", hbReq("unknown", gen), protocol.UnknownMemberID},
		{"illegal generation", hbReq(ids[0], gen+1), protocol.IllegalGeneration},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, only(t, f.send(1, tc.req), 1).Err(), tc.name)
	}
	require.Empty(t, f.send(1, dynamicJoin(ids[0])))
	assert.Equal(t, protocol.RebalanceInProgress, only(t, f.send(2, hbReq(ids[1], gen)), 2).Err(),
		"PreparingRebalance keeps the old generation")
}

// testHeartbeatDuringRebalanceCausesRebalanceInProgress in
// CompletingRebalance, per version (KAFKA-10134 fixed in 2.6.1).
//
// Kafka: GroupCoordinatorTest.testHeartbeatDuringRebalanceCausesRebalanceInProgress @3.6.1
func TestHeartbeatDuringCompletingRebalancePerVersion(t *testing.T) {
	cases := []struct {
		profile  string
		want     protocol.ErrorCode
		survives bool // member still present after a session timeout of heartbeats
	}{
		{"kafka-2.6", protocol.RebalanceInProgress, false},
		{"kafka-2.6.1", protocol.None, true},
		{"kafka-3.x", protocol.None, true},
	}
	for _, tc := range cases {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile, func(c *Config) { c.InitialRebalanceDelay = 0 })
			r := dynamicJoin("")
			r.RebalanceTimeout = 10 * defaultSessionTimeout // no pending-sync expiry in the window
			require.Empty(t, f.send(1, r))
			jr := joinResp(t, only(t, f.advance(0), 1)) // InitialDelayedJoin(0) fires
			require.Equal(t, CompletingRebalance, f.state())
			for i := 0; i < 4; i++ {
				f.advance(defaultSessionTimeout / 3)
				resp := only(t, f.send(1, hbReq(jr.MemberID, jr.GenerationID)), 1).Err()
				if i == 0 {
					assert.Equal(t, tc.want, resp)
				}
			}
			assert.Equal(t, tc.survives, len(f.b.Members(testGroup)) == 1)
		})
	}
}

// testCommitMaintainsSession and testCommitOffsetInCompletingRebalance.
//
// Kafka: GroupCoordinatorTest.testCommitMaintainsSession @3.6.1
// Kafka: GroupCoordinatorTest.testCommitOffsetInCompletingRebalance @3.6.1
func TestOffsetCommit(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, gen := f.stableGroup(1)
	commit := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen, MemberID: ids[0]}
	f.advance(defaultSessionTimeout / 2)
	assert.Equal(t, protocol.None, only(t, f.send(1, commit), 1).Err())
	f.advance(defaultSessionTimeout/2 + time.Millisecond)
	assert.Equal(t, Stable, f.state(), "commit maintained the session")
	bad := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen + 1, MemberID: ids[0]}
	assert.Equal(t, protocol.IllegalGeneration, only(t, f.send(1, bad), 1).Err())
	anon := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: -1}
	assert.Equal(t, protocol.UnknownMemberID, only(t, f.send(1, anon), 1).Err(), "non-empty group: only members commit")
	// CompletingRebalance.
	// A lone leader's rejoin completes the DelayedJoin at once.
	jr := joinResp(t, only(t, f.send(1, dynamicJoin(ids[0])), 1))
	require.Equal(t, CompletingRebalance, f.state())
	c2 := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: jr.GenerationID, MemberID: ids[0]}
	assert.Equal(t, protocol.RebalanceInProgress, only(t, f.send(1, c2), 1).Err())
}

// testValidLeaveGroup / testLeaveGroupUnknownConsumerExistingGroup and
// a batch leave with one unknown member (per-member errors, as in
// testStaticMembersUnknownInstanceBatchLeaveGroup for static members).
//
// Kafka: GroupCoordinatorTest.testValidLeaveGroup @3.6.1
// Kafka: GroupCoordinatorTest.testLeaveGroupUnknownConsumerExistingGroup @3.6.1
// Kafka: GroupCoordinatorTest.testStaticMembersUnknownInstanceBatchLeaveGroup @3.6.1
func TestLeaveGroup(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, _ := f.stableGroup(3)
	lr := only(t, f.send(1, leaveReq(protocol.LeaveGroupMember{MemberID: ids[0]},
		protocol.LeaveGroupMember{MemberID: "unknown"})), 1).(*protocol.LeaveGroupResponse)
	require.Len(t, lr.Members, 2)
	assert.Equal(t, protocol.None, lr.Members[0].Error)
	assert.Equal(t, protocol.UnknownMemberID, lr.Members[1].Error)
	assert.Equal(t, protocol.UnknownMemberID, lr.Error, "error() = first member error")
	assert.Equal(t, PreparingRebalance, f.state())
	assert.Equal(t, ids[1], f.b.Leader(testGroup), "leadership moves to the earliest-joined member")
	ev := f.events(protocol.EvRebalanceStart)
	require.Len(t, ev, 1)
	assert.Equal(t, "leave", ev[0].Reason)
}

// testRebalanceCompletesBeforeMemberJoins-style: non-rejoined dynamic
// members are removed at the rebalance timeout; leader re-elected among
// the joined (earliest-joined rule).
//
// Kafka: GroupCoordinatorTest.testRebalanceCompletesBeforeMemberJoins @3.6.1
func TestDynamicNonRejoinerRemovedAtRebalanceTimeout(t *testing.T) {
	f := newFixture(t, "kafka-2.8") // no pending-sync
	ids, gen := f.stableGroup(2)
	// A follower with identical metadata is answered at once in Stable;
	// changed metadata forces a rebalance.
	assert.Equal(t, protocol.None, only(t, f.send(2, dynamicJoin(ids[1])), 2).Err())
	r := dynamicJoin(ids[1])
	r.Protocols = protocols("range", "roundrobin")
	require.Empty(t, f.send(2, r))
	require.Equal(t, PreparingRebalance, f.state())
	// ids[0] keeps its session alive (REBALANCE_IN_PROGRESS) but never rejoins.
	f.advance(defaultRebalanceTimeout / 2)
	assert.Equal(t, protocol.RebalanceInProgress, only(t, f.send(1, hbReq(ids[0], gen)), 1).Err())
	require.Empty(t, f.advance(defaultRebalanceTimeout/2-time.Millisecond))
	replies := f.advance(time.Millisecond)
	jr := joinResp(t, only(t, replies, 2))
	assert.Equal(t, gen+1, jr.GenerationID)
	assert.Equal(t, ids[1], jr.Leader, "leader re-elected among joined members")
	rem := f.events(protocol.EvMemberRemoved)
	require.Len(t, rem, 1)
	assert.Equal(t, ids[0], rem[0].Peer)
	assert.Equal(t, "rebalance-timeout", rem[0].Reason)
}

// testNewMemberTimeoutCompletion / testNewMemberJoinExpiration: a new
// member whose join is parked expires after NewMemberJoinTimeoutMs.
//
// Kafka: GroupCoordinatorTest.testNewMemberTimeoutCompletion @3.6.1
// Kafka: GroupCoordinatorTest.testNewMemberJoinExpiration @3.6.1
func TestNewMemberJoinTimeout(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	a := dynamicJoin("")
	a.SessionTimeout = time.Minute
	l := f.joinSingle(1, a)
	only(t, f.send(1, syncReq(l.MemberID, l.GenerationID)), 1)
	ids := []string{l.MemberID}
	// A member with a long rebalance timeout keeps the join open.
	require.Empty(t, f.send(2, func() *protocol.JoinGroupRequest {
		r := dynamicJoin("")
		r.RebalanceTimeout = 10 * time.Minute
		return r
	}()))
	// The old member never rejoins: a dynamic member would be removed
	// only at join completion (10 min) but keeps heartbeating.
	for i := 0; i < 11; i++ {
		f.advance(25 * time.Second)
		only(t, f.send(1, hbReq(ids[0], 1)), 1)
	}
	replies := f.advance(testNewMemberJoin - 275*time.Second)
	jr := joinResp(t, only(t, replies, 2))
	assert.Equal(t, protocol.UnknownMemberID, jr.Error)
	rem := f.events(protocol.EvMemberRemoved)
	require.Len(t, rem, 1)
	assert.Equal(t, "new-member-timeout", rem[0].Reason)
}

// testNewMemberTimeoutCompletion: once its join completes the member is no
// longer new, so the 5-minute new-member timeout stops applying; only its
// (longer) session timeout expires it.
//
// Kafka: GroupCoordinatorTest.testNewMemberTimeoutCompletion @3.6.1
func TestNewMemberTimeoutCompletion(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	r := dynamicJoin("")
	r.SessionTimeout = testNewMemberJoin + 5*time.Second
	jr := f.joinSingle(1, r)
	require.Equal(t, protocol.None, jr.Error)
	sr := syncResp(t, only(t, f.send(1, syncReq(jr.MemberID, jr.GenerationID,
		protocol.SyncGroupAssignment{MemberID: jr.MemberID})), 1))
	require.Equal(t, protocol.None, sr.Error)
	require.Len(t, f.b.Members(testGroup), 1)
	f.advance(testNewMemberJoin + 100*time.Millisecond)
	assert.Len(t, f.b.Members(testGroup), 1, "the new-member timeout no longer applies")
	f.advance(r.SessionTimeout + 100*time.Millisecond)
	assert.Empty(t, f.b.Members(testGroup), "the session timeout does")
}

// A member parked in JoinGroup (not new) is never expired.
func TestParkedMemberNotExpired(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, _ := f.stableGroup(2)
	require.Empty(t, f.send(1, dynamicJoin(ids[0])))    // leader rejoins, parked
	f.advance(defaultSessionTimeout + time.Millisecond) // both sessions would have expired
	// ids[0] parked: kept; ids[1] not parked and not heartbeating: removed
	// → join completes with ids[0] only.
	assert.Equal(t, []string{ids[0]}, f.b.Members(testGroup))
}

// testRebalanceTimesOutWhenSyncRequestIsNotReceived and
// ...FromFollowers / testRebalanceDoesNotTimeOutWhenAllSyncAreReceived
// (KAFKA-12890, 2.8.1+), vs the stuck 2.8.0 broker.
//
// Kafka: GroupCoordinatorTest.testRebalanceTimesOutWhenSyncRequestIsNotReceived @3.6.1
// Kafka: GroupCoordinatorTest.testRebalanceDoesNotTimeOutWhenAllSyncAreReceived @3.6.1
func TestPendingSyncExpiry(t *testing.T) {
	t.Run("leader never syncs (3.x)", func(t *testing.T) {
		f := newFixture(t, "kafka-3.x")
		lr := dynamicJoin("")
		lr.SessionTimeout = 2 * defaultRebalanceTimeout // the sync timeout, not the session, removes it
		require.Empty(t, f.send(1, lr))
		require.Empty(t, f.send(2, dynamicJoin("")))
		replies := f.completeInitialJoin()
		fol := joinResp(t, replyOn(t, replies, 2))
		require.Empty(t, f.send(2, syncReq(fol.MemberID, fol.GenerationID)))
		f.advance(defaultRebalanceTimeout / 2)
		only(t, f.send(2, hbReq(fol.MemberID, fol.GenerationID)), 2)
		replies = f.advance(defaultRebalanceTimeout / 2)
		assert.Equal(t, protocol.RebalanceInProgress, syncResp(t, only(t, replies, 2)).Error)
		rem := f.events(protocol.EvMemberRemoved)
		require.Len(t, rem, 1)
		assert.Equal(t, "sync-timeout", rem[0].Reason)
		start := f.events(protocol.EvRebalanceStart)
		require.Len(t, start, 1)
		assert.Equal(t, "sync-timeout", start[0].Reason)
		assert.Equal(t, PreparingRebalance, f.state())
	})
	t.Run("followers never sync, group Stable (3.x)", func(t *testing.T) {
		f := newFixture(t, "kafka-3.x")
		long := dynamicJoin("")
		long.SessionTimeout = 2 * defaultRebalanceTimeout
		require.Empty(t, f.send(1, long))
		require.Empty(t, f.send(2, long))
		replies := f.completeInitialJoin()
		l := joinResp(t, replyOn(t, replies, 1))
		only(t, f.send(1, syncReq(l.MemberID, l.GenerationID)), 1)
		require.Equal(t, Stable, f.state())
		f.advance(defaultRebalanceTimeout)
		assert.Equal(t, PreparingRebalance, f.state())
		assert.Equal(t, []string{l.MemberID}, f.b.Members(testGroup))
	})
	t.Run("all synced: no expiry", func(t *testing.T) {
		f := newFixture(t, "kafka-3.x")
		ids, gen := f.stableGroup(2)
		f.advance(defaultRebalanceTimeout / 2)
		only(t, f.send(1, hbReq(ids[0], gen)), 1)
		only(t, f.send(2, hbReq(ids[1], gen)), 2)
		f.advance(defaultRebalanceTimeout/2 + time.Millisecond)
		assert.Equal(t, Stable, f.state())
	})
	t.Run("2.8.0: leader heartbeating but never syncing wedges the group", func(t *testing.T) {
		f := newFixture(t, "kafka-2.8")
		require.Empty(t, f.send(1, dynamicJoin("")))
		require.Empty(t, f.send(2, dynamicJoin("")))
		replies := f.completeInitialJoin()
		l := joinResp(t, replyOn(t, replies, 1))
		fol := joinResp(t, replyOn(t, replies, 2))
		require.Empty(t, f.send(2, syncReq(fol.MemberID, fol.GenerationID)))
		for i := 0; i < 10; i++ {
			f.advance(defaultSessionTimeout / 2)
			assert.Equal(t, protocol.None, only(t, f.send(1, hbReq(l.MemberID, l.GenerationID)), 1).Err())
		}
		assert.Equal(t, CompletingRebalance, f.state(), "KAFKA-12890: stuck")
	})
}

// Static membership (KIP-345): staticMemberRejoinWithLeaderIdAndUnknownMemberId,
// staticMemberRejoinWithKnownMemberId, staticMemberFenceDuplicateRejoinedFollower,
// staticMemberHeartbeatLeaderWithInvalidMemberId.
//
// Kafka: GroupCoordinatorTest.staticMemberRejoinWithLeaderIdAndUnknownMemberId @3.6.1
// Kafka: GroupCoordinatorTest.staticMemberRejoinWithKnownMemberId @3.6.1
// Kafka: GroupCoordinatorTest.staticMemberFenceDuplicateRejoinedFollower @3.6.1
// Kafka: GroupCoordinatorTest.staticMemberHeartbeatLeaderWithInvalidMemberId @3.6.1
func TestStaticMemberRestartInStable(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	l := f.joinSingle(1, staticJoin("", "leader-instance"))
	only(t, f.send(1, syncReq(l.MemberID, l.GenerationID)), 1)
	require.Equal(t, Stable, f.state())
	// Restart with unknown member id: replaced, no rebalance, old leader id.
	jr := joinResp(t, only(t, f.send(2, staticJoin("", "leader-instance")), 2))
	assert.Equal(t, protocol.None, jr.Error)
	assert.NotEqual(t, l.MemberID, jr.MemberID)
	assert.Equal(t, l.MemberID, jr.Leader, "old leader id returned")
	assert.Equal(t, l.GenerationID, jr.GenerationID)
	assert.Equal(t, Stable, f.state())
	assert.Len(t, f.out.Persist, 1, "2.7+: replacement persisted")
	assert.Equal(t, jr.MemberID, f.b.Leader(testGroup))
	// The old id is fenced.
	fenced := &protocol.HeartbeatRequest{GroupID: testGroup, GenerationID: l.GenerationID, MemberID: l.MemberID, GroupInstanceID: "leader-instance"}
	assert.Equal(t, protocol.FencedInstanceID, only(t, f.send(1, fenced), 1).Err())
	// Known member id rejoin in Stable as leader → rebalance (a lone
	// member completes it at once).
	r := staticJoin(jr.MemberID, "leader-instance")
	jr2 := joinResp(t, only(t, f.send(2, r), 2))
	assert.Equal(t, l.GenerationID+1, jr2.GenerationID)
	assert.Equal(t, CompletingRebalance, f.state())
}

// staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged.
//
// Kafka: GroupCoordinatorTest.staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged @3.6.1
func TestStaticMemberRestartChangesProtocol(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	l := f.joinSingle(1, staticJoin("", "inst"))
	only(t, f.send(1, syncReq(l.MemberID, l.GenerationID)), 1)
	r := staticJoin("", "inst")
	r.Protocols = protocols("roundrobin", "range")
	// The rebalance starts; the lone (replaced) member completes it at once.
	jr := joinResp(t, only(t, f.send(2, r), 2))
	assert.Equal(t, l.GenerationID+1, jr.GenerationID)
	assert.Equal(t, "roundrobin", jr.ProtocolName)
	assert.Equal(t, "join", f.events(protocol.EvRebalanceStart)[0].Reason)
}

// staticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged (KAFKA-9801,
// 2.5.0+: GroupCoordinator.scala 2.5.0 1032-1037) vs 2.3–2.4.
//
// Kafka: GroupCoordinatorTest.staticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged @2.5.0
func TestStaticMemberRestartInCompletingRebalance(t *testing.T) {
	cases := []struct {
		profile string
		want    GroupState
	}{
		{"kafka-2.4", CompletingRebalance},
		{"kafka-2.5", PreparingRebalance}, // KAFKA-9801 shipped in 2.5.0 (commit 146811ab296)
		{"kafka-2.6", PreparingRebalance},
	}
	for _, tc := range cases {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			require.Empty(t, f.send(1, staticJoin("", "a")))
			require.Empty(t, f.send(2, staticJoin("", "b")))
			replies := f.completeInitialJoin()
			b := joinResp(t, replyOn(t, replies, 2))
			require.Empty(t, f.send(2, syncReq(b.MemberID, b.GenerationID)))
			replies = f.send(3, staticJoin("", "b"))
			assert.Equal(t, protocol.FencedInstanceID, syncResp(t, replyOn(t, replies, 2)).Error,
				"old id's parked sync fenced")
			assert.Equal(t, tc.want, f.state())
		})
	}
}

// KAFKA-8220: static members that do not rejoin are kept at join
// completion; when no joined member can lead, another DelayedJoin.
func TestStaticNonRejoinerKept(t *testing.T) {
	f := newFixture(t, "kafka-2.8")
	require.Empty(t, f.send(1, staticJoin("", "a")))
	require.Empty(t, f.send(2, staticJoin("", "b")))
	replies := f.completeInitialJoin()
	a := joinResp(t, replyOn(t, replies, 1))
	b := joinResp(t, replyOn(t, replies, 2))
	only(t, f.send(1, syncReq(a.MemberID, a.GenerationID)), 1)
	only(t, f.send(2, syncReq(b.MemberID, b.GenerationID)), 2)
	// b rejoins with changed metadata; a stays silent.
	r := staticJoin(b.MemberID, "b")
	r.Protocols = protocols("range", "roundrobin")
	require.Empty(t, f.send(2, r))
	only(t, f.send(1, hbReq(a.MemberID, a.GenerationID)), 1)
	replies = f.advance(defaultRebalanceTimeout)
	jr := joinResp(t, only(t, replies, 2))
	assert.Equal(t, a.GenerationID+1, jr.GenerationID)
	assert.Len(t, f.b.Members(testGroup), 2, "static a kept")
	assert.Len(t, jr.Members, 2)
}

// onResignation: parked JoinGroup answered NOT_COORDINATOR, then every
// request NOT_COORDINATOR (GroupCoordinator.onResignation; cf.
// GroupMetadataManagerTest.testClassicGroupOnUnloadedEmptyAndPreparingRebalance
// in the 4.x Java coordinator).
//
// Kafka: GroupMetadataManagerTest.testClassicGroupOnUnloadedEmptyAndPreparingRebalance @4.0.0
func TestResignation(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, gen := f.stableGroup(2)
	require.Empty(t, f.send(1, dynamicJoin(ids[0])))
	f.out.Reset()
	f.b.Resign(f.now, testGroup, &f.out)
	jr := joinResp(t, only(t, f.out.Replies, 1))
	assert.Equal(t, protocol.NotCoordinator, jr.Error)
	s, _, ok := f.b.GroupState(testGroup)
	assert.True(t, ok)
	assert.Equal(t, Dead, s)
	assert.Equal(t, protocol.NotCoordinator, only(t, f.send(2, hbReq(ids[1], gen)), 2).Err())
	assert.Equal(t, protocol.Never, f.b.NextDeadline(), "no timers left")
}

// A member rejoining after failover attributes the rebalance to the failover.
func TestFailoverReason(t *testing.T) {
	src := newFixture(t, "kafka-3.x")
	ids, _ := src.stableGroup(2)
	rec := *src.persisted
	f := newFixture(t, "kafka-3.x")
	f.b.Resign(0, testGroup, &f.out)
	f.now = protocol.Instant(time.Second)
	f.b.Elect(f.now, testGroup, 0, &rec, &f.out)
	require.Empty(t, f.send(1, dynamicJoin(ids[0]))) // leader rejoin
	ev := f.events(protocol.EvRebalanceStart)
	require.Len(t, ev, 1)
	assert.Equal(t, "coordinator-failover", ev[0].Reason)
}

// Protocol selection by vote with deterministic tie-break
// (GroupMetadataTest.testSelectProtocol / testSelectProtocolChoosesCompatibleProtocol).
//
// Kafka: GroupMetadataTest.testSelectProtocol @3.6.1
// Kafka: GroupMetadataTest.testSelectProtocolChoosesCompatibleProtocol @3.6.1
func TestSelectProtocol(t *testing.T) {
	cases := []struct {
		name  string
		prefs [][]string
		want  string
	}{
		{"majority", [][]string{{"range", "roundrobin"}, {"roundrobin", "range"}, {"roundrobin", "range"}}, "roundrobin"},
		{"only compatible", [][]string{{"sticky", "range"}, {"range"}}, "range"},
		{"tie: first member's preference", [][]string{{"roundrobin", "range"}, {"range", "roundrobin"}}, "roundrobin"},
		{"candidates only", [][]string{{"sticky", "range", "roundrobin"}, {"roundrobin", "range"}, {"sticky", "roundrobin"}, {"range", "roundrobin"}}, "roundrobin"},
		{"duplicate name counts once", [][]string{{"range", "range", "roundrobin"}, {"roundrobin"}}, "roundrobin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "kafka-3.x")
			for i, p := range tc.prefs {
				r := dynamicJoin("")
				r.Protocols = protocols(p...)
				require.Empty(t, f.send(Conn(i+1), r))
			}
			replies := f.completeInitialJoin()
			require.Len(t, replies, len(tc.prefs))
			assert.Equal(t, tc.want, joinResp(t, replies[0].Resp).ProtocolName)
		})
	}
}

// Trace: every state change emits EvGroupState; MemberAdded carries the
// client id; GenerationComplete carries count and leader.
func TestTraceEvents(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	r := dynamicJoin("")
	r.ClientID = "payments-0"
	require.Empty(t, f.send(1, r))
	added := f.events(protocol.EvMemberAdded)
	require.Len(t, added, 1)
	assert.Equal(t, "payments-0", added[0].Detail)
	assert.Equal(t, "broker-1", added[0].Node)
	states := f.events(protocol.EvGroupState)
	require.Len(t, states, 2) // created Empty, → PreparingRebalance
	assert.Equal(t, "PreparingRebalance", states[1].State)
	assert.Equal(t, "Empty", states[1].Detail)
	assert.Equal(t, "join", f.events(protocol.EvRebalanceStart)[0].Reason)
	f.advance(testInitialDelay)
	gc := f.events(protocol.EvGenerationComplete)
	require.Len(t, gc, 1)
	assert.Equal(t, int32(1), gc[0].Count)
	assert.Equal(t, added[0].Peer, gc[0].Peer)
}

// Illegal transitions panic (GroupMetadataTest.testStableToStableIllegalTransition etc.).
//
// Kafka: GroupMetadataTest.testStableToStableIllegalTransition @3.6.1
func TestIllegalTransitionPanics(t *testing.T) {
	cases := []struct{ from, to GroupState }{
		{Stable, Stable}, {Empty, Stable}, {Empty, CompletingRebalance}, {Stable, Empty},
		{CompletingRebalance, Empty}, {PreparingRebalance, Stable},
	}
	for _, tc := range cases {
		b := NewBroker(testConfig("kafka-3.x"))
		g := newGroup("g", nil)
		g.state = tc.from
		assert.Panics(t, func() { b.transitionTo(g, tc.to, &Output{}) }, "%s -> %s", tc.from, tc.to)
	}
}

func TestProfiles(t *testing.T) {
	for _, n := range ProfileNames() {
		p, err := ParseProfile(n)
		require.NoError(t, err)
		assert.Equal(t, Profile(n), p)
	}
	_, err := ParseProfile("kafka-9.9")
	assert.Error(t, err)
	p, err := ParseProfile("KAFKA-3.X")
	require.NoError(t, err)
	assert.Equal(t, Profile("kafka-3.x"), p)
	cfg := testConfig("kafka-3.x")
	cfg.MaxSessionTimeout = 0
	assert.Error(t, cfg.Validate())
}

// Member ids are deterministic and unique per broker.
func TestMemberIDs(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, _ := f.stableGroup(2)
	assert.Equal(t, []string{"client-1-1", "client-1-2"}, ids)
}

// Static restarts in a Stable group of several members: a follower
// restarting with an unknown member id and a superset of the protocols that
// keeps the selected one is replaced without a rebalance (the group record
// is persisted, the leader and generation unchanged, the old assignment
// carried over); its old id is fenced on JoinGroup, SyncGroup and
// Heartbeat; an old id parked in JoinGroup during a rebalance is fenced the
// moment the duplicate joins.
//
// Kafka: GroupCoordinatorTest.staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged @3.6.1
// Kafka: GroupCoordinatorTest.staticMemberFenceDuplicateRejoinedFollower @3.6.1
// Kafka: GroupCoordinatorTest.staticMemberSyncAsLeaderWithInvalidMemberId @3.6.1
// Kafka: GroupCoordinatorTest.staticMemberRejoinAsFollowerWithMismatchedMemberId @3.6.1
func TestStaticMemberRestartInStableSeveralMembers(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	insts := []string{"a", "b", "c"}
	for i, inst := range insts {
		r := staticJoin("", inst)
		r.Protocols = protocols("range", "roundrobin")
		require.Empty(t, f.send(Conn(i+1), r))
	}
	replies := f.completeInitialJoin()
	var js [3]*protocol.JoinGroupResponse
	for i := range js {
		js[i] = joinResp(t, replyOn(t, replies, Conn(i+1)))
	}
	leader, gen := js[0].Leader, js[0].GenerationID
	require.Equal(t, js[0].MemberID, leader)
	var as []protocol.SyncGroupAssignment
	for i, j := range js {
		as = append(as, protocol.SyncGroupAssignment{MemberID: j.MemberID,
			Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{{Topic: "t", Partition: int32(i)}}}})
	}
	only(t, f.send(1, syncReq(leader, gen, as...)), 1)
	only(t, f.send(2, syncReq(js[1].MemberID, gen)), 2)
	only(t, f.send(3, syncReq(js[2].MemberID, gen)), 3)
	require.Equal(t, Stable, f.state())

	// b restarts: unknown id, protocols a superset (roundrobin first), the
	// group's vote still selects range.
	r := staticJoin("", "b")
	r.Protocols = protocols("roundrobin", "range", "sticky")
	nb := joinResp(t, only(t, f.send(4, r), 4))
	require.Equal(t, protocol.None, nb.Error)
	assert.NotEqual(t, js[1].MemberID, nb.MemberID)
	assert.Equal(t, gen, nb.GenerationID)
	assert.Equal(t, leader, nb.Leader)
	assert.Equal(t, "range", nb.ProtocolName)
	assert.Equal(t, Stable, f.state())
	assert.Empty(t, f.events(protocol.EvRebalanceStart), "no rebalance")
	require.Len(t, f.out.Persist, 1)
	sr := syncResp(t, only(t, f.send(4, syncReq(nb.MemberID, gen)), 4))
	assert.Equal(t, as[1].Assignment, sr.Assignment, "the assignment follows the instance")

	// The old id is fenced everywhere.
	old := staticJoin(js[1].MemberID, "b")
	assert.Equal(t, protocol.FencedInstanceID, joinResp(t, only(t, f.send(2, old), 2)).Error)
	oldSync := syncReq(js[1].MemberID, gen)
	oldSync.GroupInstanceID = "b"
	assert.Equal(t, protocol.FencedInstanceID, only(t, f.send(2, oldSync), 2).Err())
	oldHB := hbReq(js[1].MemberID, gen)
	oldHB.GroupInstanceID = "b"
	assert.Equal(t, protocol.FencedInstanceID, only(t, f.send(2, oldHB), 2).Err())
	assert.Equal(t, Stable, f.state())

	// c's known-id rejoin with changed metadata starts a rebalance; a
	// duplicate c joining with an unknown id fences the parked old JoinGroup
	// at once.
	rc := staticJoin(js[2].MemberID, "c")
	rc.Protocols = protocols("roundrobin", "range")
	require.Empty(t, f.send(3, rc))
	require.Equal(t, PreparingRebalance, f.state())
	dup := staticJoin("", "c")
	dup.Protocols = protocols("range", "roundrobin")
	fenced := f.send(5, dup)
	jr := joinResp(t, replyOn(t, fenced, 3))
	assert.Equal(t, protocol.FencedInstanceID, jr.Error)
	assert.Equal(t, PreparingRebalance, f.state())
}
