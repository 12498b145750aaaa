package coordinator

// Goal: the broker behaviours an audit found to differ from the Scala
// GroupCoordinator at the releases named, one test each, each across the
// profiles on both sides of the change. Method: drive the broker through
// the sequence the Scala code decides on and assert the decision.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Before KAFKA-7610 (2.2.0) addMemberAndRebalance arms no heartbeat expiry
// (GroupCoordinator.scala 0.11.0.0 634-653; the same through 2.1.0): a new
// member parked in JoinGroup outlives its session timeout and is answered
// when the join completes. 2.2+ caps it with the 5-minute new-member
// timeout instead.
//
// Kafka: GroupCoordinatorTest.testNewMemberJoinExpiration @2.2.0
func TestNewMemberParkedInJoinNotExpiredBefore22(t *testing.T) {
	for _, profile := range []string{"kafka-0.11", "kafka-2.2"} {
		t.Run(profile, func(t *testing.T) {
			f := newFixture(t, profile)
			ids, gen := f.stableGroup(1)
			r := dynamicJoin("")
			r.RebalanceTimeout = 4 * defaultSessionTimeout
			require.Empty(t, f.send(2, r))
			require.Equal(t, PreparingRebalance, f.state())
			// The old member heartbeats (REBALANCE_IN_PROGRESS) but never
			// rejoins; the new one is silent past its session timeout.
			for i := 0; i < 6; i++ {
				f.advance(defaultSessionTimeout / 2)
				only(t, f.send(1, hbReq(ids[0], gen)), 1)
			}
			require.Len(t, f.b.Members(testGroup), 2, "new member kept past its session timeout")
			replies := f.advance(r.RebalanceTimeout)
			jr := joinResp(t, only(t, replies, 2))
			assert.Equal(t, protocol.None, jr.Error)
			assert.Equal(t, gen+1, jr.GenerationID)
			assert.Equal(t, jr.MemberID, jr.Leader, "the non-rejoined old member was removed")
		})
	}
}

// KAFKA-14009 (3.3.2/3.4.0): a rejoin takes the request's session and
// rebalance timeouts. Before, GroupMetadata.updateMember (2.8.1 521-534,
// 3.3.1 527-540) keeps the member's first ones, for a dynamic rejoin and a
// static restart alike; 3.3.2's updateMember (527-544) takes them.
//
// Kafka: GroupCoordinatorTest.staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsAndPersistChange @3.6.1
func TestRejoinUpdatesTimeoutsFrom34(t *testing.T) {
	for _, tc := range []struct {
		profile string
		updated bool
	}{{"kafka-3.2", false}, {"kafka-3.3", false}, {"kafka-3.3.2", true}, {"kafka-3.4", true}, {"kafka-3.x", true}} {
		t.Run(tc.profile+"/dynamic", func(t *testing.T) {
			f := newFixture(t, tc.profile)
			ids, gen := f.stableGroup(1)
			r := dynamicJoin(ids[0])
			r.SessionTimeout, r.RebalanceTimeout = 4*defaultSessionTimeout, 4*defaultRebalanceTimeout
			jr := joinResp(t, only(t, f.send(1, r), 1))
			require.Equal(t, gen+1, jr.GenerationID)
			only(t, f.send(1, syncReq(ids[0], jr.GenerationID)), 1)
			f.advance(2 * defaultSessionTimeout)
			assert.Equal(t, tc.updated, len(f.b.Members(testGroup)) == 1,
				"silent for 2x the old session timeout, within the new one")
		})
		t.Run(tc.profile+"/static", func(t *testing.T) {
			f := newFixture(t, tc.profile)
			l := f.joinSingle(1, staticJoin("", "inst"))
			only(t, f.send(1, syncReq(l.MemberID, l.GenerationID)), 1)
			r := staticJoin("", "inst")
			r.SessionTimeout, r.RebalanceTimeout = 4*defaultSessionTimeout, 4*defaultRebalanceTimeout
			jr := joinResp(t, only(t, f.send(2, r), 2))
			require.Equal(t, protocol.None, jr.Error)
			require.NotNil(t, f.persisted)
			require.Len(t, f.persisted.Members, 1)
			want := defaultSessionTimeout
			if tc.updated {
				want = r.SessionTimeout
			}
			assert.Equal(t, want, f.persisted.Members[0].SessionTimeout)
		})
	}
}

