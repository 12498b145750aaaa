// Tests of whole runs: determinism (same seed, same trace hash), a golden
// trace reviewed by eye (-rewrite regenerates it), and the crash-one-member
// timing the foundation issue asks for.
package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/classic/client"
	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// rewrite is the test binary's -rewrite flag (the scripts' too): the
// golden files are written back.
var rewrite = datadriven.Rewrite

func load(t testing.TB, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(name)
	require.NoError(t, err)
	return sc
}

func run(t testing.TB, sc *scenario.Scenario, seed uint64, opts Options) *Result {
	t.Helper()
	res, err := Run(sc, seed, opts)
	require.NoError(t, err)
	return res
}

// traceSpan runs the scenario src at seed and returns the time from the
// first trace event start accepts to the first one after it that end
// accepts (a fault and what it causes); the test fails when either is
// missing.
func traceSpan(t testing.TB, src string, seed uint64, start, end func(e *TraceEvent) bool) time.Duration {
	t.Helper()
	res := run(t, simtest.Parse(t, src), seed, Options{KeepTrace: true})
	var from time.Duration = -1
	for i := range res.Trace {
		e := &res.Trace[i]
		switch {
		case from < 0 && start(e):
			from = time.Duration(e.At)
		case from >= 0 && end(e):
			return time.Duration(e.At) - from
		}
	}
	t.Fatalf("seed %d: no end event after the start at %v (-1: no start)", seed, from)
	return 0
}

func TestSameSeedSameTraceHash(t *testing.T) {
	sc := load(t, "testdata/small-crash.yaml")
	a := run(t, sc, 1, Options{})
	b := run(t, sc, 1, Options{})
	assert.Equal(t, a.Summary.TraceSHA256, b.Summary.TraceSHA256)
	assert.Equal(t, a.Summary, b.Summary)
	c := run(t, sc, 2, Options{})
	assert.NotEqual(t, a.Summary.TraceSHA256, c.Summary.TraceSHA256, "jittered latency: another seed gives another trace")
}

func TestBuiltinsDeterministic(t *testing.T) {
	for _, name := range scenario.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			a := run(t, sc, 3, Options{})
			b := run(t, sc, 3, Options{})
			assert.Equal(t, a.Summary.TraceSHA256, b.Summary.TraceSHA256)
			assert.Empty(t, a.Summary.InvariantViolations)
		})
	}
}

