package client

// Goal: the client behaviours an audit found to differ from the Java
// AbstractCoordinator/ConsumerCoordinator at the releases named, one test
// each, across the profiles on both sides of the change.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// KAFKA-12983 (2.8.1, 3.0.0): resetStateAndGeneration sets needsJoinPrepare
// (AbstractCoordinator 2.8.1 971-975), so a cooperative member whose
// JoinGroup is answered UNKNOWN_MEMBER_ID runs onJoinPrepare again with the
// generation reset: its partitions are lost and the next JoinGroup offers
// none (ConsumerCoordinator 2.8.1 686-694). 2.6.1–2.8.0 (kafka-2.7) keep
// them and offer them with an empty member id.
//
// Kafka: ConsumerCoordinatorTest.testPrepareJoinAndRejoinAfterFailedRebalance @3.2.0
func TestResetMidRebalanceRerunsJoinPrepare(t *testing.T) {
	for _, c := range []struct {
		profile string
		lost    bool
	}{{"kafka-2.7", false}, {"kafka-2.8", true}, {"kafka-2.x", true}, {"kafka-3.6", true}} {
		t.Run(c.profile, func(t *testing.T) {
			d := newDriver(t, c.profile, func(cfg *Config) { cfg.Assignors = []string{"cooperative-sticky"} })
			d.start()
			d.findCoordinator()
			j := d.pop(protocol.APIJoinGroup)
			d.respond(j, &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "cooperative-sticky", Leader: "x", MemberID: "m1"})
			d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0), tp(1)}}})
			d.advance(300 * time.Millisecond)
			require.Equal(t, []protocol.TopicPartition{tp(0), tp(1)}, d.m.Owned())
			// A rebalance: the JoinGroup carries the owned partitions ...
			d.advance(3 * time.Second)
			d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
			d.advance(300 * time.Millisecond)
			j = d.pop(protocol.APIJoinGroup)
			require.Len(t, j.Req.(*protocol.JoinGroupRequest).Protocols[0].Metadata.OwnedPartitions, 2)
			// ... and is answered UNKNOWN_MEMBER_ID.
			d.respond(j, &protocol.JoinGroupResponse{Error: protocol.UnknownMemberID})
			d.advance(300 * time.Millisecond)
			j2 := d.pop(protocol.APIJoinGroup).Req.(*protocol.JoinGroupRequest)
			require.Equal(t, "", j2.MemberID)
			if c.lost {
				rev := d.eventsOf(protocol.EvRevoked)
				require.Len(t, rev, 1)
				require.Equal(t, "lost", rev[0].Detail)
				require.Empty(t, d.m.Owned())
				require.Empty(t, j2.Protocols[0].Metadata.OwnedPartitions)
			} else {
				require.Empty(t, d.eventsOf(protocol.EvRevoked))
				require.Len(t, j2.Protocols[0].Metadata.OwnedPartitions, 2)
			}
		})
	}
}

// The heartbeat thread's coordinator lookups while the application thread
// is busy: 2.8–3.2 forget the future right after sending and wait, so one
// lookup per retry.backoff.ms; from 3.3 (KAFKA-13917) it waits after
// sending, and the completed future stays referenced (the 3.x response
// handler never clears it, AbstractCoordinator 3.7.0 913-958), so the next
// pass only clears it and waits again: one lookup per 2 x retry.backoff.ms
// (3.7.0 1493-1502). ≤2.7 the handler clears it: one per retry.backoff.ms.
//
// Kafka: AbstractCoordinatorTest.testLookupCoordinator @3.7.0
func TestHeartbeatThreadLookupPacing(t *testing.T) {
	for _, c := range []struct {
		profile string
		gap     time.Duration
	}{{"kafka-2.7", 100 * time.Millisecond}, {"kafka-2.8", 100 * time.Millisecond}, {"kafka-3.6", 200 * time.Millisecond}, {"kafka-3.7", 200 * time.Millisecond}} {
		t.Run(c.profile, func(t *testing.T) {
			d := newDriver(t, c.profile, func(cfg *Config) { cfg.PollInterval = Const(time.Minute) })
			d.stable(tp(0))
			d.advance(3 * time.Second)
			require.Equal(t, appBusy, d.m.app.phase)
			d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.NotCoordinator})
			var sent []protocol.Instant
			for len(sent) < 5 {
				if d.count(protocol.APIFindCoordinator) > 0 {
					sent = append(sent, d.now)
					d.respond(d.pop(protocol.APIFindCoordinator), &protocol.FindCoordinatorResponse{Error: protocol.CoordinatorNotAvailable})
				}
				d.advance(time.Millisecond)
			}
			for i := 1; i < len(sent); i++ {
				require.InDelta(t, float64(c.gap), float64(sent[i].Sub(sent[i-1])), float64(time.Millisecond), "lookup %d", i)
			}
		})
	}
}

// KAFKA-13891 (3.3.0–3.3.1): SyncGroup REBALANCE_IN_PROGRESS resets the
// generation without the sent-generation guard (AbstractCoordinator 3.3.1
// 826-830): a stale answer resets a newer generation too. 3.4 reverted it.
//
// Kafka: AbstractCoordinatorTest.testResetGenerationIdAfterSyncGroupFailedWithRebalanceInProgress @3.3.1
func TestSyncRebalanceInProgressResetUnguarded33(t *testing.T) {
	for _, c := range []struct {
		profile string
		reset   bool
	}{{"kafka-3.3", true}, {"kafka-3.4", false}} {
		t.Run(c.profile, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.start()
			d.findCoordinator()
			d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
			d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Error: protocol.RebalanceInProgress})
			gen, id := d.m.Generation()
			if c.reset {
				require.Equal(t, protocol.NoGeneration, gen)
				require.Equal(t, "m1", id, "the member id is kept")
			} else {
				require.Equal(t, int32(1), gen)
			}
		})
	}
}
