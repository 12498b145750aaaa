package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// consumer-swarm.yaml is a small consumer-protocol group (two cohorts: the
// second with slow rebalance callbacks) under random crashes, pauses,
// partitions from the coordinator, packet-loss windows and coordinator
// failovers.
// testdata/consumer-timeline.yaml is a quiet group of 3 that the timeline
// tests add one fault to; testdata/migration-*.yaml are the migrating
// siblings (migration_test.go). testdataText reads them.

// TestConsumerSwarmNoPartitionOwnedTwice: the consumer protocol's promise
// (kafka-consumer-protocol.md §7, "No partition is in two members'
// (assigned ∪ pending revocation) sets at the same time"), as the clients
// live it: over 1,000 swarm seeds, no partition is owned at any instant by
// two processes that the coordinator both counts as its owner, and no
// other invariant breaks. Zombies (members the coordinator removed that
// have not heard it yet) may overlap; the run says how often.
func TestConsumerSwarmNoPartitionOwnedTwice(t *testing.T) {
	sc := simtest.Parse(t, testdataText(t, "consumer-swarm.yaml"))
	seeds := 1000
	if testing.Short() {
		seeds = 200
	}
	zombie := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		res := run(t, sc, seed, Options{})
		requireNoViolations(t, seed, res, true)
		if res.Summary.Groups[0].DoubleOwnedPartitionSeconds > 0 {
			zombie++
		}
	}
	t.Logf("%d of %d seeds had a zombie owner for a while (a removed member that had not heard it)", zombie, seeds)
}

// TestConsumerSameSeedSameTrace: determinism of a consumer-protocol run.
func TestConsumerSameSeedSameTrace(t *testing.T) {
	a := requireSameSeedSameTrace(t, simtest.Parse(t, testdataText(t, "consumer-swarm.yaml")), 7)
	require.NotZero(t, a.Summary.Groups[0].Generations)
}

// testdataText is the text of a scenario in testdata (as text: tests vary
// it before parsing).
func testdataText(t testing.TB, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(src)
}

// requireNoViolations fails the test on an invariant violation of res, but
// with notStableOK on the liveness checker's "not Stable" (a member paused
// past the end or still fenced: the caller judges those).
func requireNoViolations(t testing.TB, seed uint64, res *Result, notStableOK bool) {
	t.Helper()
	for _, v := range res.Summary.InvariantViolations {
		if notStableOK && v.Checker == "liveness" && strings.Contains(v.Message, "not Stable") {
			continue
		}
		t.Fatalf("seed %d: %s at %d ms: %s", seed, v.Checker, v.AtMs, v.Message)
	}
}

// requireSameSeedSameTrace: seed run twice gives one trace and one
// summary; seed+1 another trace. It returns the first run.
func requireSameSeedSameTrace(t testing.TB, sc *scenario.Scenario, seed uint64) *Result {
	t.Helper()
	a, b, c := run(t, sc, seed, Options{}), run(t, sc, seed, Options{}), run(t, sc, seed+1, Options{})
	assert.Equal(t, a.Summary.TraceSHA256, b.Summary.TraceSHA256)
	assert.Equal(t, a.Summary, b.Summary)
	assert.NotEqual(t, a.Summary.TraceSHA256, c.Summary.TraceSHA256)
	return a
}

// consumerTrace runs src and returns its trace.
func consumerTrace(t *testing.T, src string) []TraceEvent {
	t.Helper()
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	return res.Trace
}

// ownedAt is each member's partitions after the last assigned/revoked
// event at or before at.
func ownedAt(tr []TraceEvent, at time.Duration) map[string][]protocol.TopicPartition {
	own := map[string][]protocol.TopicPartition{}
	for _, e := range tr {
		if time.Duration(e.At) > at {
			break
		}
		switch e.Kind {
		case protocol.EvAssigned:
			own[e.Node] = e.Partitions
		case protocol.EvRevoked:
			var kept []protocol.TopicPartition
			for _, p := range own[e.Node] {
				if !slicesContains(e.Partitions, p) {
					kept = append(kept, p)
				}
			}
			own[e.Node] = kept
		}
	}
	return own
}

