// Auto-commit tests: ports of ConsumerCoordinatorTest's commit cases (the
// 3.6 test class unless noted; 0.10 cases from the 0.10.0 class) plus the
// KIP-62 experiment's 0.10 eviction loop.
package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

func autoCommit(cfg *Config) { cfg.AutoCommit = true }

// ackHeartbeats answers every pending heartbeat with NONE.
func (d *driver) ackHeartbeats() {
	for d.count(protocol.APIHeartbeat) > 0 {
		d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{})
	}
}

// advanceAcking advances in 1 s steps, answering heartbeats.
func (d *driver) advanceAcking(dur time.Duration) {
	for dur > 0 {
		step := min(dur, time.Second)
		d.advance(step)
		d.ackHeartbeats()
		dur -= step
	}
}

func (d *driver) rejoinReasons() []string {
	var r []string
	for _, e := range d.eventsOf(protocol.EvRejoinRequested) {
		r = append(r, e.Reason)
	}
	return r
}

// ConsumerCoordinatorTest.testAutoCommitDynamicAssignment: after the join,
// one async commit per auto.commit.interval.ms from the poll loop, carrying
// the generation, member id and owned partitions; the request is reused
// while nothing changed (no allocation per commit).
//
// Kafka: ConsumerCoordinatorTest.testAutoCommitDynamicAssignment @3.6.1
func TestAutoCommitDynamicAssignment(t *testing.T) {
	for _, profile := range []string{"kafka-2.3", "kafka-2.x", "kafka-3.x"} {
		t.Run(profile, func(t *testing.T) {
			d := newDriver(t, profile, autoCommit, func(cfg *Config) { cfg.AutoCommitInterval = 4 * time.Second })
			d.stable(tp(0), tp(1))
			d.advanceAcking(4*time.Second - time.Millisecond)
			require.Zero(t, d.count(protocol.APIOffsetCommit), "not before the interval")
			d.advanceAcking(time.Millisecond)
			c := d.pop(protocol.APIOffsetCommit)
			req := c.Req.(*protocol.OffsetCommitRequest)
			require.Equal(t, &protocol.OffsetCommitRequest{GroupID: "g", GenerationID: 1, MemberID: "m1",
				Partitions: []protocol.TopicPartition{tp(0), tp(1)}}, req)
			d.respond(c, &protocol.OffsetCommitResponse{})
			d.advanceAcking(4 * time.Second)
			c2 := d.pop(protocol.APIOffsetCommit)
			require.Same(t, req, c2.Req.(*protocol.OffsetCommitRequest), "request reused")
			require.Zero(t, d.count(protocol.APIOffsetCommit))
			require.Empty(t, d.eventsOf(protocol.EvRejoinRequested))
		})
	}
}

// Kafka's default interval applies when the property is unset; validation
// rejects a negative one.
func TestAutoCommitIntervalDefault(t *testing.T) {
	cfg := Config{Profile: "kafka-3.x"}
	require.NoError(t, ApplyProfileDefaults(&cfg))
	require.Equal(t, 5*time.Second, cfg.AutoCommitInterval)
	bad := testConfig("kafka-3.x")
	bad.AutoCommitInterval = -time.Second
	require.ErrorContains(t, bad.Validate(), "auto.commit.interval.ms")

	d := newDriver(t, "kafka-3.x", autoCommit)
	d.stable(tp(0))
	d.advanceAcking(5 * time.Second)
	require.Equal(t, 1, d.count(protocol.APIOffsetCommit))

	off := newDriver(t, "kafka-3.x")
	off.stable(tp(0))
	off.advanceAcking(20 * time.Second)
	require.Zero(t, off.count(protocol.APIOffsetCommit), "enable.auto.commit=false")
}

