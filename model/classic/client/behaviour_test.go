// Profile-level behaviour tests: KIP-62 heartbeat thread vs the 0.10
// HeartbeatTask, the fatal-error matrix over every error code, KIP-580
// backoff values, the profile table, determinism and the hot-path budget.
package client

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Every fatal error stops the member with EvFatal, and only those: the
// JoinGroup and SyncGroup columns of §5.10 over every error code.
func TestEveryFatalErrorStopsTheMember(t *testing.T) {
	joinNonFatal := []protocol.ErrorCode{protocol.None, protocol.CoordinatorLoadInProgress, protocol.UnknownMemberID,
		protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.MemberIDRequired, protocol.RebalanceInProgress}
	syncNonFatal := []protocol.ErrorCode{protocol.None, protocol.RebalanceInProgress, protocol.UnknownMemberID,
		protocol.IllegalGeneration, protocol.CoordinatorNotAvailable, protocol.NotCoordinator}
	for _, api := range []protocol.APIKey{protocol.APIJoinGroup, protocol.APISyncGroup} {
		for _, code := range protocol.AllErrorCodes {
			t.Run(api.String()+"/"+code.String(), func(t *testing.T) {
				d := newDriver(t, "kafka-3.6")
				d.start()
				d.findCoordinator()
				j := d.pop(protocol.APIJoinGroup)
				var wantFatal bool
				if api == protocol.APIJoinGroup {
					wantFatal = !slices.Contains(joinNonFatal, code)
					resp := &protocol.JoinGroupResponse{Error: code, MemberID: "m1", GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x"}
					if code != protocol.None {
						resp.GenerationID = -1
					}
					d.respond(j, resp)
				} else {
					wantFatal = !slices.Contains(syncNonFatal, code)
					d.respond(j, &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
					d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Error: code})
				}
				require.Equal(t, wantFatal, d.m.Stopped())
				require.Equal(t, wantFatal, len(d.eventsOf(protocol.EvFatal)) == 1)
				if wantFatal {
					require.Equal(t, code, d.m.FatalError())
				} else {
					require.Equal(t, protocol.None, d.m.FatalError())
				}
			})
		}
	}
}

// KIP-580 ExponentialBackoff values (ExponentialBackoffTest.testExponentialBackoff):
// 100·2^n ±20 %, capped at 1000 ms; max <= initial is a constant.
//
// Kafka: ExponentialBackoffTest.testExponentialBackoff @3.6.1
func TestExponentialBackoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cases := []struct {
		attempts int32
		lo, hi   time.Duration
	}{
		{0, 80 * time.Millisecond, 120 * time.Millisecond},
		{1, 160 * time.Millisecond, 240 * time.Millisecond},
		{2, 320 * time.Millisecond, 480 * time.Millisecond},
		{3, 640 * time.Millisecond, 960 * time.Millisecond},
		{4, 800 * time.Millisecond, 1000 * time.Millisecond},
		{40, 800 * time.Millisecond, 1000 * time.Millisecond},
	}
	for _, c := range cases {
		for range 200 {
			v := protocol.RetryBackoff(100*time.Millisecond, time.Second, c.attempts, rng)
			require.GreaterOrEqual(t, v, c.lo, "attempt %d", c.attempts)
			require.LessOrEqual(t, v, c.hi, "attempt %d", c.attempts)
			require.Zero(t, v%time.Millisecond, "whole milliseconds")
		}
	}
	require.Equal(t, 50*time.Millisecond, protocol.RetryBackoff(100*time.Millisecond, 50*time.Millisecond, 3, rng))
	a := protocol.RetryBackoff(100*time.Millisecond, time.Second, 2, rand.New(rand.NewPCG(1, 1)))
	b := protocol.RetryBackoff(100*time.Millisecond, time.Second, 2, rand.New(rand.NewPCG(1, 1)))
	require.Equal(t, a, b, "jitter comes only from the given rng")
}

// Heartbeat.failHeartbeat: fixed retry.backoff.ms before 3.7, exponential in
// the consecutive failures from 3.7 (reset by a success).
func TestFailedHeartbeatBackoff(t *testing.T) {
	for _, c := range []struct {
		profile string
		second  [2]time.Duration
	}{{"kafka-3.6", [2]time.Duration{100 * time.Millisecond, 100 * time.Millisecond}},
		{"kafka-3.7", [2]time.Duration{160 * time.Millisecond, 240 * time.Millisecond}}} {
		t.Run(c.profile, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.stable(tp(0))
			d.advance(3 * time.Second)
			d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.UnknownServerError})
			d.advance(2 * time.Second)
			d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.UnknownServerError})
			gap := d.m.hb.heartbeatDeadline.Sub(d.now)
			require.GreaterOrEqual(t, gap, c.second[0])
			require.LessOrEqual(t, gap, c.second[1])
		})
	}
}

