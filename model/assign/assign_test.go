// Tests for the assignors. Goal: each assignor gives Kafka's answer on the
// cases of Kafka's own tests, and keeps its invariants on random inputs.
// Method: named table cases, each citing the Java test it comes from
// (clients/src/test/java/org/apache/kafka/clients/consumer/...), then
// property tests over seeded random groups, and a differential test of range
// and roundrobin against deliberately naive reference implementations.
package assign

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tp(topic string, p int32) protocol.TopicPartition {
	return protocol.TopicPartition{Topic: topic, Partition: p}
}

func tps(ps ...protocol.TopicPartition) []protocol.TopicPartition {
	if ps == nil {
		return []protocol.TopicPartition{}
	}
	return ps
}

func mem(id string, topics ...string) Member {
	return Member{ID: id, Subscription: protocol.Subscription{Topics: topics, GenerationID: -1}}
}

func owning(m Member, gen int32, owned ...protocol.TopicPartition) Member {
	m.Subscription.OwnedPartitions = owned
	m.Subscription.GenerationID = gen
	return m
}

func static(m Member, instance string) Member {
	m.InstanceID = instance
	return m
}

type assignCase struct {
	name    string // Java test method
	members []Member
	topics  []Topic
	want    [][]protocol.TopicPartition
}

func runCases(t *testing.T, a Assignor, cases []assignCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Assign(tc.members, tc.topics)
			require.Len(t, got, len(tc.members))
			for i := range got {
				assert.Equal(t, tps(tc.want[i]...), tps(got[i]...), "member %s", tc.members[i].ID)
			}
		})
	}
}

// Kafka: RangeAssignorTest.testOneConsumerNoTopic @3.7.0
// Kafka: RangeAssignorTest.testOneConsumerNonexistentTopic @3.7.0
// Kafka: RangeAssignorTest.testOneConsumerOneTopic @3.7.0
// Kafka: RangeAssignorTest.testOnlyAssignsPartitionsFromSubscribedTopics @3.7.0
// Kafka: RangeAssignorTest.testOneConsumerMultipleTopics @3.7.0
// Kafka: RangeAssignorTest.testTwoConsumersOneTopicOnePartition @3.7.0
// Kafka: RangeAssignorTest.testTwoConsumersOneTopicTwoPartitions @3.7.0
// Kafka: RangeAssignorTest.testMultipleConsumersMixedTopics @3.7.0
// Kafka: RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions @3.7.0
// Kafka: RangeAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions @3.7.0
// Kafka: RangeAssignorTest.testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions @3.7.0
func TestRangeAssignor(t *testing.T) {
	// RangeAssignorTest
	runCases(t, RangeAssignor{}, []assignCase{
		{"testOneConsumerNoTopic", []Member{mem("c1")}, nil, [][]protocol.TopicPartition{nil}},
		{"testOneConsumerNonexistentTopic", []Member{mem("c1", "topic")}, nil, [][]protocol.TopicPartition{nil}},
		{"testOneConsumerOneTopic", []Member{mem("c1", "topic")}, []Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		{"testOnlyAssignsPartitionsFromSubscribedTopics", []Member{mem("c1", "topic")}, []Topic{{"topic", 3}, {"otherTopic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		{"testOneConsumerMultipleTopics", []Member{mem("c1", "topic1", "topic2")}, []Topic{{"topic1", 1}, {"topic2", 2}},
			[][]protocol.TopicPartition{{tp("topic1", 0), tp("topic2", 0), tp("topic2", 1)}}},
		{"testTwoConsumersOneTopicOnePartition", []Member{mem("c1", "topic"), mem("c2", "topic")}, []Topic{{"topic", 1}},
			[][]protocol.TopicPartition{{tp("topic", 0)}, nil}},
		{"testTwoConsumersOneTopicTwoPartitions", []Member{mem("c2", "topic"), mem("c1", "topic")}, []Topic{{"topic", 2}},
			[][]protocol.TopicPartition{{tp("topic", 1)}, {tp("topic", 0)}}},
		{"testMultipleConsumersMixedTopics",
			[]Member{mem("consumer1", "topic1"), mem("consumer2", "topic1", "topic2"), mem("consumer3", "topic1")},
			[]Topic{{"topic1", 3}, {"topic2", 2}},
			[][]protocol.TopicPartition{{tp("topic1", 0)}, {tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)}, {tp("topic1", 2)}}},
		{"testTwoConsumersTwoTopicsSixPartitions",
			[]Member{mem("consumer1", "topic1", "topic2"), mem("consumer2", "topic1", "topic2")},
			[]Topic{{"topic1", 3}, {"topic2", 3}},
			[][]protocol.TopicPartition{
				{tp("topic1", 0), tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)},
				{tp("topic1", 2), tp("topic2", 2)}}},
		// Static members sort by group.instance.id before member id (MemberInfo.compareTo, KIP-345).
		{"testTwoStaticConsumersTwoTopicsSixPartitions",
			[]Member{static(mem("consumer-a", "topic1", "topic2"), "instance2"), static(mem("consumer-b", "topic1", "topic2"), "instance1")},
			[]Topic{{"topic1", 3}, {"topic2", 3}},
			[][]protocol.TopicPartition{
				{tp("topic1", 2), tp("topic2", 2)},
				{tp("topic1", 0), tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)}}},
		// Static before dynamic (MemberInfo.compareTo): consumer-b has an
		// instance id, so it ranks before consumer-a.
		{"testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions",
			[]Member{mem("consumer-a", "topic1", "topic2"), static(mem("consumer-b", "topic1", "topic2"), "instance1")},
			[]Topic{{"topic1", 3}, {"topic2", 3}},
			[][]protocol.TopicPartition{
				{tp("topic1", 2), tp("topic2", 2)},
				{tp("topic1", 0), tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)}}},
	})
}

