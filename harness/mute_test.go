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

// muteTimes are, in a run's trace (muteTrace), the times of what the broker
// did with the leaving slot's requests: when its last request of the
// parked api before the leave reached the broker, when its LeaveGroup
// reached the broker, when the broker sent the answer of its parked
// request, and when the member was removed by the leave; and when the
// process ended (closed or crashed: endState).
type muteTimes struct {
	parkedArrived, leaveArrived, parkedAnswered, removed, ended time.Duration
	endState                                                    string
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
		case m.ended == 0 && e.Kind == tracing.EvProcess && e.Node == slot && (e.State == "closed" || e.State == "crashed"):
			m.ended, m.endState = at, e.State
		}
	}
	require.NotZero(t, m.leaveArrived, "no LeaveGroup of %s reached the broker", slot)
	require.NotZero(t, m.removed, "%s was not removed by its leave", slot)
	require.NotZero(t, m.ended, "%s's process did not end", slot)
	return m
}

// parkedJoinLeave is the scenario of a LeaveGroup sent while its member's
// JoinGroup is parked: g-3 joins at 30 s; the members poll every 2-20 s,
// so they rejoin one by one as their steps end, and on seed 1 g-0 has
// rejoined (the tests check it) while others are still in their steps
// when it leaves at 34 s. more is appended to the faults.
func parkedJoinLeave(name, duration, more string) string {
	return `name: ` + name + `
duration: ` + duration + `
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
` + more
}

// TestLeaveWaitsBehindParkedJoinGroup: Kafka's broker reads one request
// at a time per connection (SocketServer.Processor.processCompletedReceives
// mutes the channel, processCompletedSends unmutes it once the response is
// sent, @3.9.0-rc3), so a LeaveGroup that close() sends while the member's
// JoinGroup is parked in the rebalance is read only after that JoinGroup
// is answered: the member is removed by a second rebalance, not during the
// first one's join phase (parkedJoinLeave).
func TestLeaveWaitsBehindParkedJoinGroup(t *testing.T) {
	res := run(t, simtest.Parse(t, parkedJoinLeave("mute-join", "60s", "")), 1, Options{KeepTrace: true})
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
// GroupCoordinator.removeMemberAndUpdateGroup (@3.9.0-rc3) answers the removed
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
	require.Equal(t, "closed", m.endState)
	require.Less(t, m.ended-8*time.Second, 30*time.Second, "close() must not wait request.timeout.ms for a SyncGroup the coordinator never answers")
}

// TestQueuedLeaveOutlivesItsProcess: a LeaveGroup waiting behind its
// member's parked JoinGroup is still read after the process is killed
// (mute.go): the broker does not notice the close while the channel is
// muted (docs/network-model.md B6) and reads the bytes already in the
// socket once the JoinGroup's answer is written (Selector.close keeps a
// closing channel until its outstanding receives are processed, @3.9.0-rc3).
// The member is removed by its leave when the rebalance ends, not by a
// session expiry 45 s later. The scenario of TestLeaveWaitsBehindParkedJoinGroup,
// with g-0 killed 2 s into its close().
func TestQueuedLeaveOutlivesItsProcess(t *testing.T) {
	src := parkedJoinLeave("mute-kill", "90s", "  - {at: 36s, crash: g-0, for: 60s}\n")
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	// muteTrace requires g-0's removal by its leave: the queued LeaveGroup
	// of the dead process is read.
	m := muteTrace(t, res, "g-0", protocol.APIJoinGroup, 30*time.Second)
	require.Equal(t, "crashed", m.endState, "g-0 was still closing at 36 s")
	require.Less(t, m.leaveArrived, m.ended)
	require.Less(t, m.ended, m.parkedAnswered, "the scenario kills g-0 while its JoinGroup is parked")
	require.GreaterOrEqual(t, m.removed, m.parkedAnswered)
}