// ConsumerCoordinatorTest.testCommitOffsetUnknownMemberId,
// testCommitOffsetIllegalGeneration, testCommitOffsetRebalanceInProgress,
// testCommitOffsetIllegalGenerationShouldResetGenerationId (KAFKA-13419),
// testCommitOffsetUnknownMemberShouldResetToNoGeneration, and their 0.10.0 /
// 2.3 forms: the commit fails with CommitFailedException (logged by the
// auto-commit callback) and the member rejoins.
//
// Kafka: ConsumerCoordinatorTest.testCommitOffsetIllegalGeneration @3.7.0
// Kafka: ConsumerCoordinatorTest.testCommitOffsetRebalanceInProgress @3.7.0
// Kafka: ConsumerCoordinatorTest.testCommitOffsetIllegalGenerationShouldResetGenerationId @3.7.0
// Kafka: ConsumerCoordinatorTest.testCommitOffsetUnknownMemberShouldResetToNoGeneration @3.7.0
// Kafka: ConsumerCoordinatorTest.testCommitOffsetUnknownMemberId @3.7.0
func TestCommitOffsetGenerationErrors(t *testing.T) {
	cases := []struct {
		java, profile string
		err           protocol.ErrorCode
		reset         string // EvGenerationReset detail, "" for none
		gen           int32
		memberID      string
	}{
		{"testCommitOffsetUnknownMemberId", "kafka-3.x", protocol.UnknownMemberID, "drop-id", -1, ""},
		{"testCommitOffsetIllegalGenerationShouldResetGenerationId", "kafka-3.x", protocol.IllegalGeneration, "keep-id", -1, "m1"},
		{"testCommitOffsetIllegalGeneration (2.8: member id dropped)", "kafka-2.x", protocol.IllegalGeneration, "drop-id", -1, ""},
		{"testCommitOffsetRebalanceInProgress (rejoin, generation kept)", "kafka-3.x", protocol.RebalanceInProgress, "", 1, "m1"},
		{"testCommitOffsetRebalanceInProgress 2.5", "kafka-2.5", protocol.RebalanceInProgress, "", 1, "m1"},
		{"2.3: REBALANCE_IN_PROGRESS resets the generation", "kafka-2.3", protocol.RebalanceInProgress, "drop-id", -1, ""},
		{"0.10.0: UNKNOWN_MEMBER_ID only needs reassignment", "kafka-0.10", protocol.UnknownMemberID, "", 1, "m1"},
		{"0.10.0: ILLEGAL_GENERATION only needs reassignment", "kafka-0.10", protocol.IllegalGeneration, "", 1, "m1"},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, c.profile, autoCommit)
			d.stable(tp(0))
			d.advanceAcking(5 * time.Second)
			d.respond(d.pop(protocol.APIOffsetCommit), &protocol.OffsetCommitResponse{Error: c.err})
			d.advance(100 * time.Millisecond) // 0.10: handled at the next poll()
			require.Equal(t, []string{"commit-failed"}, d.rejoinReasons())
			resets := d.eventsOf(protocol.EvGenerationReset)
			if c.reset == "" {
				require.Empty(t, resets)
			} else {
				require.Len(t, resets, 1)
				require.Equal(t, c.reset, resets[0].Detail)
				require.Equal(t, protocol.APIOffsetCommit, resets[0].API)
			}
			gen, id := d.m.Generation()
			require.Equal(t, c.gen, gen)
			require.Equal(t, c.memberID, id)
			require.False(t, d.m.Stopped())
			// The next poll rejoins. A member still STABLE commits first
			// (onJoinPrepare); a reset one cannot (generationIfStable).
			d.advance(200 * time.Millisecond)
			if c.reset == "" {
				require.Zero(t, d.count(protocol.APIJoinGroup), "onJoinPrepare waits for its commit")
				d.respond(d.pop(protocol.APIOffsetCommit), &protocol.OffsetCommitResponse{})
				d.advance(time.Millisecond)
			} else {
				require.Zero(t, d.count(protocol.APIOffsetCommit))
			}
			require.Equal(t, 1, d.count(protocol.APIJoinGroup))
		})
	}
}

// ConsumerCoordinatorTest.testCommitOffsetUnknownMemberWithNewGeneration /
// testCommitOffsetIllegalGenerationWithNewGeneration (KAFKA-9823, 2.6): a
// stale commit error seen while PREPARING_REBALANCE in a newer generation
// resets nothing; before 2.6 it resets again.
//
// Kafka: ConsumerCoordinatorTest.testCommitOffsetUnknownMemberWithNewGeneration @3.6.1
// Kafka: ConsumerCoordinatorTest.testCommitOffsetIllegalGenerationWithNewGeneration @3.7.0
func TestCommitOffsetErrorWithNewGeneration(t *testing.T) {
	for _, c := range []struct {
		profile string
		resets  int
	}{{"kafka-3.x", 1}, {"kafka-2.x", 1}, {"kafka-2.5", 2}} {
		t.Run(c.profile, func(t *testing.T) {
			d := newDriver(t, c.profile, autoCommit)
			d.stable(tp(0))
			d.advanceAcking(5 * time.Second)
			commit := d.pop(protocol.APIOffsetCommit) // left unanswered
			d.advance(3 * time.Second)
			d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.UnknownMemberID})
			d.advance(200 * time.Millisecond)
			require.Equal(t, 1, d.count(protocol.APIJoinGroup))
			require.Equal(t, PreparingRebalance, d.m.State())
			d.respond(commit, &protocol.OffsetCommitResponse{Error: protocol.UnknownMemberID})
			require.Len(t, d.eventsOf(protocol.EvGenerationReset), c.resets)
		})
	}
}

