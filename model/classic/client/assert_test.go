package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// A response whose API is not the request's is a model bug: the member
// reports an assert-failed event (a violation in the harness) and stops,
// instead of panicking or carrying on.
func TestAssertFailureStopsTheMember(t *testing.T) {
	d := newDriver(t, "kafka-3.x")
	d.start()
	s := d.pop(protocol.APIFindCoordinator)
	d.respond(s, &protocol.HeartbeatResponse{})
	ev := d.eventsOf(protocol.EvAssertFailed)
	require.Len(t, ev, 1)
	require.Equal(t, "net: response Heartbeat for a FindCoordinator request", ev[0].Detail)
	require.True(t, d.m.Stopped())
	require.Len(t, d.eventsOf(protocol.EvFatal), 1)
}

// A state transition the join future cannot make (STABLE straight from
// UNJOINED) is caught by the join part's assertion.
func TestAssertBecomeStableFromUnjoined(t *testing.T) {
	d := newDriver(t, "kafka-3.x")
	d.start()
	d.call(func(o *Output) { d.m.becomeStable(d.now, o) })
	ev := d.eventsOf(protocol.EvAssertFailed)
	require.Len(t, ev, 1)
	require.Equal(t, "join: becomeStable from UNJOINED", ev[0].Detail)
	require.NotEqual(t, Stable, d.m.State())
}

// NewMember picks the heartbeat implementation once, from the profile.
func TestHeartbeaterChosenByProfile(t *testing.T) {
	for _, name := range ProfileNames() {
		d := newDriver(t, name)
		_, task := d.m.hbt.heartbeater.(*heartbeatTask)
		b, _ := lookupBehaviour(name)
		require.Equal(t, b.heartbeatTask, task, name)
	}
}
