package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// muteTrace finds, in a run's trace, the times of what the broker did with
// the leaving slot's requests: when its LeaveGroup reached the broker, when
// the broker sent the answer of its parked request (api), and when the
// member was removed by the leave; and when the process ended.
type muteTimes struct {
	parkedArrived, leaveArrived, parkedAnswered, removed, closed time.Duration
}

func muteTrace(t *testing.T, res *Result, slot string, api protocol.APIKey, after time.Duration) muteTimes {
	t.Helper()
	var m muteTimes
	for _, e := range res.Trace {
		at := time.Duration(e.At)
		if at < after {
			continue
		}
		switch {
		case m.leaveArrived == 0 && e.Kind == tracing.EvDeliver && e.Node == "broker-0" && e.Peer == slot && e.Req && e.API == api:
			m.parkedArrived = at // the last one before the leave
		case m.leaveArrived == 0 && e.Kind == tracing.EvDeliver && e.Node == "broker-0" && e.Peer == slot && e.Req && e.API == protocol.APILeaveGroup:
			m.leaveArrived = at
		case m.parkedAnswered == 0 && e.Kind == tracing.EvSend && e.Node == "broker-0" && e.Peer == slot && !e.Req && e.API == api:
			m.parkedAnswered = at
		case m.removed == 0 && e.Kind == protocol.EvMemberRemoved && strings.HasPrefix(e.Peer, slot+"-") && e.Reason == "leave":
			m.removed = at
		case m.closed == 0 && e.Kind == tracing.EvProcess && e.Node == slot && e.State == "closed":
			m.closed = at
		}
	}
	require.NotZero(t, m.leaveArrived, "no LeaveGroup of %s reached the broker", slot)
	require.NotZero(t, m.removed, "%s was not removed by its leave", slot)
	require.NotZero(t, m.closed, "%s's process did not end", slot)
	return m
}

// TestLeaveWaitsBehindParkedJoinGroup: Kafka's broker reads one request
// at a time per connection (SocketServer.Processor.processCompletedReceives
// mutes the channel, processCompletedSends unmutes it once the response is
// sent, @3.9.0), so a LeaveGroup that close() sends while the member's
// JoinGroup is parked in the rebalance is read only after that JoinGroup
// is answered: the member is removed by a second rebalance, not during the
// first one's join phase. g-0 polls fast and rejoins first; g-1..g-3 take
// up to 20 s to reach poll() and rejoin, so g-0's JoinGroup is parked when
// it leaves at 34 s.
func TestLeaveWaitsBehindParkedJoinGroup(t *testing.T) {
	src := `name: mute-join
duration: 60s
coordinator: {brokers: 1, profile: kafka-3.x}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-3.x}
    workload: {poll.interval: {dist: uniform, min: 2s, max: 20s}}
    start: {at: 0s, stagger: 0s}
faults:
  - {at: 30s, join: g}
  - {at: 34s, leave: g-0}
`
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	m := muteTrace(t, res, "g-0", protocol.APIJoinGroup, 30*time.Second)
	require.NotZero(t, m.parkedArrived, "the scenario has g-0 rejoin before it leaves")
	require.Greater(t, m.removed, m.leaveArrived, "the LeaveGroup waits behind the parked JoinGroup")
	require.Greater(t, m.parkedAnswered, m.leaveArrived, "the JoinGroup is answered by the rebalance, not by the leave")
	require.GreaterOrEqual(t, m.removed, m.parkedAnswered, "the LeaveGroup is read only once the parked JoinGroup is answered")
}

// TestLeaveWaitsBehindParkedSyncGroup: the same for a follower whose
// SyncGroup waits for the leader's assignment (assign.time 6 s). Without
// the connection's order the LeaveGroup was handled first, and
// GroupCoordinator.removeMemberAndUpdateGroup (@3.9.0) answers the removed
// member's join callback, not its sync callback: the SyncGroup was never
// answered and close() waited request.timeout.ms (30 s) for it. With it,
// the SyncGroup is answered at the leader's SyncGroup, the LeaveGroup is
// read then, and the process ends at once.
func TestLeaveWaitsBehindParkedSyncGroup(t *testing.T) {
	src := `name: mute-sync
duration: 80s
coordinator: {brokers: 1, profile: kafka-3.x}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-3.x}
    workload: {poll.interval: 100ms, assign.time: 6s}
    start: {at: 0s, stagger: 0s}
faults:
  - {at: 8s, leave: g-2}
`
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	m := muteTrace(t, res, "g-2", protocol.APISyncGroup, 6*time.Second)
	require.NotZero(t, m.parkedArrived, "the scenario has g-2 send its SyncGroup before it leaves")
	require.NotZero(t, m.parkedAnswered, "g-2's SyncGroup was never answered")
	require.GreaterOrEqual(t, m.removed, m.parkedAnswered, "the LeaveGroup is read only once the parked SyncGroup is answered")
	require.Less(t, m.closed-8*time.Second, 30*time.Second, "close() must not wait request.timeout.ms for a SyncGroup the coordinator never answers")
}

// TestQueuedRequestsGoWithTheConnection: the requests waiting behind a
// parked one are dropped when the connection is gone by the time they
// would be read (mute.go). g-2 is a follower whose SyncGroup is parked
// for the leader's 6 s assignment; its heartbeat thread keeps sending
// (COMPLETING_REBALANCE, AbstractCoordinator.HeartbeatThread @3.9.0), and
// those heartbeats wait behind the SyncGroup; the process crashes at 10 s,
// so when the SyncGroup is answered the waiting heartbeats are dropped,
// not served.
func TestQueuedRequestsGoWithTheConnection(t *testing.T) {
	src := `name: mute-crash
duration: 40s
coordinator: {brokers: 1, profile: kafka-3.x}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-3.x}
    workload: {poll.interval: 100ms, assign.time: 6s}
    start: {at: 0s, stagger: 0s}
faults:
  - {at: 10s, crash: g-2, for: 20s}
`
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	var queued, dropped, servedAfterCrash int
	for _, e := range res.Trace {
		at := time.Duration(e.At)
		if e.Node != "broker-0" || e.Peer != "g-2" || e.API != protocol.APIHeartbeat {
			continue
		}
		switch {
		case e.Kind == tracing.EvDeliver && e.Req && at > 6*time.Second && at < 10*time.Second:
			queued++
		case e.Kind == tracing.EvDrop && e.Req && e.Fate == tracing.FateClosed:
			dropped++
		case e.Kind == tracing.EvSend && !e.Req && at > 10*time.Second && at < 30*time.Second:
			servedAfterCrash++
		}
	}
	require.NotZero(t, queued, "the scenario has g-2 heartbeat while its SyncGroup is parked")
	require.Equal(t, queued, dropped, "every heartbeat waiting behind the SyncGroup is dropped with the connection")
	require.Zero(t, servedAfterCrash, "no heartbeat of the dead process is answered")
}