// Kafka: RoundRobinAssignorTest.testOneConsumerNoTopic @3.7.0
// Kafka: RoundRobinAssignorTest.testOneConsumerNonexistentTopic @3.7.0
// Kafka: RoundRobinAssignorTest.testOneConsumerOneTopic @3.7.0
// Kafka: RoundRobinAssignorTest.testOnlyAssignsPartitionsFromSubscribedTopics @3.7.0
// Kafka: RoundRobinAssignorTest.testTwoConsumersOneTopicOnePartition @3.7.0
// Kafka: RoundRobinAssignorTest.testTwoConsumersOneTopicTwoPartitions @3.7.0
// Kafka: RoundRobinAssignorTest.testMultipleConsumersMixedTopics @3.7.0
// Kafka: AbstractStickyAssignorTest.testTwoConsumersTwoTopicsSixPartitions @3.7.0
// Kafka: RoundRobinAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions @3.7.0
func TestRoundRobinAssignor(t *testing.T) {
	// RoundRobinAssignorTest
	runCases(t, RoundRobinAssignor{}, []assignCase{
		{"testOneConsumerNoTopic", []Member{mem("c1")}, nil, [][]protocol.TopicPartition{nil}},
		{"testOneConsumerNonexistentTopic", []Member{mem("c1", "topic")}, nil, [][]protocol.TopicPartition{nil}},
		{"testOneConsumerOneTopic", []Member{mem("c1", "topic")}, []Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		{"testOnlyAssignsPartitionsFromSubscribedTopics", []Member{mem("c1", "topic")}, []Topic{{"topic", 3}, {"otherTopic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		{"testTwoConsumersOneTopicOnePartition", []Member{mem("c1", "topic"), mem("c2", "topic")}, []Topic{{"topic", 1}},
			[][]protocol.TopicPartition{{tp("topic", 0)}, nil}},
		{"testTwoConsumersOneTopicTwoPartitions", []Member{mem("c1", "topic"), mem("c2", "topic")}, []Topic{{"topic", 2}},
			[][]protocol.TopicPartition{{tp("topic", 0)}, {tp("topic", 1)}}},
		{"testMultipleConsumersMixedTopics",
			[]Member{mem("consumer1", "topic1"), mem("consumer2", "topic1", "topic2"), mem("consumer3", "topic1")},
			[]Topic{{"topic1", 3}, {"topic2", 2}},
			[][]protocol.TopicPartition{{tp("topic1", 0)}, {tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)}, {tp("topic1", 2)}}},
		{"testTwoConsumersTwoTopicsSixPartitions",
			[]Member{mem("consumer1", "topic1", "topic2"), mem("consumer2", "topic1", "topic2")},
			[]Topic{{"topic1", 3}, {"topic2", 3}},
			[][]protocol.TopicPartition{
				{tp("topic1", 0), tp("topic1", 2), tp("topic2", 1)},
				{tp("topic1", 1), tp("topic2", 0), tp("topic2", 2)}}},
		{"testTwoStaticConsumersTwoTopicsSixPartitions",
			[]Member{static(mem("consumer-a", "topic1", "topic2"), "instance2"), static(mem("consumer-b", "topic1", "topic2"), "instance1")},
			[]Topic{{"topic1", 3}, {"topic2", 3}},
			[][]protocol.TopicPartition{
				{tp("topic1", 1), tp("topic2", 0), tp("topic2", 2)},
				{tp("topic1", 0), tp("topic1", 2), tp("topic2", 1)}}},
	})
}

// Kafka: AbstractStickyAssignorTest.testOneConsumerNoTopic @3.7.0
// Kafka: AbstractStickyAssignorTest.testOneConsumerNonexistentTopic @3.7.0
// Kafka: AbstractStickyAssignorTest.testOneConsumerOneTopic @3.7.0
// Kafka: AbstractStickyAssignorTest.testTwoConsumersOneTopicTwoPartitions @3.7.0
// Kafka: AbstractStickyAssignorTest.testAddRemoveConsumerOneTopic @3.7.0
// Kafka: AbstractStickyAssignorTest.testMultipleConsumersMixedTopicSubscriptions @3.7.0
// Kafka: StickyAssignorTest.testAssignmentWithConflictingPreviousGenerations @3.7.0
// Kafka: StickyAssignorTest.testAssignmentWithMultipleGenerations1 @3.7.0
func TestStickyAssignor(t *testing.T) {
	t6 := []Topic{{"topic", 6}}
	// AbstractStickyAssignorTest / StickyAssignorTest
	runCases(t, StickyAssignor{}, []assignCase{
		{"testOneConsumerNoTopic", []Member{mem("c1")}, nil, [][]protocol.TopicPartition{nil}},
		{"testOneConsumerNonexistentTopic", []Member{mem("c1", "topic")}, nil, [][]protocol.TopicPartition{nil}},
		{"testOneConsumerOneTopic", []Member{mem("c1", "topic")}, []Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		{"testTwoConsumersOneTopicTwoPartitions", []Member{mem("c1", "topic"), mem("c2", "topic")}, []Topic{{"topic", 2}},
			[][]protocol.TopicPartition{{tp("topic", 0)}, {tp("topic", 1)}}},
		{"testAddRemoveConsumerOneTopic (add consumer2)",
			[]Member{owning(mem("consumer1", "topic"), 1, tp("topic", 0), tp("topic", 1), tp("topic", 2)), mem("consumer2", "topic")},
			[]Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1)}, {tp("topic", 2)}}},
		{"testAddRemoveConsumerOneTopic (remove consumer1)",
			[]Member{owning(mem("consumer2", "topic"), 2, tp("topic", 2))},
			[]Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		{"testMultipleConsumersMixedTopicSubscriptions (general path)",
			[]Member{mem("consumer1", "topic1"), mem("consumer2", "topic1", "topic2"), mem("consumer3", "topic1")},
			[]Topic{{"topic1", 3}, {"topic2", 2}},
			[][]protocol.TopicPartition{{tp("topic1", 0), tp("topic1", 2)}, {tp("topic2", 0), tp("topic2", 1)}, {tp("topic1", 1)}}},
		// Same-generation claims on topic-3 are invalidated for both; the
		// newer generation wins topic-0 and topic-4 (KAFKA-12984 fix).
		{"testAssignmentWithConflictingPreviousGenerations",
			[]Member{
				owning(mem("consumer1", "topic"), 1, tp("topic", 0), tp("topic", 1), tp("topic", 4)),
				owning(mem("consumer2", "topic"), 2, tp("topic", 0), tp("topic", 2), tp("topic", 3)),
				owning(mem("consumer3", "topic"), 2, tp("topic", 3), tp("topic", 4), tp("topic", 5)),
			}, t6,
			[][]protocol.TopicPartition{{tp("topic", 1), tp("topic", 3)}, {tp("topic", 0), tp("topic", 2)}, {tp("topic", 4), tp("topic", 5)}}},
		{"testAssignmentWithMultipleGenerations1 (stable stays put)",
			[]Member{
				owning(mem("consumer1", "topic"), 1, tp("topic", 0), tp("topic", 5)),
				owning(mem("consumer2", "topic"), 1, tp("topic", 1), tp("topic", 4)),
				owning(mem("consumer3", "topic"), 1, tp("topic", 2), tp("topic", 3)),
			}, t6,
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 5)}, {tp("topic", 1), tp("topic", 4)}, {tp("topic", 2), tp("topic", 3)}}},
		{"owned partition of an unsubscribed topic dropped (no Kafka test of its own)",
			[]Member{
				owning(mem("consumer1", "topic1"), 1, tp("topic1", 0), tp("topic2", 0)),
				owning(mem("consumer2", "topic1"), 1, tp("topic1", 1)),
			}, []Topic{{"topic1", 2}, {"topic2", 1}},
			[][]protocol.TopicPartition{{tp("topic1", 0)}, {tp("topic1", 1)}}},
	})
}