// TestConsumerCrashTimeline: a crashed member (no leave) is fenced exactly
// group.consumer.session.timeout.ms (45 s) after the coordinator got its
// last heartbeat (GroupMetadataManager's session timer, §2.9); the group
// epoch bumps at that instant and each survivor learns its share of the
// dead member's partitions in the response to its next heartbeat (within
// one group.consumer.heartbeat.interval.ms, 5 s), applies it at its next
// poll(), and gives up nothing (uniform is sticky).
func TestConsumerCrashTimeline(t *testing.T) {
	tr := consumerTrace(t, testdataText(t, "consumer-timeline.yaml")+"faults: [{at: 60s, crash: g-1}]\n")
	before := ownedAt(tr, 60*time.Second)
	require.Len(t, before["g-1"], 4)
	var lastHB, removed time.Duration
	for _, e := range tr {
		if e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIConsumerGroupHeartbeat && e.Peer == "g-1" && e.At < sim60s {
			lastHB = time.Duration(e.At)
		}
		if e.Kind == protocol.EvMemberRemoved {
			require.Zero(t, removed, "one removal")
			removed = time.Duration(e.At)
			assert.Equal(t, protocol.RemovalSessionExpired, e.Removal)
			assert.Equal(t, "g-1-1", e.Peer)
		}
	}
	require.NotZero(t, lastHB)
	assert.Equal(t, lastHB+45*time.Second, removed, "fenced at last heartbeat + session timeout")
	gained := map[protocol.TopicPartition]bool{}
	for _, m := range []string{"g-0", "g-2"} {
		var hb, got, committed time.Duration
		for _, e := range tr {
			at := time.Duration(e.At)
			if at <= removed {
				continue
			}
			if hb == 0 && e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIConsumerGroupHeartbeat && e.Peer == m {
				hb = at
			}
			if committed == 0 && got == 0 && e.Kind == tracing.EvDeliver && !e.Req && e.API == protocol.APIOffsetCommit && e.Node == m {
				committed = at
			}
			if e.Kind == protocol.EvRevoked && e.Node == m {
				t.Errorf("%s revoked %v at %v: survivors keep their partitions", m, e.Partitions, at)
			}
			if got == 0 && e.Kind == protocol.EvAssigned && e.Node == m {
				got = at
				for _, p := range e.Partitions {
					if !slicesContains(before[m], p) {
						gained[p] = true
					}
				}
				assert.Subset(t, e.Partitions, before[m], "%s keeps what it had", m)
			}
		}
		require.NotZero(t, hb, m)
		assert.LessOrEqual(t, hb, removed+5*time.Second, "%s heartbeats within one interval", m)
		// The response comes back after the 1 ms latency; the
		// reconciliation starts at the next poll() (poll.interval 10 ms)
		// with the auto-commit of the owned partitions
		// (signalReconciliationStarted), and the assignment is applied
		// when the commit is answered.
		assert.GreaterOrEqual(t, got, hb+time.Millisecond, m)
		require.NotZero(t, committed, "%s commits before it reconciles", m)
		assert.LessOrEqual(t, committed, got, m)
		assert.LessOrEqual(t, committed, hb+time.Millisecond+10*time.Millisecond+2*time.Millisecond, m, "the commit: 1 ms each way")
	}
	assert.Len(t, gained, 4, "the dead member's partitions, and only those, moved")
	for _, p := range before["g-1"] {
		assert.True(t, gained[p], "%v reassigned", p)
	}
}

const sim60s = 60 * 1e9

