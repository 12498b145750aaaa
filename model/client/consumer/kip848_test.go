package consumer_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	client "github.com/rebalsim/rebalsim/model/client/consumer"
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