// Kafka: AbstractStickyAssignorTest.testOneConsumerOneTopic @3.7.0
// Kafka: AbstractStickyAssignorTest.testAddRemoveConsumerOneTopic @3.7.0
// Kafka: CooperativeStickyAssignorTest.testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer @3.7.0
func TestCooperativeStickyAssignor(t *testing.T) {
	// CooperativeStickyAssignorTest
	runCases(t, CooperativeStickyAssignor{}, []assignCase{
		{"testOneConsumerOneTopic", []Member{mem("c1", "topic")}, []Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1), tp("topic", 2)}}},
		// The partition moving to consumer2 is first revoked: consumer2 gets
		// nothing this round (adjustAssignment).
		{"testAddRemoveConsumerOneTopic (add consumer2, first round)",
			[]Member{owning(mem("consumer1", "topic"), 1, tp("topic", 0), tp("topic", 1), tp("topic", 2)), mem("consumer2", "topic")},
			[]Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1)}, nil}},
		{"testAddRemoveConsumerOneTopic (add consumer2, second round)",
			[]Member{owning(mem("consumer1", "topic"), 2, tp("topic", 0), tp("topic", 1)), owning(mem("consumer2", "topic"), 2)},
			[]Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1)}, {tp("topic", 2)}}},
		{"testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer",
			[]Member{
				owning(mem("consumer1", "topic"), 1, tp("topic", 0), tp("topic", 1)),
				owning(mem("consumer2", "topic"), 1, tp("topic", 0), tp("topic", 2)),
				owning(mem("consumer3", "topic"), 1),
			}, []Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 1)}, {tp("topic", 2)}, nil}},
		// Round-robin fill up to minQuota, then one more to the first member
		// at minQuota (constrainedAssign).
		{"eager members own nothing: assigned like sticky (no Kafka test of its own)",
			[]Member{mem("consumer1", "topic"), mem("consumer2", "topic")},
			[]Topic{{"topic", 3}},
			[][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 2)}, {tp("topic", 1)}}},
	})
}