// ConsumerCoordinatorTest.testCommitOffsetAsyncCoordinatorNotAvailable,
// testCommitOffsetAsyncNotCoordinator, testCommitOffsetSyncCoordinatorNotAvailable
// (REQUEST_TIMED_OUT also marks the coordinator unknown), and
// COORDINATOR_LOAD_IN_PROGRESS ("just retry"): a retriable failure resets the
// auto-commit timer to retry.backoff.ms.
//
// Kafka: ConsumerCoordinatorTest.testCommitOffsetAsyncNotCoordinator @3.7.0
// Kafka: ConsumerCoordinatorTest.testCommitOffsetSyncCoordinatorNotAvailable @3.7.0
// Kafka: ConsumerCoordinatorTest.testCommitOffsetAsyncCoordinatorNotAvailable @3.7.0
func TestCommitOffsetRetriableErrors(t *testing.T) {
	for _, c := range []struct {
		java      string
		err       protocol.ErrorCode
		coordDead bool
	}{
		{"testCommitOffsetAsyncCoordinatorNotAvailable", protocol.CoordinatorNotAvailable, true},
		{"testCommitOffsetAsyncNotCoordinator", protocol.NotCoordinator, true},
		{"testCommitOffsetSyncCoordinatorNotAvailable (REQUEST_TIMED_OUT)", protocol.RequestTimedOut, true},
		{"COORDINATOR_LOAD_IN_PROGRESS (retriable, coordinator kept; no Kafka test of its own)", protocol.CoordinatorLoadInProgress, false},
	} {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, "kafka-3.6", autoCommit)
			d.stable(tp(0))
			d.advanceAcking(5 * time.Second)
			d.respond(d.pop(protocol.APIOffsetCommit), &protocol.OffsetCommitResponse{Error: c.err})
			require.Equal(t, c.coordDead, len(d.eventsOf(protocol.EvCoordinatorDead)) == 1)
			require.Equal(t, d.now.Add(100*time.Millisecond), d.m.autoCommit.at)
			if c.coordDead {
				d.advance(200 * time.Millisecond)
				d.findCoordinator()
			}
			d.advance(200 * time.Millisecond)
			require.Equal(t, 1, d.count(protocol.APIOffsetCommit), "retried after retry.backoff.ms")
			require.Empty(t, d.eventsOf(protocol.EvRejoinRequested))
		})
	}
}

// A commit lost to a disconnect (CoordinatorResponseHandler.onFailure): the
// coordinator is marked unknown and the commit retried after the backoff.
func TestCommitOffsetDisconnect(t *testing.T) {
	d := newDriver(t, "kafka-3.6", autoCommit)
	d.stable(tp(0))
	d.advanceAcking(5 * time.Second)
	c := d.pop(protocol.APIOffsetCommit)
	d.call(func(o *Output) { d.m.Disconnected(d.now, c.Broker, o) })
	require.Equal(t, "disconnect", d.eventsOf(protocol.EvCoordinatorDead)[0].Reason)
	require.Equal(t, d.now.Add(100*time.Millisecond), d.m.autoCommit.at)
}

