package coordinator

// Goal: the kafka-4.x broker profiles follow the Java group coordinator's
// classic-group code (GroupMetadataManager, confluentinc/kafka v8.0.0 =
// Apache 4.0; unchanged through v8.3.0) where it differs from the Scala
// GroupCoordinator. Method: one sequence per difference, run against a
// Scala profile and a 4.x profile, asserting the decision each makes.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// A group that went Empty and restarts: Java extends the initial delay for
// every new member of a rebalance started from Empty (previousState() ==
// EMPTY, addMemberThenRebalanceOrCompleteJoin v8.0.0 5139-5186); Scala only
// in generation 0, so a restarted group completes after one delay.
//
// Kafka: GroupMetadataManagerTest.testResetRebalanceDelayWhenNewMemberJoinsGroupDuringInitialRebalance @4.0.0
// Kafka: GroupCoordinatorTest.shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance @3.6.1
func TestJavaInitialDelayExtendsAfterEmpty(t *testing.T) {
	for _, tc := range []struct {
		profile  string
		extended bool
	}{{"kafka-3.x", false}, {"kafka-4.0", true}, {"kafka-4.3", true}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			ids, _ := f.stableGroup(1)
			only(t, f.send(1, leaveReq(protocol.LeaveGroupMember{MemberID: ids[0]})), 1)
			require.Equal(t, Empty, f.state())
			require.Empty(t, f.send(2, dynamicJoin("")))
			f.advance(testInitialDelay / 2)
			require.Empty(t, f.send(3, dynamicJoin("")))
			replies := f.advance(testInitialDelay / 2)
			if !tc.extended {
				assert.Len(t, replies, 2, "completed after one initial delay")
				return
			}
			assert.Empty(t, replies, "a new member extended the delay")
			assert.Len(t, f.advance(testInitialDelay), 2)
		})
	}
}

// An expiry during the initial delay: Java's removePendingMemberAndUpdate-
// ClassicGroup (v8.0.0 5086-5096) completes the join as soon as every
// remaining member has joined; Scala's InitialDelayedJoin never completes
// early, so the join waits for the delay.
//
// Kafka: GroupMetadataManagerTest.testJoinGroupCompletionWhenPendingMemberTimesOut @4.0.0
func TestJavaExpiryCompletesInitialJoin(t *testing.T) {
	const delay = 4 * defaultSessionTimeout
	for _, tc := range []struct {
		profile string
		early   bool
	}{{"kafka-3.x", false}, {"kafka-4.0", true}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile, func(c *Config) { c.InitialRebalanceDelay = delay })
			r := dynamicJoin("")
			r.RebalanceTimeout = 2 * delay
			require.Empty(t, f.send(1, r))
			p := dynamicJoin("")
			p.Version = 4
			require.Equal(t, protocol.MemberIDRequired, joinResp(t, only(t, f.send(2, p), 2)).Error)
			replies := f.advance(defaultSessionTimeout) // the pending id expires
			if tc.early {
				assert.Len(t, replies, 1, "completed at the expiry")
				return
			}
			assert.Empty(t, replies)
			assert.Len(t, f.advance(delay-defaultSessionTimeout), 1, "completed at the initial delay")
		})
	}
}

// group.max.size rejection of a KIP-394 pending id during a rebalance:
// Java removes the id but does not try to complete the join
// (classicGroupJoinToClassicGroup v8.0.0 4475-4480), so the join waits for
// its DelayedJoin timer (the rebalance timeout); Scala 3.x completes at once,
// 2.6–2.8 at the pending id's expiry.
//
// Kafka: GroupMetadataManagerTest.testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember @4.0.0
func TestJavaMaxSizeRejectionWaitsForJoinTimer(t *testing.T) {
	for _, tc := range []struct {
		profile string
		after   time.Duration // from the rejection to the completed join
	}{{"kafka-3.x", 0}, {"kafka-2.8", defaultSessionTimeout - 300*time.Millisecond}, {"kafka-4.0", defaultRebalanceTimeout}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile, func(c *Config) { c.MaxSize = 2 })
			ids, _ := f.stableGroup(1)
			r := dynamicJoin("")
			r.Version = 4
			p1 := joinResp(t, only(t, f.send(2, r), 2))
			p2 := joinResp(t, only(t, f.send(3, r), 3))
			f.advance(300 * time.Millisecond)
			require.Empty(t, f.send(1, dynamicJoin(ids[0])))
			r1 := dynamicJoin(p1.MemberID)
			r1.Version = 4
			require.Empty(t, f.send(2, r1))
			r2 := dynamicJoin(p2.MemberID)
			r2.Version = 4
			replies := f.send(3, r2)
			require.Equal(t, protocol.GroupMaxSizeReached, joinResp(t, replyOn(t, replies, 3)).Error)
			if tc.after == 0 {
				assert.Len(t, replies, 3)
				return
			}
			require.Len(t, replies, 1)
			require.Empty(t, f.advance(tc.after-time.Millisecond))
			assert.Len(t, f.advance(time.Millisecond), 2)
		})
	}
}