// TestConsumerJoinMovesOnlyWhatMoves: a fourth member joining a stable
// group of three (12 partitions, uniform) takes one partition from each;
// each old member revokes exactly the partition that moves, never all of
// them (no stop-the-world), and the new member gets each partition only
// after its previous owner revoked it (§2.7: assigned only once released).
func TestConsumerJoinMovesOnlyWhatMoves(t *testing.T) {
	tr := consumerTrace(t, testdataText(t, "consumer-timeline.yaml")+"faults: [{at: 60s, join: g}]\n")
	before := ownedAt(tr, 60*time.Second)
	for _, m := range []string{"g-0", "g-1", "g-2"} {
		require.Len(t, before[m], 4, m)
	}
	revokedAt := map[protocol.TopicPartition]time.Duration{}
	var newGot []protocol.TopicPartition
	var newAt time.Duration
	for _, e := range tr {
		at := time.Duration(e.At)
		if at < 60*time.Second {
			continue
		}
		switch {
		case e.Kind == protocol.EvRevoked:
			require.NotEqual(t, "lost", e.Detail)
			require.Len(t, e.Partitions, 1, "%s revokes only the partition that moves", e.Node)
			revokedAt[e.Partitions[0]] = at
		case e.Kind == protocol.EvAssigned && e.Node == "g-3":
			newGot, newAt = e.Partitions, at
		}
	}
	require.Len(t, revokedAt, 3)
	require.Len(t, newGot, 3)
	for _, p := range newGot {
		at, ok := revokedAt[p]
		require.True(t, ok, "%v came from a revocation", p)
		assert.Less(t, at, newAt, "%v revoked before it was assigned again", p)
	}
	after := ownedAt(tr, 139*time.Second)
	for _, m := range []string{"g-0", "g-1", "g-2"} {
		assert.Len(t, after[m], 3, m)
		assert.Subset(t, before[m], after[m], "%s kept the rest", m)
	}
}

// TestConsumerCommitBeforeRevocation: with enable.auto.commit (the
// default) a member commits its offsets and waits for the answer before
// onPartitionsRevoked (AbstractMembershipManager.revokeAndAssign,
// kafka-consumer-protocol.md §3.7 step 3); the coordinator accepts it (the
// member epoch is current). Without auto-commit nothing is committed.
func TestConsumerCommitBeforeRevocation(t *testing.T) {
	tr := consumerTrace(t, testdataText(t, "consumer-timeline.yaml")+"faults: [{at: 60s, join: g}]\n")
	answered := map[string]time.Duration{}
	revokes := 0
	for _, e := range tr {
		switch {
		case e.Kind == tracing.EvDeliver && !e.Req && e.API == protocol.APIOffsetCommit:
			assert.Equal(t, protocol.None, e.Err)
			answered[e.Node] = time.Duration(e.At)
		case e.Kind == protocol.EvRevoked && e.Detail == "revoked":
			revokes++
			at, ok := answered[e.Node]
			require.True(t, ok, "%s revoked at %v without a commit before", e.Node, e.At)
			assert.LessOrEqual(t, at, time.Duration(e.At))
			delete(answered, e.Node)
		}
	}
	assert.GreaterOrEqual(t, revokes, 3, "the join moves three partitions")
	src := strings.Replace(testdataText(t, "consumer-timeline.yaml"), "group.protocol: consumer}", "group.protocol: consumer, enable.auto.commit: false}", 1)
	for _, e := range consumerTrace(t, src+"faults: [{at: 60s, join: g}]\n") {
		assert.NotEqual(t, protocol.APIOffsetCommit, e.API, "no commit without auto-commit")
	}
}

