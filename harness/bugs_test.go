// Tests of the bug library (scenario/builtin/bug-*.yaml, docs/BUGS.md): each
// real Kafka bug shows its symptom with the buggy profile and not with the
// fixed one. The fixed variant is the same built-in file with one `profile:`
// line changed, exactly as the file's header tells a user to do.
package harness

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// bugSeeds are the seeds every bug case runs (the symptoms must not depend
// on the seed's latency jitter or tie-breaks).
var bugSeeds = []uint64{1, 2, 3}

// withProfile returns the built-in scenario with the first `profile:` line of
// the coordinator section ("coordinator") or of the first group's client
// section ("client") set to profile. It fails if the file has no such line,
// so a renamed section cannot silently test the buggy variant twice.
func withProfile(t testing.TB, name, section, profile string) *scenario.Scenario {
	t.Helper()
	src, ok := scenario.Builtin(name)
	require.True(t, ok, "built-in %s", name)
	lines := strings.Split(string(src), "\n")
	header := "coordinator:"
	if section == "client" {
		header = "    client:"
	}
	in, done := false, false
	for i, l := range lines {
		switch {
		case l == header:
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(l), "profile:"):
			indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
			lines[i] = indent + "profile: " + profile
			in, done = false, true
		}
		if done {
			break
		}
	}
	require.True(t, done, "%s: no profile line in section %s", name, section)
	return simtest.Parse(t, strings.Join(lines, "\n"))
}

// memberOwner maps coordinator member ids to the process (member name) that
// joined with them, from EvMemberAdded (Peer = id, Detail = name).
func memberOwner(trace []TraceEvent) map[string]string {
	owner := map[string]string{}
	for _, e := range trace {
		if e.Kind == protocol.EvMemberAdded {
			owner[e.Peer] = e.Detail
		}
	}
	return owner
}

// idsPerProcess counts the member ids each process joined under.
func idsPerProcess(trace []TraceEvent) map[string]int {
	n := map[string]int{}
	for _, e := range trace {
		if e.Kind == protocol.EvMemberAdded {
			n[e.Detail]++
		}
	}
	return n
}

// finalOwnership is the partitions each member holds at the end of the run:
// its last EvAssigned (EAGER protocol: every assignment replaces the last).
func finalOwnership(trace []TraceEvent) map[string][]protocol.TopicPartition {
	own := map[string][]protocol.TopicPartition{}
	for _, e := range trace {
		if e.Kind == protocol.EvAssigned {
			own[e.Node] = e.Partitions
		}
	}
	return own
}

