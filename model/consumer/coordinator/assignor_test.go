package coordinator

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Server assignors under mixed subscriptions (members of one group
// subscribing to different topics, which the homogeneous-only assignors
// got wrong: a member was given partitions of a topic it does not
// subscribe to). The table
// cases port UniformHeterogeneousAssignmentBuilderTest and RangeAssignorTest
// (confluentinc/kafka v8.3.0, group-coordinator/src/test/java/org/apache/
// kafka/coordinator/group/assignor/; the same cases and expectations at
// v8.0.0); each names the Java test. Members are
// A, B, C in that order (the Java tests' TreeMap order), topics topic1 …
// topic4 (their Uuids sort in the same order as the names).

func t1(ps ...int32) []protocol.TopicPartition { return tps("topic1", ps...) }
func t2(ps ...int32) []protocol.TopicPartition { return tps("topic2", ps...) }
func t3(ps ...int32) []protocol.TopicPartition { return tps("topic3", ps...) }
func t4(ps ...int32) []protocol.TopicPartition { return tps("topic4", ps...) }

func mtopics(parts ...int32) []assign.Topic {
	var out []assign.Topic
	for i, n := range parts {
		if n > 0 {
			out = append(out, assign.Topic{Name: "topic" + string(rune('1'+i)), Partitions: n})
		}
	}
	return out
}

func sub(names ...string) []string { return names }

func TestUniformHeterogeneousAssignmentBuilder(t *testing.T) {
	cases := []struct {
		java    string
		topics  []assign.Topic // partitions of topic1..topic4 (0: absent)
		members []assignInput
		want    [][]protocol.TopicPartition
	}{
		{"testFirstAssignmentTwoMembersTwoTopics", mtopics(3, 0, 6),
			[]assignInput{{id: "A", topics: sub("topic1", "topic3")}, {id: "B", topics: sub("topic3")}},
			[][]protocol.TopicPartition{cat(t1(0, 1, 2), t3(4)), t3(0, 1, 2, 3, 5)}},
		{"testFirstAssignmentNumMembersGreaterThanTotalNumPartitions", mtopics(2, 0, 1),
			[]assignInput{{id: "A", topics: sub("topic3")}, {id: "B", topics: sub("topic3")}, {id: "C", topics: sub("topic1")}},
			[][]protocol.TopicPartition{t3(0), nil, t1(0, 1)}},
		{"testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment", mtopics(6, 4, 4),
			[]assignInput{
				{id: "A", topics: sub("topic1"), prev: t1(0, 1, 2)},
				{id: "B", topics: sub("topic1", "topic2"), prev: cat(t1(3), t2(0))},
				{id: "C", topics: sub("topic1", "topic2", "topic3"), prev: cat(t1(4, 5), t2(1, 2, 3), t3(0, 1, 2, 3))},
			},
			[][]protocol.TopicPartition{t1(0, 1, 2, 5), cat(t1(3), t2(0, 1, 2, 3)), cat(t1(4), t3(0, 1, 2, 3))}},
		{"testReassignmentWhenPartitionsAreAddedForTwoMembers", mtopics(6, 5, 3, 3),
			[]assignInput{
				{id: "A", topics: sub("topic1", "topic3"), prev: cat(t1(0, 1, 2, 3), t3(0, 1))},
				{id: "B", topics: sub("topic1", "topic2", "topic3", "topic4"), prev: cat(t2(0, 1, 2), t4(0, 1, 2))},
			},
			[][]protocol.TopicPartition{cat(t1(0, 1, 2, 3, 4, 5), t3(0, 1, 2)), cat(t2(0, 1, 2, 3, 4), t4(0, 1, 2))}},
		{"testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics", mtopics(6, 7),
			[]assignInput{
				{id: "A", topics: sub("topic1"), prev: cat(t1(0, 2), t2(0))},
				{id: "B", topics: sub("topic1", "topic2"), prev: cat(t1(1), t2(1, 2))},
				{id: "C", topics: sub("topic1", "topic2")},
			},
			[][]protocol.TopicPartition{t1(0, 2, 3, 4, 5), cat(t1(1), t2(1, 2, 6)), t2(0, 3, 4, 5)}},
		{"testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics", mtopics(3, 8, 3),
			[]assignInput{
				{id: "A", topics: sub("topic1", "topic3"), prev: cat(t1(0, 1, 2), t3(0, 1))},
				{id: "B", topics: sub("topic2"), prev: t2(3, 4, 5, 6)},
			},
			[][]protocol.TopicPartition{cat(t1(0, 1, 2), t3(0, 1, 2)), t2(0, 1, 2, 3, 4, 5, 6, 7)}},
		{"testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", mtopics(3, 5),
			[]assignInput{
				{id: "A", topics: sub("topic1"), prev: cat(t1(0, 2), t2(1, 3))},
				{id: "B", topics: sub("topic1", "topic2"), prev: cat(t1(1), t2(0, 2, 4))},
			},
			[][]protocol.TopicPartition{t1(0, 1, 2), t2(0, 1, 2, 3, 4)}},
		{"testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions", mtopics(2, 2, 2),
			[]assignInput{
				{id: "A", topics: sub("topic1", "topic2", "topic3"), prev: cat(t1(0, 1), t2(0, 1), t3(0, 1))},
				{id: "B", topics: sub("topic1", "topic2", "topic3")},
			},
			[][]protocol.TopicPartition{cat(t2(0), t3(0, 1)), cat(t1(0, 1), t2(1))}},
		{"testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions", mtopics(3),
			[]assignInput{{id: "A", topics: sub("topic1")}, {id: "B", topics: sub()}},
			[][]protocol.TopicPartition{t1(0, 1, 2), nil}},
		{"testTwoMembersSubscribedToNonexistentTopics (no topic in the metadata: empty)", nil,
			[]assignInput{{id: "A", topics: sub("topic3")}, {id: "B", topics: sub("topic2")}},
			[][]protocol.TopicPartition{nil, nil}},
	}
	for _, c := range cases {
		got := uniformHeterogeneous(c.members, c.topics)
		for i := range c.members {
			assert.Equal(t, c.want[i], got[i], "%s: member %s", c.java, c.members[i].id)
		}
	}
}

// RangeAssignorTest (v8.3.0): heterogeneous subscriptions get each topic
// spread over its own subscribers only; static members sort before
// dynamic ones (sortMemberIds).
func TestServerRangeAssignor(t *testing.T) {
	cases := []struct {
		java    string
		topics  []assign.Topic
		members []assignInput
		want    [][]protocol.TopicPartition
	}{
		{"testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions", mtopics(3, 3, 2),
			[]assignInput{{id: "A", topics: sub("topic1", "topic2")}, {id: "B", topics: sub("topic3")}, {id: "C", topics: sub("topic2", "topic3")}},
			[][]protocol.TopicPartition{cat(t1(0, 1, 2), t2(0, 1)), t3(0), cat(t2(2), t3(1))}},
		{"testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions", mtopics(3, 0, 2),
			[]assignInput{{id: "A", topics: sub("topic1", "topic3")}, {id: "B", topics: sub("topic1", "topic3")}},
			[][]protocol.TopicPartition{cat(t1(0, 1), t3(0)), cat(t1(2), t3(1))}},
		// testMixedStaticMembership's group (A and C static, B dynamic, one
		// 5-partition topic): sortMemberIds puts instanceA, instanceC, then B.
		{"testMixedStaticMembership (sortMemberIds order)", mtopics(5),
			[]assignInput{{id: "A", instance: "instanceA", topics: sub("topic1")}, {id: "B", topics: sub("topic1")}, {id: "C", instance: "instanceC", topics: sub("topic1")}},
			[][]protocol.TopicPartition{t1(0, 1), t1(4), t1(2, 3)}},
		// A dynamic member whose id sorts before an instance id still comes
		// after every static member.
		{"sortMemberIds: static first, then dynamic by member id", mtopics(7),
			[]assignInput{{id: "z"}, {id: "y", instance: "b-static"}, {id: "a"}},
			[][]protocol.TopicPartition{t1(5, 6), t1(0, 1, 2), t1(3, 4)}},
	}
	for _, c := range cases {
		for i := range c.members {
			if c.members[i].topics == nil {
				c.members[i].topics = sub("topic1")
			}
		}
		got := assignTarget(Range, c.members, c.topics)
		for i := range c.members {
			assert.Equal(t, c.want[i], got[i], "%s: member %s", c.java, c.members[i].id)
		}
	}
}

// UniformAssignor.assign (v8.3.0) picks the builder by the group's
// subscription type: a member subscribed to topic2 only never gets
// topic1's partitions.
func TestUniformPicksHeterogeneousBuilder(t *testing.T) {
	topics := mtopics(12, 6)
	members := []assignInput{
		{id: "A", topics: sub("topic1")}, {id: "B", topics: sub("topic1")}, {id: "C", topics: sub("topic1")},
		{id: "D", topics: sub("topic2")}, {id: "E", topics: sub("topic2")},
	}
	got := assignTarget(Uniform, members, topics)
	for i, m := range members {
		for _, p := range got[i] {
			assert.Contains(t, m.topics, p.Topic, "member %s owns %v", m.id, p)
		}
	}
	assert.Equal(t, [][]protocol.TopicPartition{t1(0, 3, 6, 9), t1(1, 4, 7, 10), t1(2, 5, 8, 11), t2(0, 2, 4), t2(1, 3, 5)}, got)
	assert.True(t, homogeneous([]assignInput{{topics: sub("x", "y")}, {topics: sub("x", "y")}}))
	assert.False(t, homogeneous([]assignInput{{topics: sub("x", "y")}, {topics: sub("x")}}))
}

// The coordinator end to end under mixed subscriptions
// (GroupMetadataManagerTest builds its groups the same way): members of one group subscribing to
// different topics get targets of their own topics only, under either
// assignor. On the homogeneous-only code a payments-only member was given
// orders partitions (uniform) and an orders-only member payments-0 (range).
func TestMixedSubscriptionTargets(t *testing.T) {
	for _, name := range []string{Uniform, Range} {
		h := newH(t, "kafka-4.3", func(c *Config) {
			c.Topics = []assign.Topic{{Name: "orders", Partitions: 12}, {Name: "payments", Partitions: 6}}
		})
		subs := map[string][]string{"o1": {"orders"}, "o2": {"orders"}, "o3": {"orders"}, "p1": {"payments"}, "p2": {"payments"}}
		for _, id := range []string{"o1", "p1", "o2", "p2", "o3"} {
			r := join(id)
			r.SubscribedTopics, r.ServerAssignor = subs[id], name
			h.now = h.now.Add(2 * DefaultAssignmentInterval) // past 4.3's batching gate
			h.hb(r)
		}
		g := h.c.Group("g")
		assert.Equal(t, g.Epoch, g.AssignmentEpoch, name)
		total := 0
		for _, m := range g.Members() {
			for _, p := range m.target {
				assert.Contains(t, subs[m.ID], p.Topic, "%s: member %s targets %v", name, m.ID, p)
			}
			total += len(m.target)
		}
		assert.Equal(t, 18, total, "%s: every partition has a target owner", name)
	}
}

// Partitions added to a subscribed topic (kafka-topics.sh --alter
// --partitions during a run), as
// GroupMetadataManagerTest.testOnNewMetadataImage and
// testSubscriptionMetadataRefreshedAfterGroupIsLoaded (v8.0.0) check it: a
// metadata image change requests a refresh of the groups subscribed to the
// topic (and only those); the next heartbeat of any member recomputes the
// subscription metadata, bumps the group epoch and the target spreads the
// new partitions; a loaded group refreshes at its first heartbeat. On main
// nothing ever bumped the epoch, so the new partitions were never owned.
func TestAddPartitionsBumpsConsumerGroup(t *testing.T) {
	for _, profile := range ProfileNames() {
		h := newH(t, profile, func(c *Config) {
			c.Topics = []assign.Topic{{Name: "a", Partitions: 6}, {Name: "other", Partitions: 4}}
		})
		for _, id := range []string{"A", "B"} {
			h.now = h.now.Add(2 * DefaultAssignmentInterval)
			h.hb(join(id))
		}
		g := h.c.Group("g")
		before := g.Epoch
		h.c.AddPartitions("other", 8) // no member subscribes to it
		h.now = h.now.Add(2 * DefaultAssignmentInterval)
		h.hb(beat("A", g.Members()[0].Epoch(), nil))
		assert.Equal(t, before, g.Epoch, "%s: a topic nobody subscribes to changes nothing", profile)

		h.c.AddPartitions("a", 10)
		assert.Equal(t, before, g.Epoch, "%s: the bump waits for a heartbeat", profile)
		h.now = h.now.Add(2 * DefaultAssignmentInterval)
		h.hb(beat("B", g.Members()[1].Epoch(), nil))
		assert.Equal(t, before+1, g.Epoch, "%s: one bump at the next heartbeat", profile)
		assert.Equal(t, g.Epoch, g.AssignmentEpoch, "%s", profile)
		var all []protocol.TopicPartition
		for _, m := range g.Members() {
			assert.Len(t, m.target, 5, "%s: member %s", profile, m.ID)
			all = append(all, m.target...)
		}
		assert.ElementsMatch(t, tps("a", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), all, profile)
		h.now = h.now.Add(2 * DefaultAssignmentInterval)
		h.hb(beat("A", g.Members()[0].Epoch(), nil))
		assert.Equal(t, before+1, g.Epoch, "%s: refreshed once", profile)

		// Moved to a broker whose image has more partitions: refreshed at
		// the first heartbeat after the load.
		other, err := New(Config{Name: "broker-1", Profile: Profile(profile), Topics: []assign.Topic{{Name: "a", Partitions: 12}}})
		assert.NoError(t, err)
		other.Load(h.now, h.c.Unload("g"))
		h.c = other
		h.now = h.now.Add(2 * DefaultAssignmentInterval)
		h.hb(beat("A", g.Members()[0].Epoch(), nil))
		assert.Equal(t, before+2, g.Epoch, "%s: refreshed after the load", profile)
	}
}