// TestConsumerGroupSurvivesCoordinatorCrash: the coordinator's broker
// crashes; after failover.delay (9 s) the group's records move to the next
// broker, which loads them with fresh session timers
// (GroupMetadataManager.onLoaded): the members find it, heartbeat at their
// epoch and carry on — no member is removed, the group epoch does not
// move and no partition changes hands.
func TestConsumerGroupSurvivesCoordinatorCrash(t *testing.T) {
	src := strings.Replace(testdataText(t, "consumer-timeline.yaml"), "brokers: 1", "brokers: 3, load.time: 1s", 1) + "faults: [{at: 60s, crash: coordinator, for: 30s}]\n"
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	g := res.Summary.Groups[0]
	assert.True(t, g.StableAtEnd)
	assert.Zero(t, g.Evictions)
	assert.Zero(t, g.PartitionsMovedAfterFirstFault)
	for _, r := range g.Rebalances {
		assert.Less(t, r.StartMs, int64(60000), "no rebalance after the crash: %+v", r)
	}
	moved := false
	for _, e := range res.Trace {
		if e.Kind == tracing.EvBrokerRole && e.Group == "g" {
			moved = true
			assert.Equal(t, 69*time.Second, time.Duration(e.At), "fenced after failover.delay")
		}
		if time.Duration(e.At) > 60*time.Second && (e.Kind == protocol.EvRebalanceStart || e.Kind == protocol.EvMemberRemoved) {
			t.Errorf("%v at %v: the failover changed the group", e.Kind, e.At)
		}
	}
	assert.True(t, moved)
	assert.Len(t, g.Failovers, 1)
	assert.GreaterOrEqual(t, g.Failovers[0].RecoveryMs, int64(1000), "not before load.time")
}

// TestConsumerStaticRollingRestart: static members (group.instance.id)
// leave with epoch −2 on close and keep their partitions; each new process
// rejoins with the same instance id within the session timeout and gets
// its assignment back (§2.10): no epoch bump, nothing moves.
func TestConsumerStaticRollingRestart(t *testing.T) {
	src := strings.Replace(testdataText(t, "consumer-timeline.yaml"), "group.protocol: consumer}", "group.protocol: consumer, group.instance.id: true}", 1) +
		"faults: [{at: 60s, rolling-restart: g, interval: 10s, downtime: 2s}]\n"
	res := run(t, simtest.Parse(t, src), 1, Options{})
	require.Empty(t, res.Summary.InvariantViolations)
	g := res.Summary.Groups[0]
	assert.True(t, g.StableAtEnd)
	assert.Zero(t, g.PartitionsMovedAfterFirstFault, "each member gets its own partitions back")
	assert.Zero(t, g.Evictions)
	dyn := run(t, simtest.Parse(t, strings.Replace(src, "group.instance.id: true", "group.instance.id: false", 1)), 1, Options{})
	assert.Positive(t, dyn.Summary.Groups[0].PartitionsMovedAfterFirstFault, "dynamic members leave (epoch −1) and their partitions move")
}

// TestPartitionsMovedCountsHandovers: partitions_moved counts a partition
// that starts being owned by another member than its last owner. After a
// crash under cooperative-sticky (classic) and uniform (consumer) exactly
// the dead member's 4 partitions move; eager range reassigns all 12 and
// moves those whose range shifted.
func TestPartitionsMovedCountsHandovers(t *testing.T) {
	base := testdataText(t, "consumer-timeline.yaml") + "faults: [{at: 60s, crash: g-1}]\n"
	for _, tc := range []struct {
		client string
		want   int
	}{
		{"{profile: kafka-4.2, group.protocol: consumer}", 4},
		{"{profile: kafka-4.2, partition.assignment.strategy: cooperative-sticky}", 4},
		// range over g-0, g-2: g-0 keeps 0-3 and takes 4-5, g-2 gets 6-11:
		// 4-5 and 6-7 change hands (8-11 were g-2's).
		{"{profile: kafka-4.2, partition.assignment.strategy: range}", 4},
	} {
		src := strings.Replace(base, "{profile: kafka-4.2, group.protocol: consumer}", tc.client, 1)
		res := run(t, simtest.Parse(t, src), 1, Options{})
		require.Empty(t, res.Summary.InvariantViolations, tc.client)
		assert.Equal(t, tc.want, res.Summary.Groups[0].PartitionsMovedAfterFirstFault, tc.client)
	}
}