func TestRegistry(t *testing.T) {
	assert.True(t, sort.StringsAreSorted(Names()))
	for _, n := range Names() {
		a, ok := ByName(n)
		require.True(t, ok, n)
		assert.Equal(t, n, a.Name())
		assert.NotEmpty(t, a.SupportedProtocols())
	}
	_, ok := ByName("fair")
	assert.False(t, ok)
	c, _ := ByName(CooperativeStickyName)
	assert.Equal(t, []RebalanceProtocol{Cooperative, Eager}, c.SupportedProtocols())
	r, _ := ByName(RangeName)
	assert.Equal(t, []RebalanceProtocol{Eager}, r.SupportedProtocols())
	assert.Equal(t, "COOPERATIVE", Cooperative.String())
	assert.Equal(t, "EAGER", Eager.String())
}

// randomGroup draws a group: n members, topics, and subscriptions that are
// all equal when equal is set.
func randomGroup(r *rand.Rand, equal bool) ([]Member, []Topic) {
	nt := 1 + r.IntN(4)
	topics := make([]Topic, nt)
	for i := range topics {
		topics[i] = Topic{Name: fmt.Sprintf("t%d", i), Partitions: int32(r.IntN(30))}
	}
	n := 1 + r.IntN(25)
	members := make([]Member, n)
	all := make([]string, nt)
	for i := range all {
		all[i] = topics[i].Name
	}
	for i := range members {
		subs := all
		if !equal {
			subs = nil
			for _, t := range all {
				if r.IntN(2) == 0 {
					subs = append(subs, t)
				}
			}
			if len(subs) == 0 {
				subs = []string{all[r.IntN(nt)]}
			}
		}
		members[i] = mem(fmt.Sprintf("m%03d", r.IntN(1000)*100+i), subs...)
	}
	return members, topics
}

