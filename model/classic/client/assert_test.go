package client

import (
	"testing"
	"time"

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

// Every part's invariant, broken by hand in a STABLE member, fires at the
// next entry point (TickHeartbeat at the same instant, which changes
// nothing else): the member reports an assert-failed event naming the part
// and what broke, and stops. One case per invariant (assertInvariants);
// each cites the rule it guards in the part's invariant() comment.
func TestEveryPartInvariantFires(t *testing.T) {
	parts := []protocol.TopicPartition{tp(0)}
	cases := []struct {
		detail  string
		profile string
		brk     func(m *Member)
	}{
		// Member (member.go)
		{"member: a running member whose application thread does not run", "kafka-3.x",
			func(m *Member) { m.app.phase = appNotStarted }},
		{"member: a rejoin requested without a reason, or a reason without a rejoin", "kafka-3.x",
			func(m *Member) { m.rejoinNeeded = true }},
		{"member: STABLE with a reset generation", "kafka-3.x",
			func(m *Member) { m.gen = noGeneration }},
		// generation (state.go)
		{"generation: an id below NO_GENERATION", "kafka-3.x",
			func(m *Member) { m.gen = newGeneration(-2, "m1", "", false) }},
		{"generation: a protocol name on a generation without one", "kafka-3.x",
			func(m *Member) { m.gen = newGeneration(1, "m1", "range", false) }},
		{"generation: a protocol on NO_GENERATION's id", "kafka-3.x",
			func(m *Member) { m.gen = newGeneration(protocol.NoGeneration, "m1", "range", true) }},
		{"generation: a JoinGroup response's generation without its protocol or member id", "kafka-3.x",
			func(m *Member) {
				m.gen = &generation{hb: protocol.HeartbeatRequest{GenerationID: 1}, protocol: "range", hasProtocol: true, hbReady: true}
			}},
		// coordinator lookup (lookup.go)
		{"lookup: a completed lookup still referenced before 2.8", "kafka-2.3",
			func(m *Member) { m.coord.stale = findStaleDone }},
		{"lookup: a lookup in flight beside a completed one still referenced", "kafka-3.x",
			func(m *Member) { m.coord.stale, m.coord.findCorr = findStaleFailed, 99 }},
		{"lookup: a lookup backoff with a lookup in flight", "kafka-3.x",
			func(m *Member) { m.coord.retryAt, m.coord.findCorr = protocol.Instant(time.Hour), 99 }},
		// join future (join.go)
		{"join: a JoinGroup and a SyncGroup in flight at once", "kafka-3.x",
			func(m *Member) { m.join.status, m.join.joinCorr, m.join.syncCorr = joinWaiting, 98, 99 }},
		{"join: a request in flight for a completed join future", "kafka-3.x",
			func(m *Member) { m.join.syncCorr = 99 }},
		{"join: a pending join future in STABLE", "kafka-3.x",
			func(m *Member) { m.join.status = joinWaiting }},
		{"join: a succeeded join future in PREPARING_REBALANCE", "kafka-3.x",
			func(m *Member) { m.join.status, m.state = joinSucceeded, PreparingRebalance }},
		{"join: a failed join future without an error", "kafka-3.x",
			func(m *Member) { m.join.status = joinFailed }},
		{"join: onJoinComplete under way without a succeeded join future", "kafka-3.x",
			func(m *Member) { m.join.complete = jcAssigning }},
		// application thread (app.go)
		{"app: busy with nothing to resume", "kafka-3.x",
			func(m *Member) { m.app.phase, m.app.cont = appBusy, contNone }},
		{"app: a continuation without a busy period", "kafka-3.x",
			func(m *Member) { m.app.phase, m.app.cont = appPolling, contResume }},
		{"app: the leader's SyncGroup is not waiting exactly while the assignor runs", "kafka-3.x",
			func(m *Member) { m.app.pendingSync = &protocol.SyncGroupRequest{} }},
		{"app: a callback without partitions", "kafka-3.x",
			func(m *Member) { m.app.cb = cbRevoked }},
		{"app: a callback under way on a thread that is not in it", "kafka-3.x",
			func(m *Member) {
				m.app.phase, m.app.cont, m.app.cb, m.app.cbParts = appPolling, contNone, cbRevoked, &parts
			}},
		// heartbeat (heartbeat.go)
		{"heartbeat: an enabled heartbeat thread without its timers", "kafka-3.x",
			func(m *Member) { m.hb.pollDeadline = protocol.Never }},
		{"heartbeat: a failed heartbeat thread still enabled", "kafka-3.x",
			func(m *Member) { m.hb.threadFailed = protocol.FencedInstanceID }},
		// auto-commit (commit.go)
		{"commit: an auto-commit timer without enable.auto.commit", "kafka-3.x",
			func(m *Member) { m.autoCommit.at = protocol.Instant(time.Hour) }},
		{"commit: onJoinPrepare's commit under way without its record", "kafka-3.x",
			func(m *Member) { m.autoCommit.prep, m.autoCommit.p = prepBackoff, nil }},
		{"commit: an OffsetCommit request without partitions", "kafka-3.x",
			func(m *Member) { m.autoCommit.req = &protocol.OffsetCommitRequest{} }},
		// metadata view (metadata.go)
		{"metadata: the leader has no assignment snapshot", "kafka-3.x",
			func(m *Member) { m.meta = &metadataView{isLeader: true} }},
	}
	for _, c := range cases {
		t.Run(c.detail, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.stable(tp(0))
			require.Empty(t, d.eventsOf(protocol.EvAssertFailed), "holds before the break")
			c.brk(d.m)
			d.call(func(o *Output) { d.m.TickHeartbeat(d.now, o) })
			ev := d.eventsOf(protocol.EvAssertFailed)
			require.Len(t, ev, 1)
			require.Equal(t, c.detail, ev[0].Detail)
			require.True(t, d.m.Stopped())
		})
	}
}