// TestBugKAFKA12890: a live leader that never gets a SyncGroup through wedges
// the group in CompletingRebalance on a 2.8.0 broker (heartbeats accepted in
// CompletingRebalance since KAFKA-10134 keep re-arming the only timer that
// would have removed it); 2.8.1+/3.0 expire the pending sync after the
// rebalance timeout and rebalance without it. Source: KAFKA-12890 and the
// DelayedSync it added to GroupCoordinator (kafka-classic-protocol.md §12.7,
// pending-sync expiry); end-to-end, not a port of one Java unit test.
func TestBugKAFKA12890(t *testing.T) {
	const name, faultAt = "bug-kafka-12890", 30 * time.Second
	for _, seed := range bugSeeds {
		// Buggy: broker kafka-2.x (2.8.0).
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		g := res.Summary.Groups[0]
		var lastState string
		var lastGen int32
		stableAfterFault := false
		for _, e := range res.Trace {
			if e.Kind == protocol.EvGroupState && time.Duration(e.At) > faultAt {
				lastState, lastGen = e.State, e.Gen
				stableAfterFault = stableAfterFault || e.State == "Stable"
			}
			assert.NotEqual(t, protocol.EvMemberRemoved, e.Kind, "seed %d: 2.8.0 removes nobody: %+v", seed, e)
		}
		assert.False(t, stableAfterFault, "seed %d: 2.8.0 never leaves the rebalance", seed)
		assert.Equal(t, "CompletingRebalance", lastState, "seed %d: wedged in CompletingRebalance", seed)
		assert.Equal(t, int32(2), lastGen, "seed %d", seed)
		assert.False(t, g.StableAtEnd, "seed %d", seed)
		assert.Equal(t, int32(2), g.FinalGeneration, "seed %d", seed)
		assert.Zero(t, g.Evictions, "seed %d", seed)
		assert.Greater(t, g.UnownedPartitionSeconds, 3000.0, "seed %d: all 12 partitions idle for 270 s", seed)
		assert.Empty(t, res.Summary.InvariantViolations)

		// Fixed: broker kafka-3.x (pending-sync expiry).
		fixed := run(t, withProfile(t, name, "coordinator", "kafka-3.x"), seed, Options{KeepTrace: true})
		fg := fixed.Summary.Groups[0]
		owner := memberOwner(fixed.Trace)
		syncTimeouts := 0
		var firstExpiry, firstStableAfter time.Duration = -1, -1
		for _, e := range fixed.Trace {
			at := time.Duration(e.At)
			switch {
			case e.Kind == protocol.EvMemberRemoved && e.Reason == "sync-timeout":
				syncTimeouts++
				assert.Equal(t, "payments-0", owner[e.Peer], "seed %d: only the member that cannot sync is removed", seed)
				if firstExpiry < 0 {
					firstExpiry = at
				}
			case e.Kind == protocol.EvGroupState && e.State == "Stable" && at > faultAt && firstStableAfter < 0:
				firstStableAfter = at
			}
		}
		require.Positive(t, syncTimeouts, "seed %d: the pending sync expires", seed)
		// The join at 30 s completes within a round trip or two plus the
		// rebalance timeout of 20 s (max.poll.interval.ms).
		assert.InDelta(t, float64(faultAt+20*time.Second), float64(firstExpiry), float64(500*time.Millisecond), "seed %d", seed)
		assert.Positive(t, firstStableAfter, "seed %d: Stable again without the leader", seed)
		assert.Less(t, firstStableAfter, firstExpiry+time.Second, "seed %d", seed)
		assert.Greater(t, fg.FinalGeneration, int32(2), "seed %d", seed)
		assert.Less(t, fg.UnownedPartitionSeconds, g.UnownedPartitionSeconds/2, "seed %d: only the stuck member's share is lost", seed)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// TestBugKAFKA13214: on a 2.6.1–2.8.0 client a retriable JoinGroup error
// (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS during a coordinator
// failover) drops the member id; the abandoned ids hold the rebalance open
// until their sessions expire. 2.7.2/2.8.1/3.0 keep the id. Source:
// KAFKA-13214 (the KAFKA-10134 side effect, kafka-classic-protocol.md §16);
// end-to-end, not a port of one Java unit test.
func TestBugKAFKA13214(t *testing.T) {
	const name = "bug-kafka-13214"
	failoverAt := 35 * time.Second
	retriable := func(reason string) bool {
		return reason == protocol.NotCoordinator.String() || reason == protocol.CoordinatorLoadInProgress.String() ||
			reason == protocol.CoordinatorNotAvailable.String() || reason == protocol.NetworkException.String()
	}
	joinRebalance := func(g GroupSummary) Rebalance {
		for _, r := range g.Rebalances {
			if r.StartMs >= 30000 {
				return r
			}
		}
		t.Fatalf("no rebalance after 30 s: %+v", g.Rebalances)
		return Rebalance{}
	}
	for _, seed := range bugSeeds {
		// Buggy: client kafka-2.7.
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		g := res.Summary.Groups[0]
		dropped := map[string]bool{}
		for _, e := range res.Trace {
			if e.Kind == protocol.EvGenerationReset && e.Detail == "drop-id" && e.API == protocol.APIJoinGroup && retriable(e.Reason) {
				dropped[e.Node] = true
			}
		}
		assert.GreaterOrEqual(t, len(dropped), 5, "seed %d: the members with a parked JoinGroup drop their ids: %v", seed, dropped)
		ids := idsPerProcess(res.Trace)
		for m := range dropped {
			assert.GreaterOrEqual(t, ids[m], 2, "seed %d: %s joins again under a new id", seed, m)
		}
		owner := memberOwner(res.Trace)
		expired := 0
		for _, e := range res.Trace {
			if e.Kind == protocol.EvMemberRemoved && e.Reason == "session-expired" && time.Duration(e.At) > failoverAt {
				expired++
				assert.True(t, dropped[owner[e.Peer]], "seed %d: the expired id %s is one its process abandoned", seed, e.Peer)
			}
		}
		assert.Equal(t, 5, expired, "seed %d: the 5 abandoned ids expire", seed)
		assert.Equal(t, 5, g.FalseEvictions, "seed %d: their processes are alive", seed)
		buggy := joinRebalance(g)
		assert.Greater(t, buggy.DurationMs, int64(10000), "seed %d: the rebalance waits a session timeout for the abandoned ids", seed)
		assert.True(t, g.StableAtEnd)
		assert.Empty(t, res.Summary.InvariantViolations)

		// Fixed: client kafka-2.8 (KAFKA-13214).
		fixed := run(t, withProfile(t, name, "client", "kafka-2.8"), seed, Options{KeepTrace: true})
		fg := fixed.Summary.Groups[0]
		for _, e := range fixed.Trace {
			if e.Kind == protocol.EvGenerationReset && e.API == protocol.APIJoinGroup && retriable(e.Reason) {
				t.Errorf("seed %d: 2.8.1 resets nothing on a retriable JoinGroup error: %+v", seed, e)
			}
		}
		assert.Zero(t, fg.Evictions, "seed %d", seed)
		good := joinRebalance(fg)
		assert.Less(t, good.DurationMs, int64(10000), "seed %d", seed)
		assert.Less(t, good.DurationMs, buggy.DurationMs, "seed %d", seed)
		assert.Less(t, fg.UnownedPartitionSeconds, g.UnownedPartitionSeconds, "seed %d", seed)
		assert.True(t, fg.StableAtEnd)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// TestBugKAFKA9801: a static member restarting while the group is in
// CompletingRebalance gets an empty assignment from a 2.3–2.5 broker and
// keeps it (no further rebalance); 2.6 rebalances. Source: KAFKA-9801,
// apache/kafka PRs #8405 and #8439 (a static join in CompletingRebalance now
// triggers a rebalance); end-to-end, not a port of one Java unit test.
func TestBugKAFKA9801(t *testing.T) {
	const name, victim = "bug-kafka-9801", "payments-2"
	restartAt := 33500 * time.Millisecond
	for _, seed := range bugSeeds {
		// Buggy: broker kafka-2.4.
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		g := res.Summary.Groups[0]
		for _, e := range res.Trace {
			if e.Kind == protocol.EvRebalanceStart && time.Duration(e.At) >= restartAt {
				t.Errorf("seed %d: 2.4 answers the restart like Stable, no rebalance: %+v", seed, e)
			}
		}
		own := finalOwnership(res.Trace)
		v, ok := own[victim]
		require.True(t, ok, "seed %d: the restarted member got an assignment event", seed)
		assert.Empty(t, v, "seed %d: and it is empty", seed)
		total := 0
		for _, ps := range own {
			total += len(ps)
		}
		assert.Equal(t, 10, total, "seed %d: its 2 partitions have no owner at the end", seed)
		assert.True(t, g.StableAtEnd, "seed %d: the coordinator thinks all is well", seed)
		assert.Equal(t, int32(2), g.FinalGeneration)
		assert.Empty(t, res.Summary.InvariantViolations)

		// Fixed: broker kafka-2.6 (KAFKA-9801).
		fixed := run(t, withProfile(t, name, "coordinator", "kafka-2.6"), seed, Options{KeepTrace: true})
		fg := fixed.Summary.Groups[0]
		rebalanced := false
		for _, e := range fixed.Trace {
			if e.Kind == protocol.EvRebalanceStart && time.Duration(e.At) >= restartAt {
				rebalanced = true
			}
		}
		assert.True(t, rebalanced, "seed %d: the static restart in CompletingRebalance rebalances", seed)
		own = finalOwnership(fixed.Trace)
		assert.NotEmpty(t, own[victim], "seed %d", seed)
		total = 0
		for _, ps := range own {
			total += len(ps)
		}
		assert.Equal(t, 12, total, "seed %d: every partition owned at the end", seed)
		assert.Equal(t, int32(3), fg.FinalGeneration)
		assert.Less(t, fg.UnownedPartitionSeconds, g.UnownedPartitionSeconds, "seed %d", seed)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// TestBugKAFKA13419: ILLEGAL_GENERATION makes a ≤3.1 client drop its member
// id (rejoin as a new member: for a static member the coordinator fences the
// old id and adds a new one); 3.2 keeps the id. Source: KAFKA-13419,
// apache/kafka PR #11451 (ILLEGAL_GENERATION resets the generation but keeps
// the member id); end-to-end, not a port of one Java unit test.
func TestBugKAFKA13419(t *testing.T) {
	const name, victim = "bug-kafka-13419", "payments-2"
	check := func(t *testing.T, res *Result, wantDetail string) (fenced int) {
		t.Helper()
		resets := 0
		owner := memberOwner(res.Trace)
		for _, e := range res.Trace {
			switch {
			case e.Kind == protocol.EvGenerationReset && e.Reason == protocol.IllegalGeneration.String():
				resets++
				assert.Equal(t, victim, e.Node)
				assert.Equal(t, wantDetail, e.Detail)
			case e.Kind == protocol.EvMemberRemoved && e.Reason == "fenced":
				fenced++
				assert.Equal(t, victim, owner[e.Peer])
			}
		}
		assert.Positive(t, resets, "the woken static member gets ILLEGAL_GENERATION")
		return fenced
	}
	for _, seed := range bugSeeds {
		// Buggy: client kafka-3.0.
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		assert.Equal(t, 1, check(t, res, "drop-id"), "seed %d: the old id is fenced by the new one", seed)
		assert.Equal(t, 2, idsPerProcess(res.Trace)[victim], "seed %d: two member ids for one process", seed)
		assert.Empty(t, res.Summary.InvariantViolations)

		// Fixed: client kafka-3.2 (KAFKA-13419).
		fixed := run(t, withProfile(t, name, "client", "kafka-3.2"), seed, Options{KeepTrace: true})
		assert.Zero(t, check(t, fixed, "keep-id"), "seed %d", seed)
		assert.Equal(t, 1, idsPerProcess(fixed.Trace)[victim], "seed %d", seed)
		// The replacement itself costs no rebalance, but the old id was
		// still pending sync (it froze before its SyncGroup), and
		// replaceStaticMember leaves it in pendingSyncMembers: DelayedSync
		// expires and rebalances once more (GroupCoordinator.scala 3.6.1
		// 1622-1634). The fixed client keeps its id and syncs it.
		assert.Equal(t, res.Summary.Groups[0].FinalGeneration, fixed.Summary.Groups[0].FinalGeneration+1,
			"seed %d: the buggy variant's stale pending-sync id costs one rebalance", seed)
		syncTimeouts := 0
		for _, e := range res.Trace {
			if e.Kind == protocol.EvRebalanceStart && e.Reason == "sync-timeout" {
				syncTimeouts++
			}
		}
		assert.Equal(t, 1, syncTimeouts, "seed %d", seed)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// TestBugKIP62: the KIP-62 case already has a built-in with both eras side by
// side (kip62-slow-poll, tested by TestKIP62); the bug library lists it and
// this checks it still exists so docs/BUGS.md stays true.
func TestBugKIP62(t *testing.T) {
	assert.Contains(t, scenario.BuiltinNames(), "kip62-slow-poll")
}

// TestBugKAFKA8653: on a 2.3.0 broker a JoinGroup v0 (kafka-0.10 client)
// gets rebalance timeout -1 instead of the session timeout, so after a join
// every rebalance completes at once and removes the members that had not
// rejoined yet: generations every few seconds, live members evicted by the
// rebalance timeout, never Stable with all members; 2.3.1 rebalances once.
// Source: KAFKA-8653, apache/kafka PR #7072; end-to-end, not a port of one
// Java unit test.
func TestBugKAFKA8653(t *testing.T) {
	const name = "bug-kafka-8653"
	for _, seed := range bugSeeds {
		// Buggy: broker kafka-2.3.0.
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		g := res.Summary.Groups[0]
		timeouts := 0
		for _, e := range res.Trace {
			if e.Kind == protocol.EvMemberRemoved {
				assert.Equal(t, "rebalance-timeout", e.Reason, "seed %d: %+v", seed, e)
				timeouts++
			}
		}
		assert.Greater(t, g.FinalGeneration, int32(20), "seed %d: a generation every few seconds", seed)
		assert.Greater(t, timeouts, 20, "seed %d", seed)
		assert.Equal(t, timeouts, g.FalseEvictions, "seed %d: every removed member was alive", seed)
		assert.False(t, g.StableAtEnd, "seed %d", seed)

		// Fixed: broker kafka-2.3 (2.3.1).
		fixed := run(t, withProfile(t, name, "coordinator", "kafka-2.3"), seed, Options{})
		fg := fixed.Summary.Groups[0]
		assert.Equal(t, int32(2), fg.FinalGeneration, "seed %d: the join costs one rebalance", seed)
		assert.Zero(t, fg.Evictions, "seed %d", seed)
		assert.True(t, fg.StableAtEnd, "seed %d", seed)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// oracleNames lists the oracles that fired in one run, in the fixed order
// RunOracles gives them.
func oracleNames(t testing.TB, sc *scenario.Scenario, seed uint64) []string {
	t.Helper()
	_, fs, err := RunOracles(sc, seed, Options{})
	require.NoError(t, err)
	return oracleList(fs)
}

// TestBugKAFKA9752: on a 2.2.0–2.4.1 broker a member that joined for the
// first time in a rebalance gets no heartbeat expiry when the rebalance
// completes (the expiry is rescheduled while isNew still says "alive"), so
// a new member whose process died with its JoinGroup parked keeps its id
// and its partitions for ever: Stable, no eviction, partitions unowned;
// 2.5.0 expires it one session timeout later and rebalances.
// Source: KAFKA-9752, apache/kafka PR #8339, whose unit test is
// Kafka: GroupCoordinatorTest.testNewMemberFailureAfterJoinGroupCompletion @2.5.0
// (that test, end-to-end here).
func TestBugKAFKA9752(t *testing.T) {
	const name = "bug-kafka-9752"
	for _, seed := range bugSeeds {
		// Buggy: broker kafka-2.4.
		res := run(t, load(t, name), seed, Options{})
		g := res.Summary.Groups[0]
		assert.Equal(t, int32(2), g.FinalGeneration, "seed %d: no rebalance after the new member died", seed)
		assert.Zero(t, g.Evictions, "seed %d: the dead member is never expired", seed)
		assert.True(t, g.StableAtEnd, "seed %d", seed)
		assert.Subset(t, oracleNames(t, load(t, name), seed),
			[]string{scenario.OracleUnownedAtEnd, scenario.OracleMemberLeak, scenario.OracleMemberIDLeak}, "seed %d", seed)

		// Fixed: broker kafka-2.5.
		fixed := withProfile(t, name, "coordinator", "kafka-2.5")
		fr := run(t, fixed, seed, Options{})
		fg := fr.Summary.Groups[0]
		assert.Equal(t, int32(3), fg.FinalGeneration, "seed %d: the dead member's expiry rebalances", seed)
		assert.Equal(t, 1, fg.Evictions, "seed %d", seed)
		assert.Empty(t, oracleNames(t, fixed, seed), "seed %d", seed)
		assert.Less(t, fg.UnownedPartitionSeconds, g.UnownedPartitionSeconds/2, "seed %d", seed)
	}
}

// lostPartitions counts the partitions given up as lost (onPartitionsLost)
// in a trace.
func lostPartitions(trace []TraceEvent) int {
	n := 0
	for _, e := range trace {
		if e.Kind == protocol.EvRevoked && e.Detail == "lost" {
			n += len(e.Partitions)
		}
	}
	return n
}

// TestBugKAFKA13891: a 3.3.0/3.3.1 client resets its generation when its
// SyncGroup is answered REBALANCE_IN_PROGRESS, so every cooperative member
// that was waiting for its assignment when a new rebalance began gives all
// its partitions up as lost; the 3.3.2 client (= kafka-3.2, the reset
// reverted by KAFKA-14016) keeps its generation and loses nothing.
// Source: KAFKA-13891 (apache/kafka PR #12140), revert PR #12794;
// end-to-end, not a port of one Java unit test.
func TestBugKAFKA13891(t *testing.T) {
	const name = "bug-kafka-13891"
	for _, seed := range bugSeeds {
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		resets := 0
		for _, e := range res.Trace {
			if e.Kind == protocol.EvGenerationReset && e.API == protocol.APISyncGroup {
				assert.Equal(t, "REBALANCE_IN_PROGRESS", e.Reason, "seed %d", seed)
				resets++
			}
		}
		assert.GreaterOrEqual(t, resets, 3, "seed %d: the waiting members reset", seed)
		assert.Equal(t, 12, lostPartitions(res.Trace), "seed %d: every partition given up as lost", seed)

		fixed := run(t, withProfile(t, name, "client", "kafka-3.2"), seed, Options{KeepTrace: true})
		assert.Zero(t, lostPartitions(fixed.Trace), "seed %d", seed)
		assert.Less(t, fixed.Summary.Groups[0].UnownedPartitionSeconds, res.Summary.Groups[0].UnownedPartitionSeconds, "seed %d", seed)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// TestBugKAFKA10870: a 2.7 consumer treats a JoinGroup answered
// REBALANCE_IN_PROGRESS (a static member's rejoin in Stable whose group
// write timed out, broker 2.6.1+) as an unexpected, fatal error; 2.8.0
// retries. Source: KAFKA-10870, apache/kafka PR #9792, whose unit test is
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestWithRebalanceInProgress @3.2.0
// (present since 2.8.0; end-to-end here).
func TestBugKAFKA10870(t *testing.T) {
	const name = "bug-kafka-10870"
	for _, seed := range bugSeeds {
		res, fs, err := RunOracles(load(t, name), seed, Options{KeepTrace: true})
		require.NoError(t, err)
		fatal := 0
		for _, f := range fs {
			if f.Oracle == scenario.OracleClientFatal {
				assert.Contains(t, f.Message, "JoinGroup REBALANCE_IN_PROGRESS", "seed %d", seed)
				fatal++
			}
		}
		assert.GreaterOrEqual(t, fatal, 1, "seed %d: a restarted static member dies", seed)
		assert.Len(t, res.Summary.Groups[0].FatalErrors, fatal, "seed %d", seed)

		fixed := withProfile(t, name, "client", "kafka-2.8")
		fr, ffs, err := RunOracles(fixed, seed, Options{})
		require.NoError(t, err)
		assert.Empty(t, fr.Summary.Groups[0].FatalErrors, "seed %d", seed)
		assert.NotContains(t, oracleList(ffs), scenario.OracleClientFatal, "seed %d", seed)
	}
}

// TestBugKAFKA10284: a 2.3–2.6.0 broker answers a static member's restart
// in Stable (a JoinGroup with an unknown member id) with a new member id
// that it never persists; after a coordinator failover the new coordinator
// loads the old id, answers the restarted member FENCED_INSTANCE_ID, and
// the consumer dies. 2.6.1/2.7.0 persist the replacement before answering
// (KAFKA-10284, commit 535efa4c2cb; GroupCoordinator.scala 2.6.1
// 1048-1056). Source: apache/kafka PR #9588, whose system test is
// tests/kafkatest/tests/client/consumer_test.py
// test_static_consumer_persisted_after_rejoin (read at apache/kafka commit
// 0debffdf053; a static consumer bounced, then a rolling bounce of the
// brokers). End-to-end here; the broker unit is
// TestStaticRestartInStablePersistsFrom261 (model/classic/coordinator).
// The control drops the failover: without it the in-memory id is never
// lost and 2.6.0 is as clean as 2.7.
func TestBugKAFKA10284(t *testing.T) {
	const name = "bug-kafka-10284"
	for _, seed := range bugSeeds {
		res, fs, err := RunOracles(load(t, name), seed, Options{KeepTrace: true})
		require.NoError(t, err)
		var fatal []Finding
		for _, f := range fs {
			if f.Oracle == scenario.OracleClientFatal {
				fatal = append(fatal, f)
			}
		}
		if assert.Len(t, fatal, 1, "seed %d: the restarted static member dies", seed) {
			assert.Equal(t, "payments-1", fatal[0].Node, "seed %d", seed)
			assert.Contains(t, fatal[0].Message, "FENCED_INSTANCE_ID", "seed %d", seed)
			assert.Greater(t, fatal[0].AtMs, int64(40000), "seed %d: only after the failover", seed)
		}
		assert.Equal(t, []string{"payments-1: FENCED_INSTANCE_ID"}, res.Summary.Groups[0].FatalErrors, "seed %d", seed)
		assert.Zero(t, restartWrites(res.Trace), "seed %d: 2.6.0 writes nothing for the restart", seed)

		fixed := withProfile(t, name, "coordinator", "kafka-2.6.1")
		fr, ffs, err := RunOracles(fixed, seed, Options{KeepTrace: true})
		require.NoError(t, err)
		assert.Equal(t, 1, restartWrites(fr.Trace), "seed %d: 2.6.1+ persists the replacement", seed)
		assert.Empty(t, fr.Summary.Groups[0].FatalErrors, "seed %d", seed)
		assert.NotContains(t, oracleList(ffs), scenario.OracleClientFatal, "seed %d", seed)
		assert.Equal(t, int32(1), fr.Summary.Groups[0].FinalGeneration, "seed %d: the restart costs no rebalance", seed)

		// Control: the same restart without the failover is harmless on 2.6.0.
		ctl := load(t, name)
		ctl.Faults = slices.DeleteFunc(slices.Clone(ctl.Faults), func(f scenario.Fault) bool {
			return f.Kind == scenario.FaultCoordinatorFailover
		})
		require.Len(t, ctl.Faults, 1)
		cr, cfs, err := RunOracles(ctl, seed, Options{})
		require.NoError(t, err)
		assert.Empty(t, cr.Summary.Groups[0].FatalErrors, "seed %d", seed)
		assert.NotContains(t, oracleList(cfs), scenario.OracleClientFatal, "seed %d", seed)
	}
}

// restartWrites counts the group writes between bug-kafka-10284's restart
// (30 s) and its failover (40 s).
func restartWrites(trace []TraceEvent) int {
	n := 0
	for _, e := range trace {
		if e.Kind == protocol.EvGroupPersisted && e.At > sim.Instant(30*time.Second) && e.At < sim.Instant(40*time.Second) {
			n++
		}
	}
	return n
}

func oracleList(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Oracle)
	}
	return out
}

// takenWhileHeld lists the handovers of a partition to another member while
// victim still held it (its last `assigned` minus what it revoked or lost
// since), as "member@generation:partition".
func takenWhileHeld(trace []TraceEvent, victim string) []string {
	held := map[protocol.TopicPartition]bool{}
	var taken []string
	for _, e := range trace {
		switch {
		case e.Kind == protocol.EvAssigned && e.Node == victim:
			clear(held)
			for _, tp := range e.Partitions {
				held[tp] = true
			}
		case e.Kind == protocol.EvRevoked && e.Node == victim:
			for _, tp := range e.Partitions {
				delete(held, tp)
			}
		case e.Kind == protocol.EvAssigned:
			for _, tp := range e.Partitions {
				if held[tp] {
					taken = append(taken, fmt.Sprintf("%s@%d:%s-%d", e.Node, e.Gen, tp.Topic, tp.Partition))
				}
			}
		}
	}
	return taken
}

// TestBugKAFKA14639: with the 3.4 sticky assignors (before KAFKA-14639,
// apache/kafka PR #13550, 3.5.0) the leader drops the claims of a static
// member frozen across a join (its stored subscription carries an older
// generation than the others'), and gives one of its partitions to the new
// member in the same round while the frozen member still holds it: the
// partition is owned twice until the frozen member wakes and gives its
// partitions up as lost. From 3.5 its claims stand (the rule
// Kafka: AbstractStickyAssignorTest.testNoReassignmentOnCurrentMembers @3.6.1
// checks: members of different generations keep what they own) and nothing
// moves before it is revoked. The assignor rule itself is
// TestStickyClaimsBeforeKAFKA14639 (model/assign).
func TestBugKAFKA14639(t *testing.T) {
	const name, victim = "bug-kafka-14639", "payments-2"
	for _, seed := range bugSeeds {
		// Buggy: client kafka-3.4.
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		taken := takenWhileHeld(res.Trace, victim)
		assert.NotEmpty(t, taken, "seed %d: a partition of the frozen member goes to another member while it holds it", seed)
		for _, h := range taken {
			assert.True(t, strings.HasPrefix(h, "payments-5@4:"), "seed %d: %s: the new member, in generation 4", seed, h)
		}
		assert.Positive(t, res.Summary.Groups[0].DoubleOwnedPartitionSeconds, "seed %d", seed)
		assert.Empty(t, res.Summary.InvariantViolations)

		// Fixed: client kafka-3.6 (the 3.5.0 claim rule).
		fixed := run(t, withProfile(t, name, "client", "kafka-3.6"), seed, Options{KeepTrace: true})
		assert.Empty(t, takenWhileHeld(fixed.Trace, victim), "seed %d", seed)
		assert.Zero(t, fixed.Summary.Groups[0].DoubleOwnedPartitionSeconds, "seed %d", seed)
		assert.Equal(t, res.Summary.Groups[0].FinalGeneration, fixed.Summary.Groups[0].FinalGeneration, "seed %d: same rebalances, only the handover differs", seed)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// loadingErrors counts, per error code, the group responses the new
// coordinator sends during its load (from the failover to failover+load).
func loadingErrors(trace []TraceEvent, node string, from, to time.Duration) map[protocol.ErrorCode]int {
	n := map[protocol.ErrorCode]int{}
	for _, e := range trace {
		if e.Kind == tracing.EvSend && e.Node == node && !e.Req && e.At.Duration() >= from && e.At.Duration() < to &&
			(e.API == protocol.APIJoinGroup || e.API == protocol.APIHeartbeat || e.API == protocol.APISyncGroup) {
			n[e.Err]++
		}
	}
	return n
}

// TestBugFailoverLoading: before 2.0.0 (apache/kafka PR #4788) a broker
// owns a __consumer_offsets partition only once it is loaded and checks
// ownership first, so the new coordinator answers NOT_COORDINATOR for the
// whole load and every member rediscovers the coordinator every
// retry.backoff.ms (false coordinator-dead marks); from 2.0.0 it answers
// COORDINATOR_LOAD_IN_PROGRESS and the members retry in place. The other
// broker changes between the two profiles do not touch this run: the
// traces are identical up to the failover.
func TestBugFailoverLoading(t *testing.T) {
	const name = "bug-failover-loading"
	const failover, loadTime = 30100 * time.Millisecond, 10 * time.Second
	for _, seed := range bugSeeds {
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		fixed := run(t, withProfile(t, name, "coordinator", "kafka-2.3"), seed, Options{KeepTrace: true})
		for i, e := range res.Trace {
			if e.At.Duration() >= failover {
				break
			}
			require.Equal(t, e, fixed.Trace[i], "seed %d: the variants differ before the failover", seed)
		}
		// The coordinator role moves to one broker; find it from the trace.
		newCoord := ""
		for _, e := range res.Trace {
			if e.Kind == tracing.EvBrokerRole {
				newCoord = e.Node
				break
			}
		}
		require.NotEmpty(t, newCoord, "seed %d", seed)
		buggy := loadingErrors(res.Trace, newCoord, failover, failover+loadTime)
		assert.Greater(t, buggy[protocol.NotCoordinator], 50, "seed %d: NOT_COORDINATOR loop during the load: %v", seed, buggy)
		assert.Zero(t, buggy[protocol.CoordinatorLoadInProgress], "seed %d", seed)
		assert.Greater(t, res.Summary.Groups[0].FalseCoordinatorDeadMarks, 50, "seed %d", seed)

		ok := loadingErrors(fixed.Trace, newCoord, failover, failover+loadTime)
		assert.Zero(t, ok[protocol.NotCoordinator], "seed %d: %v", seed, ok)
		assert.Positive(t, ok[protocol.CoordinatorLoadInProgress], "seed %d", seed)
		assert.Zero(t, fixed.Summary.Groups[0].FalseCoordinatorDeadMarks, "seed %d", seed)
		assert.Equal(t, res.Summary.Groups[0].FinalGeneration, fixed.Summary.Groups[0].FinalGeneration, "seed %d", seed)
		assert.Empty(t, res.Summary.InvariantViolations)
		assert.Empty(t, fixed.Summary.InvariantViolations)
	}
}

// TestBugKAFKA13435: a static leader that restarts while its group is
// Stable is answered, by a pre-3.2 broker, with the old leader id
// (GroupCoordinator.updateStaticMemberAndRebalance, leaderId =
// currentLeader, apache/kafka 3.1.0 GroupCoordinator.scala 1262-1294), so it
// takes itself for a follower and nobody watches metadata: partitions added
// later are never assigned. The 3.2 broker (KIP-814, apache/kafka PR
// #11688) tells it that it leads, with skipAssignment, and the 3.2 client
// keeps its assignment snapshot (ConsumerCoordinator.onLeaderElected
// 3.2.0 666-671), so it sees the new partitions and rejoins
// (rejoinNeededOrPending, "cached metadata has changed", 3.2.0 853-856).
// Without the restart the old broker is fine too: the leader never
// stopped watching. End-to-end, not a port of one Java unit test.
func TestBugKAFKA13435(t *testing.T) {
	const name = "bug-kafka-13435"
	added := []string{"orders-12", "orders-13", "orders-14", "orders-15"}
	metadataRejoins := func(trace []TraceEvent) []string {
		var who []string
		for _, e := range trace {
			if e.Kind == protocol.EvRejoinRequested && e.Reason == "metadata-changed" {
				who = append(who, e.Node)
			}
		}
		return who
	}
	for _, seed := range bugSeeds {
		// Buggy: broker kafka-3.0.
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		g := res.Summary.Groups[0]
		assert.Equal(t, int32(1), g.FinalGeneration, "seed %d: nobody rejoins for the new partitions", seed)
		assert.True(t, g.StableAtEnd, "seed %d", seed)
		assert.Empty(t, metadataRejoins(res.Trace), "seed %d", seed)
		var owned []string
		for _, parts := range finalOwnership(res.Trace) {
			for _, tp := range parts {
				owned = append(owned, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
			}
		}
		assert.Len(t, owned, 12, "seed %d: only the original 12 partitions are owned", seed)
		for _, a := range added {
			assert.NotContains(t, owned, a, "seed %d", seed)
		}
		assert.Contains(t, oracleNames(t, load(t, name), seed), scenario.OracleUnownedAtEnd, "seed %d", seed)

		// Fixed: broker kafka-3.2.
		fixed := withProfile(t, name, "coordinator", "kafka-3.2")
		fr := run(t, fixed, seed, Options{KeepTrace: true})
		fg := fr.Summary.Groups[0]
		assert.Equal(t, int32(2), fg.FinalGeneration, "seed %d: the leader's metadata rejoin rebalances once", seed)
		assert.Equal(t, []string{"payments-0"}, metadataRejoins(fr.Trace), "seed %d: the restarted leader watches metadata", seed)
		n := 0
		for _, parts := range finalOwnership(fr.Trace) {
			n += len(parts)
		}
		assert.Equal(t, 16, n, "seed %d: every partition, the new ones too, is owned", seed)
		assert.Empty(t, oracleNames(t, fixed, seed), "seed %d", seed)
		assert.Less(t, fg.UnownedPartitionSeconds, g.UnownedPartitionSeconds/2, "seed %d", seed)

		// Control: the old broker without the restart: the leader (never
		// restarted) sees the new partitions.
		ctl := load(t, name)
		ctl.Faults = slices.DeleteFunc(ctl.Faults, func(f scenario.Fault) bool { return f.Kind == scenario.FaultRestart })
		cr := run(t, ctl, seed, Options{KeepTrace: true})
		assert.Equal(t, int32(2), cr.Summary.Groups[0].FinalGeneration, "seed %d", seed)
		assert.Len(t, metadataRejoins(cr.Trace), 1, "seed %d", seed)
		assert.Empty(t, oracleNames(t, ctl, seed), "seed %d", seed)
	}
}

// TestKIP814ResidualLeaderAwayAcrossMetadataChange keeps what exploration
// found on the fixed (3.2) broker of bug-kafka-13435 (docs/BUGS.md): a
// static leader that is out of the group while the topic grows (here it
// closes at 57 s, static members send no LeaveGroup, and its process is
// started again at 65.9 s, within the session timeout) rejoins into a
// Stable group, is told it leads with skipAssignment, and takes its
// assignment snapshot from metadata that already has the new partitions
// (ConsumerCoordinator.onLeaderElected, apache/kafka 3.2.0 668-671, the
// same at 3.8.0): the snapshot matches, nobody rejoins, and the new
// partitions stay unowned. The model follows the Java code; whether Kafka
// tracks this window in a JIRA was not checked.
func TestKIP814ResidualLeaderAwayAcrossMetadataChange(t *testing.T) {
	sc := withProfile(t, "bug-kafka-13435", "coordinator", "kafka-3.2")
	sc.Faults = []scenario.Fault{
		{At: 57076 * time.Millisecond, Kind: scenario.FaultLeave, Target: "payments-0"},
		{At: 60 * time.Second, Kind: scenario.FaultAddPartitions, Target: "orders", Partitions: 16},
		{At: 65913 * time.Millisecond, Kind: scenario.FaultRestart, Target: "payments-0"},
	}
	for _, seed := range bugSeeds {
		res := run(t, sc, seed, Options{KeepTrace: true})
		skipLeader := false
		for _, e := range res.Trace {
			assert.False(t, e.Kind == protocol.EvRejoinRequested && e.Reason == "metadata-changed", "seed %d: %+v", seed, e)
			if e.Kind == protocol.EvJoined && e.Node == "payments-0" && e.Detail == "leader" && e.At > sim.Instant(65*time.Second) {
				skipLeader = true
			}
		}
		assert.True(t, skipLeader, "seed %d: the restarted member is told it leads", seed)
		assert.Contains(t, oracleNames(t, sc, seed), scenario.OracleUnownedAtEnd, "seed %d", seed)
	}
}

// A KIP-394 pending member whose second JoinGroup arrives after the group's
// last member was removed (the group still PreparingRebalance, no member):
// Kafka's supportsProtocols is true for a group with no member
// (GroupMetadata.scala 3.6.1 473-478), so the member is added and the group
// is Stable again; before issue 23 (5e) the model answered
// INCONSISTENT_GROUP_PROTOCOL and the member stopped on a fatal error.
//
// Kafka: GroupMetadataTest.testSupportsProtocols @3.6.1
func TestPendingMemberJoinsGroupWithNoMemberRun(t *testing.T) {
	src, err := os.ReadFile("testdata/pending-member-no-member.yaml")
	require.NoError(t, err)
	sc, err := scenario.Parse("pending-member-no-member.yaml", src)
	require.NoError(t, err)
	res, err := Run(sc, 1, Options{KeepTrace: true})
	require.NoError(t, err)
	var removedAt sim.Instant
	for _, e := range res.Trace {
		if e.Kind == protocol.EvMemberRemoved && e.At > sim.Instant(65*time.Second) && removedAt == 0 {
			removedAt = e.At
		}
		if e.Kind == protocol.EvFatal {
			t.Errorf("%v: %s stopped on %v", e.At, e.Node, e.Err)
		}
	}
	assert.Equal(t, sim.Instant(70*time.Second), removedAt, "g-1's session expires between g-2's two JoinGroups")
	assert.Empty(t, res.Summary.Groups[0].FatalErrors)
	assert.True(t, res.Summary.Groups[0].StableAtEnd)
}

// A static member restarting while its first JoinGroup is parked: the
// Scala coordinator (kafka-3.x) expires it at its session timeout (one
// eviction, new-member-timeout), the Java one (kafka-4.0) keeps it
// (ClassicGroup.replaceStaticMember v8.0.0 builds a ClassicGroupMember whose
// isNew is false): no eviction. On main both evicted it.
//
// Source: ClassicGroup.replaceStaticMember (v8.0.0), GroupMetadata.replaceStaticMember (3.6.1).
func TestStaticRestartFirstJoinParkedRun(t *testing.T) {
	src, err := os.ReadFile("testdata/static-restart-first-join-parked.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		profile   string
		evictions int
	}{{"kafka-3.x", 1}, {"kafka-4.0", 0}} {
		sc, err := scenario.Parse("static-restart-first-join-parked.yaml", []byte(strings.ReplaceAll(string(src), "kafka-4.0", tc.profile)))
		require.NoError(t, err)
		res, err := Run(sc, 1, Options{})
		require.NoError(t, err)
		assert.Equal(t, tc.evictions, res.Summary.Groups[0].Evictions, tc.profile)
		assert.True(t, res.Summary.Groups[0].StableAtEnd, tc.profile)
	}
}

// TestBugKAFKA12639: a 2.5–3.4 consumer whose JoinGroup fails with a
// retriable error while poll()'s timer is zero re-sends it at once, for as
// long as the error lasts: a coordinator loading for 60 s gets hundreds of
// JoinGroups a second from every rejoining member (cpu-spin). 3.5.0 returns
// on the expired timer and the next poll() comes after retry.backoff.ms.
// Source: KAFKA-12639, apache/kafka PR #12140, whose unit test is
// Kafka: AbstractCoordinatorTest.testReturnUponRetriableErrorAndExpiredTimer @3.7.0
// (the model's unit is TestBackoffAndRetryUponRetriableError).
func TestBugKAFKA12639(t *testing.T) {
	const name = "bug-kafka-12639"
	joins := func(trace []TraceEvent) int {
		n := 0
		for _, e := range trace {
			if e.Kind == tracing.EvSend && e.Req && e.API == protocol.APIJoinGroup && e.At > sim.Instant(30*time.Second) && e.At < sim.Instant(90*time.Second) {
				n++
			}
		}
		return n
	}
	for _, seed := range bugSeeds {
		res, fs, err := RunOracles(load(t, name), seed, Options{KeepTrace: true})
		require.NoError(t, err)
		assert.Contains(t, oracleList(fs), scenario.OracleCPUSpin, "seed %d", seed)
		buggy := joins(res.Trace)
		assert.Greater(t, buggy, 10_000, "seed %d: JoinGroups during the 60 s load", seed)

		fixed := withProfile(t, name, "client", "kafka-3.6")
		fr, ffs, err := RunOracles(fixed, seed, Options{KeepTrace: true})
		require.NoError(t, err)
		assert.NotContains(t, oracleList(ffs), scenario.OracleCPUSpin, "seed %d", seed)
		// One JoinGroup per retry.backoff.ms (100 ms) per rejoining member
		// at most: 7 members × 600 backoffs.
		assert.LessOrEqual(t, joins(fr.Trace), 7*600+7, "seed %d", seed)
		t.Logf("seed %d: JoinGroups during the load: %d buggy, %d fixed", seed, buggy, joins(fr.Trace))
		assert.Equal(t, res.Summary.Groups[0].FinalGeneration, fr.Summary.Groups[0].FinalGeneration, "seed %d: the same rebalances, only the requests differ", seed)
	}
}
