package harness

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestSingleOwnerCheckerLayout: the single-owner checker's dense layout
// (an owner array per generation) finds what the map it replaced
// found: a partition assigned to two members in one generation, also when
// the second assignment of an old generation arrives after newer
// generations, and also for a topic outside the group's partitions (the
// map it falls back to); re-assignment to the same member, and the same
// partition in different generations, are not violations.
func TestSingleOwnerCheckerLayout(t *testing.T) {
	v := partitionsView{parts: []protocol.TopicPartition{
		{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}, {Topic: "b", Partition: 1}, {Topic: "b", Partition: 2},
	}}
	c := newSingleOwnerChecker()
	assigned := func(node string, gen int32, tps ...protocol.TopicPartition) string {
		return c.check(v, &TraceEvent{Event: protocol.Event{Kind: protocol.EvAssigned, Node: node, Group: "g", Gen: gen, Partitions: tps}, Slot: viewSlot(node)})
	}
	a1, b2, x0 := protocol.TopicPartition{Topic: "a", Partition: 1}, protocol.TopicPartition{Topic: "b", Partition: 2}, protocol.TopicPartition{Topic: "x", Partition: 0}
	b9 := protocol.TopicPartition{Topic: "b", Partition: 9}

	assert.Empty(t, assigned("g-0", 1, a1, b2))
	assert.Empty(t, assigned("g-0", 1, a1), "the same owner again")
	assert.Empty(t, assigned("g-1", 2, a1, b2), "another generation")
	assert.Empty(t, assigned("g-2", 3, b2))
	assert.Equal(t, "b-2 assigned to g-0 and g-1 in generation 1", assigned("g-1", 1, b2), "a late assignment of an old generation")
	assert.Equal(t, "a-1 assigned to g-1 and g-2 in generation 2", assigned("g-2", 2, a1))
	assert.Empty(t, assigned("g-0", -1, a1), "NO_GENERATION is not checked")
	assert.Empty(t, assigned("g-1", -1, a1))

	// Outside the group's partitions: an unknown topic, a partition past
	// the topic's count.
	assert.Empty(t, assigned("g-0", 4, x0, b9))
	assert.Equal(t, "x-0 assigned to g-0 and g-3 in generation 4", assigned("g-3", 4, x0))
	assert.Equal(t, "b-9 assigned to g-0 and g-3 in generation 4", assigned("g-3", 4, b9))

	assert.Len(t, c.groups["g"].gens[1], 5, "one owner slot per partition of the group")
	assert.Equal(t, "b-2 assigned to g-3 and g-1 in generation 5", func() string {
		assigned("g-3", 5, b2)
		return assigned("g-1", 5, b2)
	}(), "a non-slot owner first, a slot second")
}

// TestGenerationCheckerBySlot: the monotonic-generations checker keeps a
// member's last joined generation by slot (TraceEvent.Member) and by name for other
// nodes, and forgets it at a new process, a reset and a coordinator move.
func TestGenerationCheckerBySlot(t *testing.T) {
	v := partitionsView{}
	c := &generationChecker{coord: map[string]int32{}, client: map[string]clientGen{}}
	ev := func(kind protocol.EventKind, node string, gen int32) string {
		return c.check(v, &TraceEvent{Event: protocol.Event{Kind: kind, Node: node, Group: "g", Gen: gen}, Slot: viewSlot(node)})
	}
	for _, node := range []string{"g-1", "g-3"} {
		assert.Empty(t, ev(protocol.EvJoined, node, 3))
		assert.Equal(t, "client "+node+": joined generation 2 after 3", ev(protocol.EvJoined, node, 2))
		assert.Empty(t, ev(protocol.EvGenerationReset, node, -1))
		assert.Empty(t, ev(protocol.EvJoined, node, 2), "a reset starts over")
		assert.Empty(t, ev(tracing.EvProcess, node, 0))
		assert.Empty(t, ev(protocol.EvJoined, node, 1), "a new process starts over")
		assert.Empty(t, ev(tracing.EvBrokerRole, "broker-1", 0))
		assert.Empty(t, ev(protocol.EvJoined, node, 0), "a coordinator move starts over")
		assert.Equal(t, "client "+node+": joined generation -1 after 0", ev(protocol.EvJoined, node, -1))
	}
	assert.Len(t, c.client, 1, "g-3 by name")
	assert.Len(t, c.slots, 2, "g-1 by slot")
}