// SyncGroup in Stable restarts the session in Scala (GroupCoordinator.scala
// 3.6.1 638) and not in Java (classicGroupSyncToClassicGroup v8.0.0
// 5685-5780): a member that only sends SyncGroups expires.
//
// Kafka: GroupMetadataManagerTest.testSyncGroupFollowerAfterLeader @4.0.0
func TestJavaStableSyncKeepsSession(t *testing.T) {
	for _, tc := range []struct {
		profile string
		alive   bool
	}{{"kafka-3.x", true}, {"kafka-4.0", false}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			ids, gen := f.stableGroup(1)
			f.advance(defaultSessionTimeout * 4 / 5)
			require.Equal(t, protocol.None, syncResp(t, only(t, f.send(1, syncReq(ids[0], gen)), 1)).Error)
			f.advance(defaultSessionTimeout * 2 / 5)
			assert.Equal(t, tc.alive, len(f.b.Members(testGroup)) == 1)
		})
	}
}

// While the coordinator partition loads, SyncGroup is answered
// REBALANCE_IN_PROGRESS by Scala (apache/kafka#4788) and
// COORDINATOR_LOAD_IN_PROGRESS by the Java runtime
// (CoordinatorRuntime.withActiveContextOrThrow, GroupCoordinatorService
// .syncGroup v8.0.0 436-475) — which the classic client treats as
// "Unexpected error from SyncGroup".
//
// Kafka: GroupCoordinatorTest.testRequestHandlingWhileLoadingInProgress @3.6.1
func TestJavaSyncWhileLoading(t *testing.T) {
	for _, tc := range []struct {
		profile string
		want    protocol.ErrorCode
	}{{"kafka-3.x", protocol.RebalanceInProgress}, {"kafka-4.0", protocol.CoordinatorLoadInProgress}} {
		t.Run(tc.profile, func(t *testing.T) {
			src := newFixture(t, tc.profile)
			ids, gen := src.stableGroup(1)
			rec := *src.persisted
			f := newFixture(t, tc.profile, func(c *Config) { c.BrokerID = 2; c.Name = "broker-2" })
			f.b.Resign(0, testGroup, &f.out)
			f.out.Reset()
			f.b.Elect(f.now, testGroup, time.Second, &rec, &f.out)
			assert.Equal(t, tc.want, only(t, f.send(1, syncReq(ids[0], gen)), 1).Err())
			assert.Equal(t, protocol.None, only(t, f.send(1, hbReq(ids[0], gen)), 1).Err(), "heartbeat: blind NONE in both")
		})
	}
}

// KIP-896 (4.0, KAFKA-18269): JoinGroup v0 and v1 are no longer served.
//
// Kafka: GroupMetadataManagerTest.testJoinGroupShouldReceiveErrorIfGroupOverMaxSize @4.0.0
func TestJavaJoinGroupMinVersion(t *testing.T) {
	for _, tc := range []struct {
		profile string
		version int16
		want    protocol.ErrorCode
	}{{"kafka-3.x", 0, protocol.None}, {"kafka-4.0", 0, protocol.UnsupportedVersion}, {"kafka-4.0", 1, protocol.UnsupportedVersion}, {"kafka-4.0", 2, protocol.None}} {
		f := newFixture(t, tc.profile)
		r := dynamicJoin("")
		r.Version = tc.version
		replies := f.send(1, r)
		if tc.want == protocol.None {
			assert.Empty(t, replies, "%s v%d parked", tc.profile, tc.version)
			continue
		}
		assert.Equal(t, tc.want, joinResp(t, only(t, replies, 1)).Error, "%s v%d", tc.profile, tc.version)
	}
}