func TestGoldenTrace(t *testing.T) {
	sc := load(t, "testdata/small-crash.yaml")
	var buf bytes.Buffer
	run(t, sc, sc.Seed, Options{TraceJSONL: &buf})
	golden := filepath.Join("testdata", "small-crash.trace.jsonl")
	if *rewrite {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -rewrite to create the golden file, then review it")
	if !bytes.Equal(want, buf.Bytes()) {
		t.Fatalf("trace differs from %s; if the change is intended, run go test ./harness -run TestGoldenTrace -rewrite and review the diff", golden)
	}
}

// TestCrashOneMember: the coordinator evicts the crashed member one session
// timeout after its last heartbeat; the rebalance that follows ends within
// one heartbeat interval plus a few round trips and poll intervals.
func TestCrashOneMember(t *testing.T) {
	sc := load(t, "crash-one-member")
	var crashAt time.Duration
	var victim string
	for _, f := range sc.Faults {
		if f.Kind == scenario.FaultCrash {
			crashAt, victim = f.At, f.Target
		}
	}
	require.NotEmpty(t, victim)
	g := sc.Groups[0]
	crashes := map[time.Duration]bool{}
	for seed := uint64(1); seed <= 5; seed++ {
		res := run(t, sc, seed, Options{KeepTrace: true})
		// Realistic timing: the crash lands up to one heartbeat interval
		// after the written instant, at a phase the seed draws.
		for _, e := range res.Trace {
			if e.Kind == tracing.EvFault && e.Reason == string(scenario.FaultCrash) {
				crashAt = time.Duration(e.At)
			}
		}
		crashes[crashAt] = true
		var lastHB, evictedAt time.Duration = -1, -1
		memberID := ""
		for _, e := range res.Trace {
			at := time.Duration(e.At)
			// Heartbeat and OffsetCommit both complete the session timer
			// (GroupCoordinator.handleCommitOffsets); a crash phase can put
			// a commit after the last heartbeat.
			if e.Kind == tracing.EvDeliver && e.Req && (e.API == protocol.APIHeartbeat || e.API == protocol.APIOffsetCommit) && e.Peer == victim && at <= crashAt {
				lastHB = at
			}
			if e.Kind == protocol.EvMemberAdded && e.Detail == victim && at <= crashAt {
				memberID = e.Peer
			}
			if e.Kind == protocol.EvMemberRemoved && evictedAt < 0 && at > crashAt && e.Reason == "session-expired" {
				evictedAt = at
				if memberID != "" {
					assert.Equal(t, memberID, e.Peer, "the crashed member is the one evicted")
				}
			}
		}
		require.Positive(t, lastHB, "seed %d: the victim heartbeated before the crash", seed)
		require.Positive(t, evictedAt, "seed %d: the crashed member was evicted", seed)
		assert.InDelta(t, float64(lastHB+g.Client.SessionTimeout), float64(evictedAt), float64(5*time.Millisecond),
			"seed %d: eviction one session timeout after the last heartbeat or commit that arrived", seed)

		gs := res.Summary.Groups[0]
		require.GreaterOrEqual(t, gs.RebalanceCount, 2, "seed %d: initial join plus the crash rebalance", seed)
		last := gs.Rebalances[len(gs.Rebalances)-1]
		assert.Equal(t, "session-expired", last.Trigger)
		assert.Equal(t, g.Members-1, last.Members)
		// A constant poll: a few polls; the default lognormal: the slowest
		// member's batch in progress, at most about its p99 twice.
		bound := g.Client.HeartbeatInterval + min(10*pollMax(g), 2*pollMax(g)+time.Second) + 20*time.Millisecond
		assert.LessOrEqual(t, time.Duration(last.DurationMs)*time.Millisecond, bound, "seed %d: rebalance ends within one heartbeat interval plus a few round trips and polls", seed)
		assert.Equal(t, 1, gs.Evictions)
		assert.Equal(t, 0, gs.FalseEvictions)
		assert.True(t, gs.StableAtEnd)
	}
	assert.GreaterOrEqual(t, len(crashes), 4, "each seed draws its own crash phase (whole ms within 3 s: two of five may coincide)")
}

func pollMax(g scenario.Group) time.Duration {
	d := g.Workload.PollInterval.Value
	switch pi := g.Workload.PollInterval; pi.Kind {
	case scenario.DistLognormal:
		d = pi.P99 // the default processing time (scenario.DefaultPollInterval)
	case scenario.DistUniform:
		d = pi.Max
	}
	if g.Workload.PollTimeout.Value > d {
		d = g.Workload.PollTimeout.Value
	}
	return d
}

// TestScenarioProfilesKnownToModels: every profile name a scenario file may
// use is one the client and the coordinator models know.
func TestScenarioProfilesKnownToModels(t *testing.T) {
	for _, name := range scenario.ProfileNames() {
		_, err := client.ParseProfile(name)
		assert.NoError(t, err, "client profile %s", name)
		_, err = coordinator.ParseProfile(name)
		assert.NoError(t, err, "coordinator profile %s", name)
	}
}

// TestLazyPollsMatchEager: replaying uneventful polls lazily (client/lazy.go)
// gives the same run as firing every poll, for every built-in scenario: the
// same summary and the same trace, byte for byte (its SHA-256). The random
// family of TestLazyPollsMatchEagerRandomFamily holds it under faults.
func TestLazyPollsMatchEager(t *testing.T) {
	for _, name := range scenario.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			for seed := uint64(1); seed <= 3; seed++ {
				lazy := run(t, sc, seed, Options{}).Summary
				eager := run(t, sc, seed, Options{EagerPolls: true}).Summary
				assert.Equal(t, eager, lazy, "seed %d", seed)
			}
		})
	}
}

// TestKIP62 (client issue): with 15 s of processing per poll and a 10 s
// session timeout, kafka-0.10 (heartbeats only from poll) evicts the live
// members and kafka-2.x (background heartbeat thread) does not.
func TestKIP62(t *testing.T) {
	sc := load(t, "kip62-slow-poll")
	for seed := uint64(1); seed <= 3; seed++ {
		res := run(t, sc, seed, Options{})
		byID := map[string]GroupSummary{}
		for _, g := range res.Summary.Groups {
			byID[g.ID] = g
		}
		legacy, modern := byID["legacy"], byID["modern"]
		assert.Positive(t, legacy.Evictions, "kafka-0.10 evicts")
		assert.Equal(t, legacy.Evictions, legacy.FalseEvictions, "every eviction is of a live member")
		assert.Zero(t, modern.Evictions, "kafka-2.x keeps its slow members")
		assert.True(t, modern.StableAtEnd)
		assert.Empty(t, res.Summary.InvariantViolations)
	}
}