// TestConsumerSwarmSettles: after the same random faults stop (at 60 s),
// every run's group settles: Stable with every live member STABLE at the
// group epoch holding its assignment, within the liveness checker's bound
// (the broker's session timeout + max.poll.interval.ms + 30 s) — no
// liveness violation, no other violation, over 300 seeds.
func TestConsumerSwarmSettles(t *testing.T) {
	src := strings.Replace(strings.Replace(testdataText(t, "consumer-swarm.yaml"), "duration: 90s", "duration: 520s", 1), "  from: 10s\n", "  from: 10s\n  until: 60s\n", 1)
	sc := simtest.Parse(t, src)
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		res := run(t, sc, seed, Options{})
		requireNoViolations(t, seed, res, false)
		g := res.Summary.Groups[0]
		require.True(t, g.StableAtEnd, "seed %d", seed)
	}
}

// TestConsumerGroupMaxSize: a member past group.consumer.max.size gets
// GROUP_MAX_SIZE_REACHED, which the consumer protocol's client treats as
// fatal (kafka-consumer-protocol.md §3.5): that process stops, the others
// carry on, and the run says so (invalid: a fatal error).
func TestConsumerGroupMaxSize(t *testing.T) {
	src := strings.Replace(testdataText(t, "consumer-timeline.yaml"), "brokers: 1,", "brokers: 1, group.consumer.max.size: 2,", 1)
	res := run(t, simtest.Parse(t, src), 1, Options{})
	g := res.Summary.Groups[0]
	require.Len(t, g.FatalErrors, 1)
	assert.Equal(t, "g-2: GROUP_MAX_SIZE_REACHED", g.FatalErrors[0])
	assert.False(t, res.Summary.Valid)
}

// TestConsumerOraclesQuiet: the anomaly oracles (group-stuck,
// never-rejoins, member-leak, ...) read consumer groups as they read
// classic ones: a coordinator broker crash, a static rolling restart and
// a crash whose restart comes after the session timeout leave no finding (they once saw the group
// Dead after its coordinator moved, and a static member's new id as a
// stranger).
func TestConsumerOraclesQuiet(t *testing.T) {
	src := strings.Replace(strings.Replace(testdataText(t, "consumer-timeline.yaml"), "brokers: 1", "brokers: 3", 1), "duration: 140s", "duration: 700s", 1)
	src = strings.Replace(src, "group.protocol: consumer}", "group.protocol: consumer, group.instance.id: true}", 1)
	src += "faults:\n  - {at: 60s, crash: coordinator, for: 30s}\n  - {at: 100s, rolling-restart: g, interval: 10s, downtime: 2s}\n  - {at: 200s, crash: g-2, for: 60s}\n"
	res, findings, err := RunOracles(simtest.Parse(t, src), 1, Options{})
	require.NoError(t, err)
	require.Empty(t, res.Summary.InvariantViolations)
	assert.Empty(t, findings)
	assert.True(t, res.Summary.Groups[0].StableAtEnd)
	assert.Positive(t, res.Summary.Groups[0].Fences, "the static restart replaced a member id")
}

// TestConsumerStaticRestartUnreleased: a static member's process that
// crashes (no −2 leave) and restarts before the broker's session timeout
// rejoins with epoch 0 while the broker still holds its instance id:
// UNRELEASED_INSTANCE_ID, fatal in the client — the reverse of classic
// static membership (kafka-consumer-protocol.md §2.10, §6 hazard 1).
func TestConsumerStaticRestartUnreleased(t *testing.T) {
	src := strings.Replace(testdataText(t, "consumer-timeline.yaml"), "group.protocol: consumer}", "group.protocol: consumer, group.instance.id: true}", 1) +
		"faults: [{at: 60s, restart: g-1}]\n"
	res := run(t, simtest.Parse(t, src), 1, Options{})
	g := res.Summary.Groups[0]
	assert.Equal(t, []string{"g-1: UNRELEASED_INSTANCE_ID"}, g.FatalErrors)
	assert.False(t, res.Summary.Valid)
}