// KAFKA-10284 (2.6.1, commit 535efa4c2cb; GroupCoordinator.scala 2.6.1
// 1048-1056): a static restart in Stable persists the group; 2.6.0 answers
// at once and writes nothing.
//
// Kafka: GroupCoordinatorTest.staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged @2.6.1
func TestStaticRestartInStablePersistsFrom261(t *testing.T) {
	for _, tc := range []struct {
		profile string
		persist bool
	}{{"kafka-2.6", false}, {"kafka-2.6.1", true}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			l := f.joinSingle(1, staticJoin("", "inst"))
			only(t, f.send(1, syncReq(l.MemberID, l.GenerationID)), 1)
			jr := joinResp(t, only(t, f.send(2, staticJoin("", "inst")), 2))
			require.Equal(t, protocol.None, jr.Error)
			assert.Equal(t, l.GenerationID, jr.GenerationID)
			assert.Equal(t, tc.persist, len(f.out.Persist) == 1)
		})
	}
}

// group.max.size and KIP-394 pending ids, three eras. A Stable group of one
// with group.max.size 2 hands out two pending ids; the leader rejoins;
// the first pending id joins (accepted), the second is over the cap:
//   - 3.0+: rejected and dropped by GroupMetadata.remove (3.6.1
//     GroupCoordinator.scala 189-191, GroupMetadata.scala 265-279), so the
//     join completes at once;
//   - 2.6–2.8: rejected, the pending id stays until its session expiry;
//   - 2.2–2.5: only joins with an unknown member id are capped
//     (GroupCoordinator.scala 2.5.0 161-163): it is accepted.
//
// Kafka: GroupCoordinatorTest.testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember @3.6.1
func TestMaxSizeRejectsPendingMember(t *testing.T) {
	for _, tc := range []struct {
		profile  string
		rejected bool
		waits    bool // the join completes only at the pending id's expiry
	}{{"kafka-2.5", false, false}, {"kafka-2.8", true, true}, {"kafka-3.0", true, false}, {"kafka-3.x", true, false}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile, func(c *Config) { c.MaxSize = 2 })
			ids, gen := f.stableGroup(1)
			r := dynamicJoin("")
			r.Version = 4
			p1 := joinResp(t, only(t, f.send(2, r), 2))
			p2 := joinResp(t, only(t, f.send(3, r), 3))
			require.Equal(t, protocol.MemberIDRequired, p1.Error)
			require.Equal(t, protocol.MemberIDRequired, p2.Error)
			require.Empty(t, f.send(1, dynamicJoin(ids[0])))
			r1 := dynamicJoin(p1.MemberID)
			r1.Version = 4
			require.Empty(t, f.send(2, r1))
			r2 := dynamicJoin(p2.MemberID)
			r2.Version = 4
			replies := f.send(3, r2)
			if !tc.rejected {
				// Accepted: all three joined, the join completes at once.
				require.Len(t, replies, 3)
				assert.Equal(t, protocol.None, joinResp(t, replyOn(t, replies, 3)).Error)
				assert.Len(t, f.b.Members(testGroup), 3)
				return
			}
			assert.Equal(t, protocol.GroupMaxSizeReached, joinResp(t, replyOn(t, replies, 3)).Error)
			if tc.waits {
				require.Len(t, replies, 1, "the join waits for the pending id")
				replies = f.advance(defaultSessionTimeout)
				require.Len(t, replies, 2, "completed at the pending id's expiry")
			} else {
				require.Len(t, replies, 3, "rejection and the completed join")
			}
			assert.Equal(t, gen+1, joinResp(t, replyOn(t, replies, 1)).GenerationID)
			assert.Len(t, f.b.Members(testGroup), 2)
		})
	}
}