// The profile table.
func TestProfiles(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := ParseProfile(name)
		require.NoError(t, err, name)
		require.Equal(t, Profile(name), p)
	}
	_, err := ParseProfile("kafka-9.9")
	require.Error(t, err)
	cases := []struct {
		name                                                string
		task, fourStates, sentGen, coop, expBackoff, kip394 bool
		session                                             time.Duration
	}{
		{"kafka-0.10", true, false, false, false, false, false, 30 * time.Second},
		{"kafka-2.3", false, false, false, false, false, true, 10 * time.Second},
		{"kafka-2.4", false, false, false, true, false, true, 10 * time.Second},
		{"kafka-2.6", false, false, true, true, false, true, 10 * time.Second},
		{"kafka-2.7", false, true, true, true, false, true, 10 * time.Second},
		{"kafka-2.x", false, true, true, true, false, true, 10 * time.Second},
		{"kafka-3.2", false, true, true, true, false, true, 45 * time.Second},
		{"kafka-3.x", false, true, true, true, true, true, 45 * time.Second},
	}
	for _, c := range cases {
		b, ok := lookupBehaviour(c.name)
		require.True(t, ok, c.name)
		require.Equal(t, c.task, b.heartbeatTask, c.name)
		require.Equal(t, c.fourStates, b.fourStates, c.name)
		require.Equal(t, c.sentGen, b.sentGenCheck, c.name)
		require.Equal(t, c.coop, b.ownedInSubscription(), c.name)
		require.Equal(t, c.expBackoff, b.exponentialBackoff, c.name)
		require.Equal(t, c.kip394, b.join.version >= joinVersionMemberIDRequired, c.name)
		cfg := Config{Profile: Profile(c.name)}
		require.NoError(t, ApplyProfileDefaults(&cfg))
		require.Equal(t, c.session, cfg.SessionTimeout, c.name)
	}
	// 3.8 … 4.3: the classic consumer's modelled paths and defaults are
	// 3.7's (profile.go, laterEras); only the name differs.
	v37, _ := lookupBehaviour("kafka-3.7")
	for _, name := range append(slices.Clone(laterEras), "kafka-4.x") {
		b, ok := lookupBehaviour(name)
		require.True(t, ok, name)
		same := *b
		same.name = v37.name
		require.Equal(t, *v37, same, name)
	}
}

// Same seed, same events, byte for byte.
func TestDeterminism(t *testing.T) {
	run := func() []protocol.Event {
		d := newDriver(t, "kafka-3.7", func(cfg *Config) { cfg.PollInterval = Const(20 * time.Second) })
		d.stable(tp(0))
		for range 5 {
			d.advance(3 * time.Second)
			for d.count(protocol.APIHeartbeat) > 0 {
				d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.UnknownServerError})
			}
		}
		return d.events
	}
	require.Equal(t, run(), run())
}

// Hot path budget: a steady-state heartbeat round trip allocates nothing
// (with every part's invariant checked at both entry points). A member's
// size is memberSize, checked at compile time beside the type.
func TestHeartbeatPathAllocations(t *testing.T) {
	d := newDriver(t, "kafka-3.6", func(cfg *Config) {
		cfg.PollInterval = Const(10 * time.Hour)
		cfg.MaxPollInterval = 10 * time.Hour
	})
	d.stable(tp(0))
	resp := &protocol.HeartbeatResponse{}
	var out Output
	out.Sends = make([]Send, 0, 8)
	out.Events = make([]protocol.Event, 0, 8)
	now := d.now
	allocs := testing.AllocsPerRun(100, func() {
		now = now.Add(3 * time.Second)
		out.Reset()
		d.m.TickHeartbeat(now, &out)
		s := out.Sends[0]
		d.m.Step(now, s.Broker, s.Corr, resp, &out)
	})
	require.Zero(t, allocs)
}

// TestGenerationHeartbeat: a JoinGroup response's generation carries its
// Heartbeat request inside one object (generationSize), which also holds the
// generation's id and member id, and the request's other fields are not part
// of the generation's identity (Generation.equals compares id, member id and
// protocol name).
func TestGenerationHeartbeat(t *testing.T) {
	a := &generation{protocol: "range", hasProtocol: true, hbReady: true}
	a.hb = protocol.HeartbeatRequest{GroupID: "g", GenerationID: 3, MemberID: "m-1", GroupInstanceID: "i"}
	require.Equal(t, int32(3), a.id())
	require.Equal(t, "m-1", a.memberID())
	b := newGeneration(3, "m-1", "range", true)
	require.True(t, a.same(b))
	require.False(t, a.same(newGeneration(3, "m-1", "range", false)))
	require.False(t, a.same(newGeneration(4, "m-1", "range", true)))
	require.False(t, a.same(newGeneration(3, "m-2", "range", true)))
}

// TestQueuedCloseReason: the close reason of a queued network event, kept
// as an index into the template's table (so the event stays within
// queuedSize), reads back as given.
func TestQueuedCloseReason(t *testing.T) {
	var tm template
	a, ok := tm.whyIndex("peer-closed")
	require.True(t, ok)
	b, _ := tm.whyIndex("reset")
	a2, _ := tm.whyIndex("peer-closed")
	require.Equal(t, a, a2)
	require.NotEqual(t, a, b)
	require.Equal(t, "peer-closed", tm.whys[a])
	require.Equal(t, "reset", tm.whys[b])
}