// TestCooperativeMovesTakeTwoRebalances (KIP-429): when a member joins a
// cooperative group, partitions move in two rebalances (revoke, then assign)
// and no partition is ever owned by two members; under EAGER every member
// revokes everything before rejoining.
func TestCooperativeMovesTakeTwoRebalances(t *testing.T) {
	src := `
name: coop
duration: 60s
coordinator: {brokers: 1, group.initial.rebalance.delay.ms: 0}
network: {latency: {dist: uniform, min: 1ms, max: 4ms}}
topics: [{name: t, partitions: 12}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-3.x, partition.assignment.strategy: %s, session.timeout.ms: 10000}
    start: {at: 0s, stagger: 0s}
faults:
  - {at: 30s, join: g}
`
	for seed := uint64(1); seed <= 5; seed++ {
		coop := run(t, simtest.Parse(t, fmt.Sprintf(src, "cooperative-sticky")), seed, Options{KeepTrace: true})
		g := coop.Summary.Groups[0]
		// Two rebalances are two generations (completed join phases): with
		// spread processing times the second can start before every member
		// is Stable in the first, so one settle episode may span both. A
		// member whose processing outlasts both can rejoin later with its
		// owned partitions changed: then a third.
		gens := 0
		for _, r := range g.Rebalances {
			if r.StartMs >= 30000 {
				gens += r.Generations
			}
		}
		require.GreaterOrEqual(t, gens, 2, "seed %d: the join costs two rebalances under COOPERATIVE: %+v", seed, g.Rebalances)
		require.LessOrEqual(t, gens, 3, "seed %d: %+v", seed, g.Rebalances)
		assert.Zero(t, g.DoubleOwnedPartitionSeconds, "seed %d", seed)
		assert.Empty(t, coop.Summary.InvariantViolations)
		owner := map[protocol.TopicPartition]string{}
		for _, e := range coop.Trace {
			switch e.Kind {
			case protocol.EvRevoked:
				for _, tp := range e.Partitions {
					delete(owner, tp)
				}
			case protocol.EvAssigned:
				for _, tp := range e.Partitions {
					if o, ok := owner[tp]; ok && o != e.Node {
						t.Fatalf("seed %d: %v owned by %s and %s at %v", seed, tp, o, e.Node, e.At)
					}
					owner[tp] = e.Node
				}
			}
		}

		eager := run(t, simtest.Parse(t, fmt.Sprintf(src, "range")), seed, Options{KeepTrace: true})
		revokedAll := 0
		for _, e := range eager.Trace {
			if e.Kind == protocol.EvRevoked && time.Duration(e.At) > 30*time.Second && len(e.Partitions) == 4 {
				revokedAll++
			}
		}
		assert.Equal(t, 3, revokedAll, "seed %d: under EAGER each of the 3 owners revokes all 4 of its partitions", seed)
		gens = 0
		for _, r := range eager.Summary.Groups[0].Rebalances {
			if r.StartMs >= 30000 {
				gens += r.Generations
			}
		}
		assert.Equal(t, 1, gens, "seed %d: one rebalance under EAGER", seed)
	}
}

// TestFatalErrorStopsOnlyThatMember: GROUP_MAX_SIZE_REACHED (KIP-389) is
// fatal to the member that gets it; the others form the group.
func TestFatalErrorStopsOnlyThatMember(t *testing.T) {
	src := `
name: max-size
duration: 30s
coordinator: {brokers: 1, group.max.size: 3}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 4
    subscribe: [t]
    start: {at: 0s, stagger: 100ms}
`
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	g := res.Summary.Groups[0]
	require.Len(t, g.FatalErrors, 1)
	assert.Contains(t, g.FatalErrors[0], "GROUP_MAX_SIZE_REACHED")
	fatal := 0
	for _, e := range res.Trace {
		if e.Kind == protocol.EvFatal {
			fatal++
			assert.Equal(t, protocol.GroupMaxSizeReached, e.Err)
		}
	}
	assert.Equal(t, 1, fatal, "exactly one member stopped, with the error in the trace")
	assert.True(t, g.StableAtEnd, "the other three form the group")
	assert.Equal(t, 3, g.Rebalances[len(g.Rebalances)-1].Members)
}