// Every error code on an auto-commit: only COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR, REQUEST_TIMED_OUT, COORDINATOR_LOAD_IN_PROGRESS and
// UNKNOWN_TOPIC_OR_PARTITION are retriable; FENCED_INSTANCE_ID is thrown from
// the next poll() (asyncCommitFenced, ConsumerCoordinatorTest
// .testCommitOffsetFencedInstanceWithRebalancingGeneration's fatal branch);
// every other failure is only logged by the auto-commit callback.
//
// Kafka: ConsumerCoordinatorTest.testCommitOffsetFencedInstanceWithRebalancingGeneration @3.7.0
func TestEveryCommitErrorCode(t *testing.T) {
	retriable := map[protocol.ErrorCode]bool{protocol.CoordinatorNotAvailable: true, protocol.NotCoordinator: true,
		protocol.RequestTimedOut: true, protocol.CoordinatorLoadInProgress: true, protocol.UnknownTopicOrPartition: true}
	for _, code := range protocol.AllErrorCodes {
		t.Run(code.String(), func(t *testing.T) {
			d := newDriver(t, "kafka-3.x", autoCommit, func(cfg *Config) { cfg.GroupInstanceID = "i-0" })
			d.stable(tp(0))
			d.advanceAcking(5 * time.Second)
			d.respond(d.pop(protocol.APIOffsetCommit), &protocol.OffsetCommitResponse{Error: code})
			switch {
			case retriable[code]:
				require.Equal(t, d.now.Add(100*time.Millisecond), d.m.autoCommit.at)
			case code == protocol.None:
				require.Equal(t, d.now, d.m.autoCommit.at.Add(-5*time.Second))
			default:
				require.Equal(t, d.now.Add(5*time.Second), d.m.autoCommit.at, "interval kept")
			}
			d.advance(200 * time.Millisecond)
			if code == protocol.FencedInstanceID {
				require.True(t, d.m.Stopped())
				require.Equal(t, protocol.FencedInstanceID, d.m.FatalError())
				return
			}
			require.False(t, d.m.Stopped(), "not fatal")
		})
	}
}

// ConsumerCoordinatorTest.testAutoCommitDynamicAssignmentRebalance /
// testCommitOffsetMetadataSync-style: with EAGER the owned offsets are
// committed in onJoinPrepare before revoking and sending the JoinGroup; ≤3.1
// the commit is synchronous (poll() blocked, retried after retry.backoff.ms),
// 3.2+ async with the join-prepare timer. Both give up after the rebalance
// timeout.
//
// Kafka: ConsumerCoordinatorTest.testAutoCommitDynamicAssignmentRebalance @3.6.1
// Kafka: ConsumerCoordinatorTest.testCommitOffsetMetadataSync @3.7.0
func TestAutoCommitBeforeRebalance(t *testing.T) {
	for _, profile := range []string{"kafka-2.x", "kafka-3.x", "kafka-0.10"} {
		t.Run(profile, func(t *testing.T) {
			d := newDriver(t, profile, autoCommit, func(cfg *Config) {
				cfg.MaxPollInterval = 20 * time.Second
				cfg.PollInterval = Const(time.Second)
			})
			d.stable(tp(0))
			d.advance(3 * time.Second)
			d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
			d.advance(time.Second)
			c := d.pop(protocol.APIOffsetCommit)
			require.Equal(t, int32(1), c.Req.(*protocol.OffsetCommitRequest).GenerationID)
			require.Zero(t, d.count(protocol.APIJoinGroup), "JoinGroup waits for the commit")
			require.Empty(t, d.eventsOf(protocol.EvRevoked), "revoked after the commit")
			require.Equal(t, appPolling, d.m.app.phase, "no records while the commit is outstanding")
			// A retriable failure: retried after retry.backoff.ms.
			d.respond(c, &protocol.OffsetCommitResponse{Error: protocol.CoordinatorLoadInProgress})
			d.advance(100 * time.Millisecond)
			c = d.pop(protocol.APIOffsetCommit)
			d.respond(c, &protocol.OffsetCommitResponse{})
			d.advance(time.Millisecond)
			require.Len(t, d.eventsOf(protocol.EvRevoked), 1)
			require.Equal(t, 1, d.count(protocol.APIJoinGroup))

			// Next rebalance: the commit is never answered.
			d.joinFollower(2, "m1", tp(0))
			d.drop(protocol.APIOffsetCommit)
			d.drop(protocol.APIHeartbeat)
			d.m.requestRejoin(&d.out, RejoinRebalanceInProgress)
			d.advance(time.Second)
			require.Equal(t, 1, d.count(protocol.APIOffsetCommit))
			d.advanceAcking(18 * time.Second)
			require.Zero(t, d.count(protocol.APIJoinGroup))
			d.advanceAcking(2 * time.Second)
			if profile == "kafka-0.10" {
				// 0.10.0 commitOffsetsSync is unbounded: only the request
				// timeout ends the wait, then it retries.
				require.Zero(t, d.count(protocol.APIJoinGroup))
				return
			}
			require.Equal(t, 1, d.count(protocol.APIJoinGroup), "given up after the rebalance timeout")
		})
	}
}