// TestConsumerGroupConfigs: a group's `configs:` (Kafka's group configs,
// set with kafka-configs --entity-type groups) replace the broker's
// group.consumer.session.timeout.ms for that group: a crashed member is
// fenced consumer.session.timeout.ms (50 s) after its last heartbeat, and
// the members heartbeat every consumer.heartbeat.interval.ms (6 s).
// Kafka: GroupMetadataManager.consumerGroupSessionTimeoutMs,
// consumerGroupHeartbeatIntervalMs @v8.0.0 (GroupMetadataManagerTest.
// testConsumerGroupDynamicConfigs).
func TestConsumerGroupConfigs(t *testing.T) {
	src := testdataText(t, "consumer-timeline.yaml") + "    configs: {consumer.session.timeout.ms: 50000, consumer.heartbeat.interval.ms: 6000}\n" +
		"faults: [{at: 60s, crash: g-1}]\n"
	tr := consumerTrace(t, src)
	var lastHB, prevHB, removed time.Duration
	var gaps []time.Duration
	for _, e := range tr {
		if e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIConsumerGroupHeartbeat && e.Peer == "g-1" && e.At < sim60s {
			lastHB = time.Duration(e.At)
		}
		if e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIConsumerGroupHeartbeat && e.Peer == "g-0" && e.At > 30e9 && e.At < sim60s {
			if prevHB != 0 {
				gaps = append(gaps, time.Duration(e.At)-prevHB)
			}
			prevHB = time.Duration(e.At)
		}
		if e.Kind == protocol.EvMemberRemoved && removed == 0 {
			removed = time.Duration(e.At)
		}
	}
	require.NotZero(t, lastHB)
	assert.Equal(t, lastHB+50*time.Second, removed, "fenced at last heartbeat + the group's session timeout")
	require.NotEmpty(t, gaps)
	for _, g := range gaps {
		assert.Equal(t, 6*time.Second, g, "the group's heartbeat interval")
	}
}

// TestConsumerCostsDeferAnswers: with the consumer-group coordinator's
// costs (ccoord.Costs: the shard's event loop busy with the first
// heartbeat, the first write committed 2 s later; CoordinatorRuntime's
// deferred write events, v8.0.0), the first member's first answer leaves
// 2.8 s after its heartbeat arrived, and the next members', which joined
// meanwhile, not before it (answers in log order). Without the costs each
// answer leaves at its heartbeat's arrival.
func TestConsumerCostsDeferAnswers(t *testing.T) {
	src := strings.Replace(testdataText(t, "consumer-timeline.yaml"), "profile: kafka-4.2}",
		"profile: kafka-4.2, consumer.first.target.time: 800ms, consumer.first.append.latency: 2s}", 1)
	require.Contains(t, src, "consumer.first.append.latency")
	for _, costs := range []bool{false, true} {
		s := src
		if !costs {
			s = testdataText(t, "consumer-timeline.yaml")
		}
		tr := consumerTrace(t, s)
		arrived, answered := map[string]time.Duration{}, map[string]time.Duration{}
		for _, e := range tr {
			if e.API != protocol.APIConsumerGroupHeartbeat {
				continue
			}
			at := time.Duration(e.At)
			if _, ok := arrived[e.Peer]; !ok && e.Kind == tracing.EvDeliver && e.Req {
				arrived[e.Peer] = at
			}
			if _, ok := answered[e.Peer]; !ok && e.Kind == tracing.EvSend && !e.Req {
				answered[e.Peer] = at
			}
		}
		require.Len(t, arrived, 3)
		for _, m := range []string{"g-0", "g-1", "g-2"} {
			require.Contains(t, answered, m)
			if !costs {
				assert.Equal(t, arrived[m], answered[m], "%s: answered at once", m)
			}
		}
		if costs {
			assert.Equal(t, arrived["g-0"]+2800*time.Millisecond, answered["g-0"], "first heartbeat: 800 ms on the loop, 2 s to commit")
			for _, m := range []string{"g-1", "g-2"} {
				require.Less(t, arrived[m], answered["g-0"], "%s joined before the first commit", m)
				assert.Equal(t, answered["g-0"], answered[m], "%s: its records commit behind the first write", m)
			}
		}
	}
}