func subscribedPartitions(members []Member, topics []Topic) map[protocol.TopicPartition][]int {
	eligible := map[protocol.TopicPartition][]int{}
	for _, t := range topics {
		for p := int32(0); p < t.Partitions; p++ {
			for i, m := range members {
				if slices.Contains(m.Subscription.Topics, t.Name) {
					eligible[tp(t.Name, p)] = append(eligible[tp(t.Name, p)], i)
				}
			}
		}
	}
	return eligible
}

// checkEager: every subscribed partition is assigned exactly once, to a
// subscriber; lists are sorted.
func checkEager(t *testing.T, members []Member, topics []Topic, got [][]protocol.TopicPartition) map[protocol.TopicPartition]int {
	t.Helper()
	eligible := subscribedPartitions(members, topics)
	owner := map[protocol.TopicPartition]int{}
	require.Len(t, got, len(members))
	for i, l := range got {
		require.True(t, slices.IsSortedFunc(l, protocol.ComparePartitions))
		for _, p := range l {
			_, dup := owner[p]
			require.False(t, dup, "partition %v assigned twice", p)
			require.Contains(t, eligible[p], i, "partition %v to a non-subscriber", p)
			owner[p] = i
		}
	}
	require.Len(t, owner, len(eligible), "every subscribed partition assigned")
	return owner
}

// checkBalanced is AbstractStickyAssignor.isBalanced: no member could take a
// partition from a member with at least two more.
func checkBalanced(t *testing.T, members []Member, got [][]protocol.TopicPartition) {
	t.Helper()
	for i, l := range got {
		for _, p := range l {
			for j := range members {
				if j != i && slices.Contains(members[j].Subscription.Topics, p.Topic) {
					require.LessOrEqual(t, len(l), len(got[j])+1, "member %d could take %v from %d", j, p, i)
				}
			}
		}
	}
}

