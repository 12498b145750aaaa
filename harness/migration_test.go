package harness

import (
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
)

// testdata/migration-timeline.yaml: a classic cooperative-sticky group of 4
// upgraded member by member to the consumer protocol (15 s apart from 20 s,
// each down 5 s so the classic group is Stable again when the new process
// joins), then downgraded (10 s apart from 80 s, each down 1 s):
// kafka-consumer-protocol.md §4.

// owner tracks each member's partitions from its assigned/revoked events.
type ownership map[string][]protocol.TopicPartition

func (o ownership) apply(e *TraceEvent) {
	switch e.Kind {
	case protocol.EvAssigned:
		o[e.Node] = slices.Clone(e.Partitions)
	case protocol.EvRevoked:
		o[e.Node] = slices.DeleteFunc(slices.Clone(o[e.Node]), func(p protocol.TopicPartition) bool { return slices.Contains(e.Partitions, p) })
	case tracing.EvProcess:
		if e.State != "started" {
			delete(o, e.Node)
		}
	}
}

func intersectTP(a, b []protocol.TopicPartition) []protocol.TopicPartition {
	var out []protocol.TopicPartition
	for _, p := range a {
		if slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

// TestMigrationTimeline: the group's type flips to consumer at the first
// consumer-protocol member's first heartbeat (the upgrade, at the group's
// classic generation); the classic members keep their partitions through
// the upgrade and give up only those the new member's target takes; the
// group flips back to classic when the last consumer-protocol member
// leaves (the downgrade at its LeaveGroup heartbeat), and the classic
// members then rebalance classically to a generation with all four.
func TestMigrationTimeline(t *testing.T) {
	res := run(t, simtest.Parse(t, testdataText(t, "migration-timeline.yaml")), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	tr := res.Trace
	var types []TraceEvent
	for _, e := range tr {
		if e.Kind == tracing.EvGroupType {
			types = append(types, e)
		}
	}
	require.Len(t, types, 2, "one upgrade, one downgrade")
	up, down := types[0], types[1]
	assert.Equal(t, "consumer", up.State)
	assert.Equal(t, "upgrade", up.Reason)
	assert.Equal(t, "classic", down.State)
	assert.Equal(t, "downgrade", down.Reason)

	// The upgrade is at the first ConsumerGroupHeartbeat the broker gets,
	// from g-0's new process (started at 25 s), at the classic generation.
	var firstHB *TraceEvent
	lastClassicGen := int32(-1)
	o := ownership{}
	var atUpgrade ownership
	for i := range tr {
		e := &tr[i]
		if firstHB == nil && e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIConsumerGroupHeartbeat {
			firstHB = e
		}
		if e.At < up.At && e.Kind == protocol.EvGenerationComplete {
			lastClassicGen = e.Gen
		}
		if e == &tr[slices.IndexFunc(tr, func(x TraceEvent) bool { return x.Kind == tracing.EvGroupType })] {
			atUpgrade = ownership{}
			for k, v := range o {
				atUpgrade[k] = slices.Clone(v)
			}
		}
		o.apply(e)
	}
	require.NotNil(t, firstHB)
	assert.Equal(t, "g-0", firstHB.Peer)
	assert.Equal(t, firstHB.At, up.At)
	assert.GreaterOrEqual(t, time.Duration(up.At), 25*time.Second)
	assert.Less(t, time.Duration(up.At), 26*time.Second)
	assert.Equal(t, lastClassicGen, up.Gen, "the consumer group epoch starts at the classic generation")
	require.Len(t, atUpgrade, 3, "g-1..g-3 are classic members at the upgrade")

	// Until g-1 closes at 35 s, a classic member gives up only partitions
	// that g-0 (consumer) then gets, and keeps the rest.
	o = ownership{}
	var revoked []protocol.TopicPartition
	for i := range tr {
		e := &tr[i]
		if e.At > up.At && e.At < protocol.Instant(35*time.Second) && e.Kind == protocol.EvRevoked && e.Node != "g-0" {
			revoked = append(revoked, e.Partitions...)
			assert.Subset(t, atUpgrade[e.Node], e.Partitions, "%s revokes only what it held at the upgrade", e.Node)
		}
		if e.At < protocol.Instant(35*time.Second) {
			o.apply(e)
		}
	}
	for m, held := range atUpgrade {
		assert.Subset(t, held, o[m], "%s keeps (a subset of) what it held at the upgrade until reassigned", m)
	}
	require.NotEmpty(t, revoked, "g-0's target takes partitions from the classic members")
	assert.ElementsMatch(t, o["g-0"], revoked, "what the classic members gave up went to g-0, and only that")
	all := len(o["g-0"])
	for m := range atUpgrade {
		all += len(o[m])
		assert.Empty(t, intersectTP(o[m], o["g-0"]))
	}
	assert.Equal(t, 12, all, "every partition is owned again before the next restart")

	// The downgrade: when g-3, the last consumer-protocol member, leaves
	// at 110 s; then a classic rebalance (reason downgrade) completes with
	// all four members, the new process of g-3 included.
	assert.Equal(t, 110*time.Second, time.Duration(down.At).Truncate(time.Second))
	var rebalance, complete *TraceEvent
	for i := range tr {
		e := &tr[i]
		if e.At >= down.At && rebalance == nil && e.Kind == protocol.EvRebalanceStart {
			rebalance = e
		}
		if rebalance != nil && complete == nil && e.Kind == protocol.EvGenerationComplete {
			complete = e
		}
	}
	require.NotNil(t, rebalance)
	assert.Equal(t, "downgrade", rebalance.Reason)
	assert.Equal(t, down.At, rebalance.At)
	require.NotNil(t, complete)
	assert.Equal(t, down.Gen+1, complete.Gen)
	g := res.Summary.Groups[0]
	assert.True(t, g.StableAtEnd)
	assert.Zero(t, g.Evictions)
	assert.Zero(t, g.DoubleOwnedPartitionSeconds)
}

// testdata/migration-swarm.yaml: a classic cooperative group of 5 (two cohorts, one
// static) upgraded member by member to the consumer protocol while the
// swarm crashes, pauses and cuts members, loses packets and moves the
// coordinator; the second rolling restart moves them back (downgrade).

// TestMigrationSwarmNoPartitionOwnedTwice: over a few hundred swarm seeds
// of a group migrating classic → consumer → classic, no partition is owned
// at any instant by two processes that the consumer-group coordinator both
// counts as its owner (the exclusive-ownership checker, classic members of
// the consumer group included; Kafka 4.0 cooperative and Kafka 4.3 eager),
// no other invariant breaks and no member
// stops on a fatal error but Kafka's UNRELEASED_INSTANCE_ID after a static
// member's crash.
func TestMigrationSwarmNoPartitionOwnedTwice(t *testing.T) {
	for _, v := range []struct{ profile, assignor string }{{"kafka-4.0", "cooperative-sticky"}, {"kafka-4.3", "range"}} {
		t.Run(v.profile+"/"+v.assignor, func(t *testing.T) {
			src := strings.ReplaceAll(testdataText(t, "migration-swarm.yaml"), "kafka-4.0", v.profile)
			src = strings.ReplaceAll(src, "[cooperative-sticky]", "["+v.assignor+"]")
			migrationSwarmSeeds(t, simtest.Parse(t, src))
		})
	}
}

func migrationSwarmSeeds(t *testing.T, sc *scenario.Scenario) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	upgraded, downgraded := 0, 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		res := run(t, sc, seed, Options{KeepTrace: true})
		requireNoViolations(t, seed, res, true)
		// No member stops on a fatal error, except a consumer-protocol
		// static member that crashed (no leave with epoch -2) and came back
		// within the session: Kafka refuses it UNRELEASED_INSTANCE_ID
		// (kafka-consumer-protocol.md §2.10), migration or not.
		for _, f := range res.Summary.Groups[0].FatalErrors {
			require.True(t, strings.HasSuffix(f, ": UNRELEASED_INSTANCE_ID"), "seed %d: %s", seed, f)
		}
		for _, e := range res.Trace {
			if e.Kind == tracing.EvGroupType && e.Reason == "upgrade" {
				upgraded++
			}
			if e.Kind == tracing.EvGroupType && strings.HasPrefix(e.Reason, "downgrade") {
				downgraded++
			}
		}
	}
	t.Logf("%d upgrades, %d downgrades over %d seeds", upgraded, downgraded, seeds)
	assert.GreaterOrEqual(t, upgraded, seeds/2, "most seeds upgrade")
	assert.GreaterOrEqual(t, downgraded, seeds/2, "most seeds downgrade")
}

// TestMigrationSameSeedSameTrace: determinism of a migrating group.
func TestMigrationSameSeedSameTrace(t *testing.T) {
	requireSameSeedSameTrace(t, simtest.Parse(t, testdataText(t, "migration-swarm.yaml")), 11)
}

// TestMigrationStaticRollingUpgrade: static members restarted with the
// consumer protocol replace their classic incarnations at once
// (getOrMaybeSubscribeStaticConsumerGroupMember: no UNRELEASED_INSTANCE_ID
// against a classic member) and keep their partitions: the group is
// upgraded with no rebalance at all (testConsumerGroupHeartbeatFromExistingClassicStaticMember).
func TestMigrationStaticRollingUpgrade(t *testing.T) {
	res := run(t, simtest.Parse(t, `
name: static-migration
duration: 120s
coordinator: {brokers: 1, profile: kafka-4.0}
topics: [{name: t, partitions: 12}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-4.0, partition.assignment.strategy: [cooperative-sticky], group.instance.id: true}
faults:
  - {at: 20s, rolling-restart: g, interval: 15s, downtime: 2s, set: {group.protocol: consumer}}
`), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	g := res.Summary.Groups[0]
	assert.Empty(t, g.FatalErrors)
	assert.Equal(t, 3, g.Fences, "each new process replaced its static member")
	assert.Equal(t, 1, g.Generations, "no rebalance after the startup one")
	assert.True(t, g.StableAtEnd)
	n := 0
	for _, e := range res.Trace {
		if e.Kind == tracing.EvGroupType {
			n++
			assert.Equal(t, "upgrade", e.Reason)
		}
	}
	assert.Equal(t, 1, n)
}

// TestMigrationRefusedUnderPolicy: with group.consumer.migration.policy
// downgrade (or disabled) a non-empty classic group is not upgraded
// (validateOnlineUpgrade): the first consumer-protocol member gets
// GROUP_ID_NOT_FOUND, fatal for the Java consumer, and the group stays
// classic with the other members.
func TestMigrationRefusedUnderPolicy(t *testing.T) {
	for _, policy := range []string{"downgrade", "disabled"} {
		t.Run(policy, func(t *testing.T) {
			res := run(t, simtest.Parse(t, `
name: refused
duration: 60s
coordinator: {brokers: 1, profile: kafka-4.0, group.consumer.migration.policy: `+policy+`}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-4.0}
faults:
  - {at: 20s, rolling-restart: g, interval: 100s, downtime: 1s, set: {group.protocol: consumer}}
`), 1, Options{KeepTrace: true})
			g := res.Summary.Groups[0]
			assert.Equal(t, []string{"g-0: GROUP_ID_NOT_FOUND"}, g.FatalErrors)
			var refused []TraceEvent
			for _, e := range res.Trace {
				if e.Kind == tracing.EvGroupType {
					refused = append(refused, e)
				}
			}
			require.Len(t, refused, 1)
			assert.Equal(t, "refused", refused[0].Reason)
			assert.Contains(t, refused[0].Detail, "online upgrade is disabled")
			assert.True(t, g.StableAtEnd, "the classic group of the two others is Stable")
		})
	}
}