// partitionsView is a runView that knows only group g's partitions and
// three member slots, g-0, g-1 and g-2 (g-3 is not a slot: the checker's
// fallback by name): what the single-owner checker reads (any other
// question panics on the nil embedded runView).
type partitionsView struct {
	runView
	parts []protocol.TopicPartition
}

var partitionsViewSlots = []string{"g-0", "g-1", "g-2"}

// viewSlot is the TraceEvent.Slot of an event node emitted: its index in
// partitionsViewSlots + 1, 0 for another node.
func viewSlot(node string) int32 {
	return int32(slices.Index(partitionsViewSlots, node)) + 1
}

func (v partitionsView) slotName(i int32) string { return partitionsViewSlots[i] }

func (v partitionsView) partitions(group string) []protocol.TopicPartition {
	if group == "g" {
		return v.parts
	}
	return nil
}

// holdersView is a runView in which partition t-3 of c-0's consumer group
// is held by the members listed (what the exclusive-ownership checker
// reads).
type holdersView struct {
	runView
	held []string
}

func (v holdersView) sharedOwnership(int32) bool { return len(v.held) > 1 }

func (v holdersView) holders(_ int32, tp protocol.TopicPartition) []string {
	if tp == (protocol.TopicPartition{Topic: "t", Partition: 3}) {
		return v.held
	}
	return nil
}

// TestExclusiveOwnerChecker: two live members the coordinator both gave a
// partition to are a violation (kafka-consumer-protocol.md §7), one is
// not; the checker judges from its runView alone.
func TestExclusiveOwnerChecker(t *testing.T) {
	c := &exclusiveOwnerChecker{}
	tps := []protocol.TopicPartition{{Topic: "t", Partition: 2}, {Topic: "t", Partition: 3}}
	assigned := &TraceEvent{Event: protocol.Event{Kind: protocol.EvAssigned, Node: "c-1", Group: "c", Partitions: tps}, Slot: 2}
	assert.Equal(t, "t-3 owned at once by c-0 and c-1, both members the coordinator gave it to",
		c.check(holdersView{held: []string{"c-0", "c-1"}}, assigned))
	assert.Empty(t, c.check(holdersView{held: []string{"c-1"}}, assigned))
	revoked := &TraceEvent{Event: protocol.Event{Kind: protocol.EvRevoked, Node: "c-1", Group: "c", Partitions: tps}}
	assert.Empty(t, c.check(holdersView{held: []string{"c-0", "c-1"}}, revoked), "only assignments are judged")
}

// TestCheckersJudgeEachGroupIncarnation: an emptied classic group is
// deleted when a consumer-protocol member joins, and a new consumer group
// takes its id at epoch 1 (GroupMetadataManager.getOrMaybeCreateConsumerGroup
// → maybeDeleteEmptyClassicGroup @v8.0.0). That is Kafka's behaviour: the
// generation and single-owner checkers judge each incarnation on its own
// (they fired "generation 1 after 3" and a double owner in generation 1
// before).
func TestCheckersJudgeEachGroupIncarnation(t *testing.T) {
	const src = `
name: recreate-as-consumer
duration: 120s
timing: exact
coordinator: {brokers: 1, profile: kafka-4.0}
topics:
  - {name: orders, partitions: 12}
groups:
  - id: payments
    members: 4
    subscribe: [orders]
    client: {profile: kafka-4.0}
    start: {at: 0s, stagger: 100ms}
faults:
  - {at: 30s, rolling-restart: payments, interval: 10ms, downtime: 20s, set: {group.protocol: consumer}}
`
	for _, seed := range []uint64{1, 2, 3} {
		res := run(t, simtest.Parse(t, src), seed, Options{KeepTrace: true})
		recreated := 0
		for _, e := range res.Trace {
			if e.Kind == tracing.EvGroupType && e.Conversion == reasonGroupRecreated {
				recreated++
				assert.Greater(t, e.Gen, int32(1), "seed %d: the classic group had rebalanced", seed)
			}
		}
		require.Equal(t, 1, recreated, "seed %d: the scenario recreates the group", seed)
		assert.Empty(t, res.Summary.InvariantViolations, "seed %d", seed)
		assert.True(t, res.Summary.Groups[0].StableAtEnd, "seed %d", seed)
	}
}