// TestPropertiesEager: range, roundrobin and sticky assign every subscribed
// partition exactly once; sticky is balanced within 1 when subscriptions are
// equal, and keeps a balanced previous assignment unchanged.
func TestPropertiesEager(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 400 {
		equal := iter%2 == 0
		members, topics := randomGroup(r, equal)
		for _, a := range []Assignor{RangeAssignor{}, RoundRobinAssignor{}, StickyAssignor{}, CooperativeStickyAssignor{}} {
			got := a.Assign(members, topics)
			checkEager(t, members, topics, got) // nothing owned yet: cooperative is complete too
			if _, ok := a.(RangeAssignor); ok {
				continue
			}
			if equal {
				lo, hi := len(got[0]), len(got[0])
				for _, l := range got {
					lo, hi = min(lo, len(l)), max(hi, len(l))
				}
				require.LessOrEqual(t, hi-lo, 1, "%s balance", a.Name())
			}
		}
		// Sticky across a membership change: feed the result back as owned
		// partitions, drop some members, add some, reassign.
		sticky := StickyAssignor{}
		got := sticky.Assign(members, topics)
		if !equal {
			checkBalanced(t, members, got)
		}
		next := evolve(r, members, got, 5)
		got2 := sticky.Assign(next, topics)
		checkEager(t, next, topics, got2)
		if equal {
			checkBalanced(t, next, got2)
			// Stickiness: reassigning the same group changes nothing.
			again := make([]Member, len(next))
			for i := range again {
				again[i] = owning(next[i], 6, got2[i]...)
			}
			assert.Equal(t, got2, sticky.Assign(again, topics))
		} else {
			checkBalanced(t, next, got2)
		}
	}
}

// evolve returns the next group: each member owns what it got, about a
// quarter leave, and a few new members join.
func evolve(r *rand.Rand, members []Member, got [][]protocol.TopicPartition, gen int32) []Member {
	var next []Member
	for i, m := range members {
		if len(members) > 1 && r.IntN(4) == 0 {
			continue
		}
		next = append(next, owning(m, gen, got[i]...))
	}
	if len(next) == 0 {
		next = append(next, owning(members[0], gen, got[0]...))
	}
	for k := r.IntN(4); k > 0; k-- {
		nm := members[r.IntN(len(members))]
		next = append(next, mem(fmt.Sprintf("new-%d-%d", gen, k), nm.Subscription.Topics...))
	}
	return next
}

// TestPropertiesCooperative: no partition is assigned twice, none moves
// directly from one owner to another in a round, and two rounds give a
// complete assignment (KIP-429's "revoke, then reassign").
func TestPropertiesCooperative(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := CooperativeStickyAssignor{}
	for iter := range 400 {
		members, topics := randomGroup(r, iter%2 == 0)
		got := a.Assign(members, topics)
		checkEager(t, members, topics, got)
		next := evolve(r, members, got, 2)
		prev := map[protocol.TopicPartition]string{}
		for _, m := range next {
			for _, p := range m.Subscription.OwnedPartitions {
				prev[p] = m.ID
			}
		}
		// Rounds until complete: each round no partition is assigned twice
		// or moves directly; with equal subscriptions the second round
		// completes (constrainedAssign keeps every owner within quota), in
		// general a few rounds do.
		equal := iter%2 == 0
		for round := 2; ; round++ {
			got2 := a.Assign(next, topics)
			seen := map[protocol.TopicPartition]bool{}
			for i, l := range got2 {
				for _, p := range l {
					require.False(t, seen[p], "partition %v assigned twice", p)
					seen[p] = true
					if o, ok := prev[p]; ok {
						require.Equal(t, o, next[i].ID, "partition %v moved directly from %s to %s", p, o, next[i].ID)
					}
				}
			}
			if len(seen) == len(subscribedPartitions(next, topics)) {
				checkEager(t, next, topics, got2)
				break
			}
			require.Less(t, round, 8, "cooperative rounds do not converge")
			if equal {
				require.Equal(t, 2, round, "equal subscriptions: the round after the revocations completes")
			}
			third := make([]Member, len(next))
			clear(prev)
			for i, m := range next {
				third[i] = owning(m, int32(round+1), got2[i]...)
				for _, p := range got2[i] {
					prev[p] = m.ID
				}
			}
			next = third
		}
	}
}

