package coordinator

// Goal: the Java coordinator's append linger (group.coordinator.append.linger.ms,
// linger.go) delays what waits for a write, and nothing else. Method: a
// 4.0 broker with a 5 ms linger against the same broker without one and a
// Scala (3.x) broker given the same setting, asserting when each answer
// leaves.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

const testLinger = 5 * time.Millisecond

func lingerFixture(t *testing.T, profile string, linger time.Duration) *fixture {
	return newFixture(t, profile, func(c *Config) { c.AppendLinger = linger })
}

// lingerStable forms a Stable group of n members without a linger, then
// sets it (stableGroup expects its SyncGroups answered at once).
func lingerStable(t *testing.T, profile string, linger time.Duration, n int) (*fixture, []string, int32) {
	f := newFixture(t, profile)
	ids, gen := f.stableGroup(n)
	f.b.cfg.AppendLinger = linger
	return f, ids, gen
}

// The leader's SyncGroup writes the group record into a batch flushed one
// linger later: both members' SyncGroup answers leave then (4.0, 5 ms),
// at once without a linger or on the Scala coordinator.
//
// Kafka: CoordinatorRuntimeTest.testScheduleWriteOperationWithBatching @4.0.0
func TestLingerDelaysSyncGroup(t *testing.T) {
	for _, tc := range []struct {
		profile string
		linger  time.Duration
		delayed bool
	}{{"kafka-4.0", testLinger, true}, {"kafka-4.0", 0, false}, {"kafka-3.x", testLinger, false}} {
		t.Run(tc.profile+"/"+tc.linger.String(), func(t *testing.T) {
			f := lingerFixture(t, tc.profile, tc.linger)
			l, fo := f.twoMembers()
			require.Empty(t, f.send(2, syncReq(fo.MemberID, fo.GenerationID)))
			replies := f.send(1, syncReq(l.MemberID, l.GenerationID))
			if !tc.delayed {
				require.Len(t, replies, 2)
				assert.Equal(t, Stable, f.state())
				return
			}
			require.Empty(t, replies, "held until the batch is flushed")
			assert.Empty(t, f.advance(tc.linger-1))
			replies = f.advance(1)
			require.Len(t, replies, 2)
			assert.Equal(t, protocol.None, syncResp(t, replyOn(t, replies, 1)).Error)
			assert.Equal(t, protocol.None, syncResp(t, replyOn(t, replies, 2)).Error)
			assert.Equal(t, Stable, f.state())
			require.NotNil(t, f.persisted)
		})
	}
}

// A commit opens a batch and is answered at its flush; a second commit
// 2 ms later joins the batch (answered 3 ms after it was sent); a
// Heartbeat while the batch is open waits for it (a write with no records
// waits on the pending write, CoordinatorRuntime.append v8.0.0 935-947); a
// Heartbeat with no open batch is answered at once.
//
// Kafka: CoordinatorRuntimeTest.testScheduleWriteOperationWithBatching @4.0.0
func TestLingerDelaysCommitAndHeldHeartbeat(t *testing.T) {
	f, ids, gen := lingerStable(t, "kafka-4.0", testLinger, 2)
	commit := func(i int) *protocol.OffsetCommitRequest {
		return &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen, MemberID: ids[i]}
	}
	require.Empty(t, f.send(1, commit(0)))
	f.advance(2 * time.Millisecond)
	require.Empty(t, f.send(2, commit(1)))
	require.Empty(t, f.send(2, hbReq(ids[1], gen)))
	assert.Empty(t, f.advance(3*time.Millisecond-1))
	replies := f.advance(1)
	require.Len(t, replies, 3)
	assert.Equal(t, Conn(1), replies[0].Conn, "in arrival order")
	for _, r := range replies {
		assert.Equal(t, protocol.None, r.Resp.Err())
	}
	// No batch open: a Heartbeat is answered at once.
	assert.Equal(t, protocol.None, only(t, f.send(1, hbReq(ids[0], gen)), 1).Err())
	// Without a linger (the adaptive 4.2+ default is 0 here) a commit is
	// answered at once.
	g, gids, ggen := lingerStable(t, "kafka-4.x", 0, 1)
	assert.Equal(t, protocol.None, only(t, g.send(1, &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: ggen, MemberID: gids[0]}), 1).Err())
}

// JoinGroup answers are not delayed: GroupCoordinatorService.joinGroup
// (v8.0.0 382-427) returns the response future that completeClassicGroupJoin
// completes directly, not the write's future.
//
// Source: GroupCoordinatorService.joinGroup (v8.0.0).
func TestLingerDoesNotDelayJoinGroup(t *testing.T) {
	f, ids, gen := lingerStable(t, "kafka-4.0", testLinger, 1)
	jr := joinResp(t, only(t, f.send(1, dynamicJoin(ids[0])), 1))
	assert.Equal(t, gen+1, jr.GenerationID, "a lone member's rejoin completes the join at once")
}

// A held answer whose group leaves this coordinator is failed
// NOT_COORDINATOR (the runtime fails pending events at unload).
func TestLingerResignFailsHeld(t *testing.T) {
	f, ids, gen := lingerStable(t, "kafka-4.0", testLinger, 1)
	require.Empty(t, f.send(1, &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen, MemberID: ids[0]}))
	var out Output
	f.b.Resign(f.now, testGroup, &out)
	require.Len(t, out.Replies, 1)
	assert.Equal(t, protocol.NotCoordinator, out.Replies[0].Resp.Err())
	assert.Empty(t, f.advance(time.Second))
}