// 2.3–2.7: a JoinGroup rejected for group.max.size also drops its instance
// id's static mapping (group.removeStaticMember, GroupCoordinator.scala
// 2.5.0 164-166): a static restart rejected at a full group leaves the
// current member unreachable by its instance id (its next JoinGroup with
// its own member id is UNKNOWN_MEMBER_ID). 2.8+ leave it alone.
//
// Kafka: GroupCoordinatorTest.testStaticMembersJoinGroupWithMaxSize @2.6.0
func TestMaxSizeRejectionDropsStaticMapping(t *testing.T) {
	for _, tc := range []struct {
		profile string
		want    protocol.ErrorCode
	}{{"kafka-2.5", protocol.UnknownMemberID}, {"kafka-2.8", protocol.None}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile, func(c *Config) { c.MaxSize = 1 })
			a := f.joinSingle(1, staticJoin("", "a"))
			only(t, f.send(1, syncReq(a.MemberID, a.GenerationID)), 1)
			// A restart of "a" with an unknown member id at a full group is
			// rejected in both eras (2.2–2.5: every unknown-id join; 2.6+:
			// acceptJoiningMember sees no member "").
			rej := joinResp(t, only(t, f.send(2, staticJoin("", "a")), 2))
			require.Equal(t, protocol.GroupMaxSizeReached, rej.Error)
			// The current member's own rejoin.
			jr := joinResp(t, only(t, f.send(1, staticJoin(a.MemberID, "a")), 1))
			assert.Equal(t, tc.want, jr.Error)
		})
	}
}

// A static restart in Stable before the old member id synced (2.8.1+):
// replaceStaticMember leaves the old id in pendingSyncMembers
// (GroupMetadata.scala 3.6.1 316-337), the new id's SyncGroup does not
// clear it, so DelayedSync expires at the rebalance timeout and rebalances
// (onExpirePendingSync, GroupCoordinator.scala 3.6.1 1622-1634) with both
// members kept.
//
// Kafka: GroupCoordinatorTest.testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers @3.6.1
func TestStaticRestartBeforeSyncRebalancesAtSyncDeadline(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	require.Empty(t, f.send(1, staticJoin("", "a")))
	require.Empty(t, f.send(2, staticJoin("", "b")))
	replies := f.completeInitialJoin()
	a := joinResp(t, replyOn(t, replies, 1))
	b := joinResp(t, replyOn(t, replies, 2))
	require.Equal(t, a.MemberID, a.Leader)
	only(t, f.send(1, syncReq(a.MemberID, a.GenerationID)), 1)
	require.Equal(t, Stable, f.state())
	// b restarts before its SyncGroup; the new id syncs at once.
	nb := joinResp(t, only(t, f.send(3, staticJoin("", "b")), 3))
	require.Equal(t, protocol.None, nb.Error)
	require.NotEqual(t, b.MemberID, nb.MemberID)
	sr := syncResp(t, only(t, f.send(3, syncReq(nb.MemberID, nb.GenerationID)), 3))
	require.Equal(t, protocol.None, sr.Error)
	f.advance(defaultRebalanceTimeout / 2)
	only(t, f.send(1, hbReq(a.MemberID, a.GenerationID)), 1)
	only(t, f.send(3, hbReq(nb.MemberID, nb.GenerationID)), 3)
	assert.Equal(t, Stable, f.state())
	f.advance(defaultRebalanceTimeout / 2)
	assert.Equal(t, PreparingRebalance, f.state(), "the old id never synced")
	ev := f.events(protocol.EvRebalanceStart)
	require.Len(t, ev, 1)
	assert.Equal(t, reasonSyncTimeout, ev[0].Reason)
	assert.Len(t, f.b.Members(testGroup), 2, "no current member removed")
}