// naiveRange is a deliberately simple RangeAssignor: maps and sorts, no indexes.
func naiveRange(members []Member, topics []Topic) map[string][]protocol.TopicPartition {
	out := map[string][]protocol.TopicPartition{}
	for _, t := range topics {
		var subs []Member
		for _, m := range members {
			if slices.Contains(m.Subscription.Topics, t.Name) {
				subs = append(subs, m)
			}
		}
		sort.Slice(subs, func(i, j int) bool { return subs[i].ID < subs[j].ID })
		for p := int32(0); p < t.Partitions; p++ {
			// Member k gets partitions [k*n/m + ...]: find by walking quotas.
			n, m := int(t.Partitions), len(subs)
			start := 0
			for k := 0; k < m; k++ {
				size := n / m
				if k < n%m {
					size++
				}
				if int(p) >= start && int(p) < start+size {
					out[subs[k].ID] = append(out[subs[k].ID], tp(t.Name, p))
				}
				start += size
			}
		}
	}
	return out
}

// naiveRoundRobin is a deliberately simple RoundRobinAssignor.
func naiveRoundRobin(members []Member, topics []Topic) map[string][]protocol.TopicPartition {
	var all []protocol.TopicPartition
	for _, t := range topics {
		for _, m := range members {
			if slices.Contains(m.Subscription.Topics, t.Name) {
				for p := int32(0); p < t.Partitions; p++ {
					all = append(all, tp(t.Name, p))
				}
				break
			}
		}
	}
	slices.SortFunc(all, protocol.ComparePartitions)
	sorted := slices.Clone(members)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	out := map[string][]protocol.TopicPartition{}
	k := 0
	for _, p := range all {
		for !slices.Contains(sorted[k%len(sorted)].Subscription.Topics, p.Topic) {
			k++
		}
		out[sorted[k%len(sorted)].ID] = append(out[sorted[k%len(sorted)].ID], p)
		k++
	}
	return out
}

func TestDifferentialAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 300 {
		members, topics := randomGroup(r, iter%3 == 0)
		for _, c := range []struct {
			a     Assignor
			naive func([]Member, []Topic) map[string][]protocol.TopicPartition
		}{{RangeAssignor{}, naiveRange}, {RoundRobinAssignor{}, naiveRoundRobin}} {
			got := c.a.Assign(members, topics)
			want := c.naive(members, topics)
			for i, m := range members {
				w := want[m.ID]
				slices.SortFunc(w, protocol.ComparePartitions)
				require.Equal(t, tps(w...), tps(got[i]...), "%s member %s", c.a.Name(), m.ID)
			}
		}
	}
}

// FuzzSticky drives the sticky assignors with fuzzed owned partitions and
// generations (including conflicting claims) and checks the invariants.
func FuzzSticky(f *testing.F) {
	f.Add(uint64(1), []byte{0, 1, 2, 3, 4, 5})
	f.Add(uint64(7), []byte{9, 9, 9, 1, 1, 1, 200, 3})
	f.Fuzz(func(t *testing.T, seed uint64, claims []byte) {
		r := rand.New(rand.NewPCG(seed, 0))
		members, topics := randomGroup(r, seed%2 == 0)
		for i, b := range claims {
			m := &members[i%len(members)]
			ti := topics[int(b)%len(topics)]
			if ti.Partitions == 0 {
				continue
			}
			m.Subscription.OwnedPartitions = append(m.Subscription.OwnedPartitions, tp(ti.Name, int32(b)%ti.Partitions))
			m.Subscription.GenerationID = int32(b % 3)
		}
		checkEager(t, members, topics, StickyAssignor{}.Assign(members, topics))
		got := CooperativeStickyAssignor{}.Assign(members, topics)
		seen := map[protocol.TopicPartition]bool{}
		for _, l := range got {
			for _, p := range l {
				require.False(t, seen[p])
				seen[p] = true
			}
		}
	})
}

// TestLargeGroup: 10,000 members × 10,000 partitions stay fast (see also the
// benchmarks) and correct.
func TestLargeGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	members, topics := largeGroup(10000, 10, 1000)
	for _, a := range []Assignor{RangeAssignor{}, RoundRobinAssignor{}, StickyAssignor{}, CooperativeStickyAssignor{}} {
		got := a.Assign(members, topics)
		n := 0
		for _, l := range got {
			n += len(l)
		}
		assert.Equal(t, 10000, n, a.Name())
	}
	// A sticky reassignment after one member leaves.
	got := StickyAssignor{}.Assign(members, topics)
	next := make([]Member, 0, len(members)-1)
	for i, m := range members[1:] {
		next = append(next, owning(m, 1, got[i+1]...))
	}
	got2 := StickyAssignor{}.Assign(next, topics)
	moved := 0
	for i := range next {
		for _, p := range got2[i] {
			if !slices.Contains(got[i+1], p) {
				moved++
			}
		}
	}
	assert.Equal(t, 1, moved, "only the leaver's partition moves")
}