// TestFailoverRecovery: after a coordinator failover of a Stable group the
// recovery ends once the new coordinator has loaded the group and answered
// every member a heartbeat: at least load.time, at most load.time plus one
// heartbeat interval, the rediscovery backoff and a few round trips.
func TestFailoverRecovery(t *testing.T) {
	sc := load(t, "coordinator-failover")
	g := sc.Groups[0]
	for seed := uint64(1); seed <= 5; seed++ {
		gs := run(t, sc, seed, Options{}).Summary.Groups[0]
		require.Len(t, gs.Failovers, 1, "seed %d", seed)
		f := gs.Failovers[0]
		rec := time.Duration(f.RecoveryMs) * time.Millisecond
		assert.GreaterOrEqual(t, rec, sc.Coordinator.LoadTime, "seed %d", seed)
		assert.LessOrEqual(t, rec, sc.Coordinator.LoadTime+g.Client.HeartbeatInterval+g.Client.RetryBackoffMax+100*time.Millisecond, "seed %d", seed)
		assert.Less(t, gs.UnownedPartitionSecondsAfterFirstFault, gs.UnownedPartitionSeconds, "seed %d: the startup join is not counted after the fault", seed)
	}
}

// TestProgressGuard: a world that fires too many events without virtual
// time moving stops with a "progress" violation instead of spinning (the
// guard that caught the assign.time livelock); here the bound is lowered so
// that 50 members starting at one instant trip it.
func TestProgressGuard(t *testing.T) {
	defer func(n int) { maxEventsPerInstant = n }(maxEventsPerInstant)
	maxEventsPerInstant = 20
	sc := simtest.Parse(t, `
name: burst
duration: 10s
topics: [{name: t, partitions: 1}]
groups: [{id: g, members: 50, subscribe: [t], start: {at: 1s, stagger: 0s}}]
`)
	res := run(t, sc, 1, Options{})
	require.NotEmpty(t, res.Summary.InvariantViolations)
	v := res.Summary.InvariantViolations[0]
	assert.Equal(t, "progress", v.Checker)
	assert.Equal(t, int64(1000), v.AtMs)
	assert.Less(t, res.Summary.SimulatedMs, int64(10000), "the run stopped there")
}

// TestLeaderAssignorLongerThanHeartbeat: a leader's assignor run longer
// than the heartbeat interval (2.7+ clients) used to livelock the world at
// the instant it ended; it must finish, with both members Stable.
func TestLeaderAssignorLongerThanHeartbeat(t *testing.T) {
	sc := simtest.Parse(t, `
name: slow-assignor
duration: 60s
topics: [{name: t, partitions: 4}]
groups:
  - {id: g, members: 2, subscribe: [t], client: {profile: kafka-3.0}, workload: {assign.time: 5s}}
`)
	for seed := uint64(1); seed <= 6; seed++ {
		res := run(t, sc, seed, Options{})
		assert.Empty(t, res.Summary.InvariantViolations, "seed %d", seed)
		assert.Equal(t, int64(60000), res.Summary.SimulatedMs, "seed %d", seed)
		assert.True(t, res.Summary.Groups[0].StableAtEnd, "seed %d", seed)
	}
}

// TestCoordinatorRequestTime: with coordinator.request.time the broker serves
// one request at a time. Below saturation it only adds latency; above it the
// queue grows until requests time out (request.timeout.ms) and sessions
// expire: an overloaded coordinator looks dead to healthy members.
func TestCoordinatorRequestTime(t *testing.T) {
	src := `
name: overload
duration: 120s
coordinator: {brokers: 1, request.time: %s}
network: {latency: {dist: uniform, min: 1ms, max: 2ms}}
topics: [{name: t, partitions: 40}]
groups:
  - id: g
    members: 40
    subscribe: [t]
    client: {profile: kafka-3.x, session.timeout.ms: 10000, request.timeout.ms: 5000}
    start: {at: 0s, stagger: 10ms}
`
	light := run(t, simtest.Parse(t, fmt.Sprintf(src, "2ms")), 1, Options{}).Summary.Groups[0]
	assert.Zero(t, light.CoordinatorDeadMarks, "40 members × (1 heartbeat / 3 s + 1 commit / 5 s) × 2 ms is 4%% busy")
	assert.Zero(t, light.Evictions)
	assert.True(t, light.StableAtEnd)

	heavy := run(t, simtest.Parse(t, fmt.Sprintf(src, "200ms")), 1, Options{}).Summary.Groups[0]
	assert.Positive(t, heavy.FalseCoordinatorDeadMarks, "at 200 ms a request the broker is 4× overloaded: requests time out")
	assert.False(t, heavy.StableAtEnd)
}