// Before 2.0.0 a broker owns a __consumer_offsets partition only when its
// load ends (GroupMetadataManager.scala 1.1.0 496-509) and every handler
// checks ownership before loading (GroupCoordinator.scala 1.1.0 116-118,
// 242, 351-353), so a loading coordinator answers NOT_COORDINATOR to every
// group API; apache/kafka PR #4788 (commit 8662a022c42, 2.0.0) checks
// loading first (bug-failover-loading).
func TestLoadingBefore20(t *testing.T) {
	for _, tc := range []struct {
		profile         string
		join, sync, hb  protocol.ErrorCode
		leave, commitEr protocol.ErrorCode
	}{
		// kafka-0.10 has the same flag (kafka-0.11 is kafka-0.10 plus
		// KIP-134); stableGroup needs the initial delay.
		{"kafka-0.11", protocol.NotCoordinator, protocol.NotCoordinator, protocol.NotCoordinator, protocol.NotCoordinator, protocol.NotCoordinator},
		{"kafka-2.2", protocol.CoordinatorLoadInProgress, protocol.RebalanceInProgress, protocol.None, protocol.CoordinatorLoadInProgress, protocol.CoordinatorLoadInProgress},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			src := newFixture(t, tc.profile)
			ids, gen := src.stableGroup(1)
			rec := *src.persisted
			f := newFixture(t, tc.profile, func(c *Config) { c.BrokerID = 2; c.Name = "broker-2" })
			f.b.Resign(0, testGroup, &f.out)
			f.out.Reset()
			f.b.Elect(f.now, testGroup, time.Second, &rec, &f.out)
			assert.Equal(t, tc.join, only(t, f.send(1, dynamicJoin(ids[0])), 1).Err(), "join")
			assert.Equal(t, tc.sync, only(t, f.send(1, syncReq(ids[0], gen)), 1).Err(), "sync")
			assert.Equal(t, tc.hb, only(t, f.send(1, hbReq(ids[0], gen)), 1).Err(), "heartbeat")
			assert.Equal(t, tc.leave, only(t, f.send(1, leaveReq(protocol.LeaveGroupMember{MemberID: ids[0]})), 1).Err(), "leave")
			assert.Equal(t, tc.commitEr, only(t, f.send(1, &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen, MemberID: ids[0]}), 1).Err(), "commit")
			f.advance(time.Second)
			assert.Equal(t, protocol.None, only(t, f.send(1, hbReq(ids[0], gen)), 1).Err(), "loaded")
		})
	}
}

// A static member restarts while its first JoinGroup is still parked (the
// group PreparingRebalance): Scala's replaceStaticMember keeps the member
// object, still new (MemberMetadata.isNew), so its heartbeat expiry at the
// session timeout removes it although it is awaiting join
// (GroupMetadata.replaceStaticMember 3.6.1 316-337,
// MemberMetadata.hasSatisfiedHeartbeat). Java's builds a new
// ClassicGroupMember whose isNew is false (ClassicGroup.replaceStaticMember
// v8.0.0 542-590, ClassicGroupMember v8.0.0 120), which a parked JoinGroup
// keeps alive: it is in the next generation.
//
// Source: ClassicGroup.replaceStaticMember (v8.0.0), GroupMetadata.replaceStaticMember (3.6.1).
func TestJavaStaticRestartOfNewMemberIsNotNew(t *testing.T) {
	for _, tc := range []struct {
		profile string
		kept    bool
	}{{"kafka-3.x", false}, {"kafka-4.0", true}, {"kafka-4.x", true}} {
		t.Run(tc.profile, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			ids, gen := f.stableGroup(1)
			// A new static member with a long rebalance timeout: the
			// rebalance it starts waits 4 s for the old member to rejoin.
			sj := staticJoin("", "inst")
			sj.RebalanceTimeout = 8 * defaultRebalanceTimeout
			require.Empty(t, f.send(2, sj))
			require.Equal(t, PreparingRebalance, f.state())
			f.advance(100 * time.Millisecond)
			// It restarts before its first JoinGroup is answered.
			replies := f.send(3, staticJoin("", "inst"))
			require.Equal(t, protocol.FencedInstanceID, joinResp(t, only(t, replies, 2)).Error)
			// The old member heartbeats (not rejoining) past the
			// restarted member's session timeout.
			for i := 0; i < 8; i++ {
				f.advance(defaultSessionTimeout / 4)
				replyOn(t, f.send(1, hbReq(ids[0], gen)), 1)
			}
			require.Equal(t, PreparingRebalance, f.state())
			assert.Equal(t, tc.kept, len(f.b.Members(testGroup)) == 2, "restarted member kept past its session timeout")
			replies = f.advance(8 * defaultRebalanceTimeout)
			if tc.kept {
				jr := joinResp(t, only(t, replies, 3))
				assert.Equal(t, protocol.None, jr.Error)
				assert.Equal(t, gen+1, jr.GenerationID)
				return
			}
			assert.Empty(t, replies)
			assert.Equal(t, Empty, f.state())
		})
	}
}
