// Tests of whole runs: determinism (same seed, same trace hash), a golden
// trace reviewed by eye (-rewrite regenerates it), and the crash-one-member
// timing the foundation issue asks for.
package harness

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/client"
	"github.com/rebalsim/rebalsim/model/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata/")

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
	for seed := uint64(1); seed <= 5; seed++ {
		res := run(t, sc, seed, Options{KeepTrace: true})
		var lastHB, evictedAt time.Duration = -1, -1
		memberID := ""
		for _, e := range res.Trace {
			at := time.Duration(e.At)
			if e.Kind == EvDeliver && e.Req && e.API == protocol.APIHeartbeat && e.Peer == victim && at <= crashAt {
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
			"seed %d: eviction one session timeout after the last heartbeat that arrived", seed)

		gs := res.Summary.Groups[0]
		require.GreaterOrEqual(t, gs.RebalanceCount, 2, "seed %d: initial join plus the crash rebalance", seed)
		last := gs.Rebalances[len(gs.Rebalances)-1]
		assert.Equal(t, "session-expired", last.Trigger)
		assert.Equal(t, g.Members-1, last.Members)
		bound := g.Client.HeartbeatInterval + 10*pollMax(g) + 20*time.Millisecond
		assert.LessOrEqual(t, time.Duration(last.DurationMs)*time.Millisecond, bound, "seed %d: rebalance ends within one heartbeat interval plus a few round trips and polls", seed)
		assert.Equal(t, 1, gs.Evictions)
		assert.Equal(t, 0, gs.FalseEvictions)
		assert.True(t, gs.StableAtEnd)
	}
}

func pollMax(g scenario.Group) time.Duration {
	d := g.Workload.PollInterval.Value
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
// gives the same figures as firing every poll, for every built-in scenario.
// Only same-instant tie order may differ, so the trace hash is not compared.
func TestLazyPollsMatchEager(t *testing.T) {
	for _, name := range scenario.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			for seed := uint64(1); seed <= 3; seed++ {
				lazy := run(t, sc, seed, Options{}).Summary
				eager := run(t, sc, seed, Options{EagerPolls: true}).Summary
				lazy.TraceSHA256, eager.TraceSHA256 = "", ""
				lazy.Events, eager.Events = 0, 0
				assert.Equal(t, eager, lazy, "seed %d", seed)
			}
		})
	}
}