func largeGroup(n, nt int, parts int32) ([]Member, []Topic) {
	topics := make([]Topic, nt)
	names := make([]string, nt)
	for i := range topics {
		names[i] = fmt.Sprintf("topic-%02d", i)
		topics[i] = Topic{Name: names[i], Partitions: parts}
	}
	members := make([]Member, n)
	for i := range members {
		members[i] = mem(fmt.Sprintf("member-%05d", i), names...)
	}
	return members, topics
}

func benchmarkAssignor(b *testing.B, a Assignor) {
	members, topics := largeGroup(10000, 10, 1000)
	b.ReportAllocs()
	for b.Loop() {
		a.Assign(members, topics)
	}
}

func BenchmarkRange10kx10k(b *testing.B)      { benchmarkAssignor(b, RangeAssignor{}) }
func BenchmarkRoundRobin10kx10k(b *testing.B) { benchmarkAssignor(b, RoundRobinAssignor{}) }
func BenchmarkSticky10kx10k(b *testing.B)     { benchmarkAssignor(b, StickyAssignor{}) }
func BenchmarkCooperative10kx10k(b *testing.B) {
	benchmarkAssignor(b, CooperativeStickyAssignor{})
}

// BenchmarkStickyGeneral10kx10k: differing subscriptions take generalAssign
// (every other member also subscribes to one extra topic).
func BenchmarkStickyGeneral10kx10k(b *testing.B) {
	members, topics := largeGroup(10000, 10, 1000)
	for i := range members {
		if i%2 == 0 {
			members[i].Subscription.Topics = members[i].Subscription.Topics[:5]
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		StickyAssignor{}.Assign(members, topics)
	}
}

// TestStickyClaimsBeforeKAFKA14639: before 3.5.0 (KAFKA-14639, apache/kafka
// PR #13550) only the highest generation's claims count when all
// subscriptions are equal, so consumer1's generation-1 claims (topic-0 and
// topic-1, which nobody else claims) are dropped and one of them goes
// straight to another member in the same round, with no revocation first;
// from 3.5 the claims stand and consumer1 keeps both (max quota 2). The
// post-fix rule is also what
// Kafka: CooperativeStickyAssignorTest.testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGenerationWithEqualPartitionsPerConsumer @3.6.1
// exercises (same-generation conflicts); this case is the differing-generation one.
func TestStickyClaimsBeforeKAFKA14639(t *testing.T) {
	members := []Member{
		owning(mem("consumer1", "topic"), 1, tp("topic", 0), tp("topic", 1)),
		owning(mem("consumer2", "topic"), 2, tp("topic", 2)),
		owning(mem("consumer3", "topic"), 2, tp("topic", 3)),
	}
	topics := []Topic{{"topic", 4}}
	fixed := CooperativeStickyAssignor{}.Assign(members, topics)
	assert.Equal(t, [][]protocol.TopicPartition{{tp("topic", 0), tp("topic", 1)}, {tp("topic", 2)}, {tp("topic", 3)}}, fixed)
	for _, a := range []Assignor{CooperativeStickyAssignor{HighestGenerationOnly: true}, StickyAssignor{HighestGenerationOnly: true}} {
		buggy := a.Assign(members, topics)
		moved := 0
		for _, l := range buggy[1:] {
			for _, p := range l {
				if p == tp("topic", 0) || p == tp("topic", 1) {
					moved++
				}
			}
		}
		assert.Equal(t, 1, moved, "%s: one of consumer1's partitions moves in the same round: %v", a.Name(), buggy)
	}
}