// A COOPERATIVE 3.2+ member keeps processing records while onJoinPrepare's
// async commit is outstanding (no partition is pending revocation).
func TestCooperativeRecordsFlowDuringPrepareCommit(t *testing.T) {
	d := newDriver(t, "kafka-3.x", autoCommit, func(cfg *Config) { cfg.Assignors = []string{"cooperative-sticky"} })
	d.start()
	d.findCoordinator()
	j := d.pop(protocol.APIJoinGroup)
	d.respond(j, &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "cooperative-sticky", Leader: "x", MemberID: "m1"})
	d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: "cooperative-sticky",
		Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0)}}})
	d.advance(3 * time.Second)
	d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
	d.advance(100 * time.Millisecond)
	require.Equal(t, 1, d.count(protocol.APIOffsetCommit))
	require.Equal(t, appBusy, d.m.app.phase, "records flow")
}

// The KIP-62 experiment, kafka-0.10: 15 s of processing per poll() and a
// 10 s session. The coordinator (played by the test) evicted the member
// while it was busy; the HeartbeatTask only sees its local session expire
// (coordinatorDead, rediscovery), but the AutoCommitTask's commit is answered
// UNKNOWN_MEMBER_ID, so the member rejoins: commit-failed, onJoinPrepare's
// commit fails too, JoinGroup with the stale id → UNKNOWN_MEMBER_ID → a new
// member. Without auto-commit nothing tells it (the zombie).
func TestKafka010SlowPollRejoinsAfterCommitFails(t *testing.T) {
	for _, auto := range []bool{true, false} {
		name := "auto-commit"
		if !auto {
			name = "no-auto-commit"
		}
		t.Run(name, func(t *testing.T) {
			d := newDriver(t, "kafka-0.10", func(cfg *Config) {
				cfg.AutoCommit = auto
				cfg.PollInterval = Const(15 * time.Second)
			})
			d.stable(tp(0))
			evicted := func(s Send) {
				switch s.Req.API() {
				case protocol.APIOffsetCommit:
					d.respond(s, &protocol.OffsetCommitResponse{Error: protocol.UnknownMemberID})
				case protocol.APIHeartbeat:
					d.respond(s, &protocol.HeartbeatResponse{Error: protocol.UnknownMemberID})
				case protocol.APIFindCoordinator:
					d.respond(s, &protocol.FindCoordinatorResponse{NodeID: 0})
				case protocol.APIJoinGroup:
					j := s.Req.(*protocol.JoinGroupRequest)
					if j.MemberID == "m1" {
						d.respond(s, &protocol.JoinGroupResponse{Error: protocol.UnknownMemberID})
						return
					}
					d.respond(s, &protocol.JoinGroupResponse{GenerationID: 2, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m2"})
				case protocol.APISyncGroup:
					d.respond(s, &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: "range", Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0)}}})
				case protocol.APILeaveGroup, protocol.APIConsumerGroupHeartbeat: // left unanswered
				}
			}
			for range 60 * 10 {
				d.advance(100 * time.Millisecond)
				for len(d.sends) > 0 {
					s := d.sends[0]
					d.sends = d.sends[1:]
					evicted(s)
				}
				if gen, _ := d.m.Generation(); gen == 2 {
					break
				}
			}
			require.NotEmpty(t, d.eventsOf(protocol.EvCoordinatorDead), "the local session expired")
			gen, id := d.m.Generation()
			if !auto {
				require.Equal(t, int32(1), gen, "zombie: never finds out it was evicted")
				require.Empty(t, d.eventsOf(protocol.EvRejoinRequested))
				return
			}
			require.Equal(t, int32(2), gen)
			require.Equal(t, "m2", id)
			require.Equal(t, "commit-failed", d.rejoinReasons()[0])
			require.Less(t, d.now, protocol.Instant(46*time.Second), "found out within three polls")
		})
	}
}

// The profile switches of the commit handling.
func TestCommitProfileSwitches(t *testing.T) {
	for _, c := range []struct {
		name                     string
		rejoinOnly, asyncPrepare bool
	}{
		{"kafka-0.10", false, false}, {"kafka-2.3", false, false}, {"kafka-2.4", false, false},
		{"kafka-2.5", true, false}, {"kafka-2.x", true, false}, {"kafka-3.0", true, false},
		{"kafka-3.2", true, true}, {"kafka-3.x", true, true},
	} {
		b, ok := lookupBehaviour(c.name)
		require.True(t, ok)
		require.Equal(t, c.rejoinOnly, b.commitRebalanceRejoinOnly, c.name)
		require.Equal(t, c.asyncPrepare, b.asyncJoinPrepareCommit, c.name)
	}
}