// OffsetCommit with generation -1 to an Empty group: accepted whatever
// member id or instance id it carries (validateOffsetCommit, 3.6.1
// GroupCoordinator.scala 989-993; KAFKA-14201, first released in 3.3.0:
// GroupCoordinator.scala 3.3.0 985-989; doCommitOffsets ≤2.8 had the same
// branch). 3.0–3.2 validated the member first (UNKNOWN_MEMBER_ID,
// GroupCoordinator.scala 3.2.0 983-997).
//
// Kafka: GroupCoordinatorTest.testManualCommitOffsetShouldNotValidateMemberIdAndInstanceId @3.6.1
func TestManualCommitToEmptyGroup(t *testing.T) {
	for _, tc := range []struct {
		profile string
		want    protocol.ErrorCode
	}{{"kafka-2.8", protocol.None}, {"kafka-3.2", protocol.UnknownMemberID}, {"kafka-3.3", protocol.None}, {"kafka-3.3.2", protocol.None},
		{"kafka-3.4", protocol.None}, {"kafka-3.x", protocol.None}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			ids, _ := f.stableGroup(1)
			only(t, f.send(1, leaveReq(protocol.LeaveGroupMember{MemberID: ids[0]})), 1)
			require.Equal(t, Empty, f.state())
			c1 := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: -1, GroupInstanceID: "instance-id"}
			c2 := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: -1, MemberID: "unknown"}
			assert.Equal(t, tc.want, only(t, f.send(1, c1), 1).Err())
			assert.Equal(t, tc.want, only(t, f.send(1, c2), 1).Err())
		})
	}
}

var _ = time.Second

// A KIP-394 pending member whose second JoinGroup arrives after the group's
// last member left, the group still PreparingRebalance with no member: the
// protocol check passes (GroupMetadata.supportsProtocols,
// `memberProtocols.exists(supportedProtocols(_) == members.size)`, whose
// counts default to 0: GroupMetadata.scala 2.3.0 419-424, 3.6.1 473-478;
// ClassicGroup.supportsProtocols `getOrDefault(name, 0) == members.size()`,
// v8.0.0 1103-1111), so the member is added, the join completes and it
// leads the next generation; it is not told INCONSISTENT_GROUP_PROTOCOL.
//
// It extends the Kafka tests of supportsProtocols, which cover Empty and
// non-empty groups only:
//
// Kafka: GroupMetadataTest.testSupportsProtocols @3.6.1
// Kafka: ClassicGroupTest.testSupportsProtocols @4.0.0
func TestPendingMemberJoinsGroupWithNoMember(t *testing.T) {
	for _, profile := range []string{"kafka-2.3", "kafka-2.8", "kafka-3.x", "kafka-4.0", "kafka-4.x"} {
		t.Run(profile, func(t *testing.T) {
			f := newFixture(t, profile)
			ids, gen := f.stableGroup(1)
			// A second member's first JoinGroup (v5): a pending id.
			nr := dynamicJoin("")
			nr.Version = 5
			pj := joinResp(t, only(t, f.send(2, nr), 2))
			require.Equal(t, protocol.MemberIDRequired, pj.Error)
			// The leader rejoins (PreparingRebalance, waiting for the
			// pending id), then leaves: no member is left.
			require.Empty(t, f.send(1, dynamicJoin(ids[0])))
			require.Equal(t, PreparingRebalance, f.state())
			replyOn(t, f.send(3, leaveReq(protocol.LeaveGroupMember{MemberID: ids[0]})), 3)
			require.Equal(t, PreparingRebalance, f.state())
			require.Empty(t, f.b.Members(testGroup))
			nr2 := dynamicJoin(pj.MemberID)
			nr2.Version = 5
			jr := joinResp(t, replyOn(t, f.send(2, nr2), 2))
			require.Equal(t, protocol.None, jr.Error, "not INCONSISTENT_GROUP_PROTOCOL")
			assert.Equal(t, gen+1, jr.GenerationID)
			assert.Equal(t, pj.MemberID, jr.Leader)
			assert.Equal(t, []string{pj.MemberID}, f.b.Members(testGroup))
			assert.Equal(t, CompletingRebalance, f.state())
		})
	}
}
