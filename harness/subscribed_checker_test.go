package harness

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// subsView is a runView whose slots g-0 and g-1 subscribe to orders and
// payments respectively.
type subsView struct{ runView }

func (subsView) subscription(i int32) []string {
	return [][]string{{"orders"}, {"payments"}}[i]
}

// subsSlot is the TraceEvent.Slot of node's events in subsView.
func subsSlot(node string) int32 {
	return int32(slices.Index([]string{"g-0", "g-1"}, node)) + 1
}

// TestSubscribedOwnerChecker: an assignment with a partition of a topic
// the member does not subscribe to is a violation (Kafka's assignors never
// give one);
// one within its subscription, an empty one and a non-member node are not.
func TestSubscribedOwnerChecker(t *testing.T) {
	c := subscribedOwnerChecker{}
	assigned := func(node string, tps ...protocol.TopicPartition) string {
		return c.check(subsView{}, &TraceEvent{Event: protocol.Event{Kind: protocol.EvAssigned, Node: node, Group: "g", Gen: 4, Partitions: tps}, Slot: subsSlot(node)})
	}
	o3, p0 := protocol.TopicPartition{Topic: "orders", Partition: 3}, protocol.TopicPartition{Topic: "payments", Partition: 0}
	assert.Empty(t, assigned("g-0", o3))
	assert.Empty(t, assigned("g-1", p0))
	assert.Empty(t, assigned("g-1"))
	assert.Empty(t, assigned("broker-0", o3))
	assert.Equal(t, "g-1 owns orders-3 in generation 4 but subscribes to [payments]", assigned("g-1", p0, o3))
	assert.Equal(t, "g-0 owns payments-0 in generation 4 but subscribes to [orders]", assigned("g-0", p0))
}

// TestMixedSubscriptionsOwnOnlySubscribedTopics runs testdata/consumer-
// mixed-subscriptions.yaml (one group, three members subscribed to orders,
// two to payments) under every assignor of both protocols (seeds 1-3): every
// assignment a member applies holds only its own topics, every partition
// ends up owned, and the invariants (owns-only-subscribed-topics among
// them) hold. On main, the consumer protocol's assignors gave payments
// members orders partitions (uniform: shop-0 owned payments-4 while
// subscribing to orders only) and range members the other cohort's topic
// (the heterogeneous assignment paths of both protocols).
func TestMixedSubscriptionsOwnOnlySubscribedTopics(t *testing.T) {
	clients := []string{
		"{profile: kafka-4.3, group.protocol: consumer, group.remote.assignor: uniform}",
		"{profile: kafka-4.3, group.protocol: consumer, group.remote.assignor: range}",
		"{profile: kafka-3.7, partition.assignment.strategy: range}",
		"{profile: kafka-3.7, partition.assignment.strategy: roundrobin}",
		"{profile: kafka-3.7, partition.assignment.strategy: cooperative-sticky}",
	}
	subs := map[string][]string{"shop-0": {"orders"}, "shop-1": {"orders"}, "shop-2": {"orders"}, "shop-3": {"payments"}, "shop-4": {"payments"}}
	for _, client := range clients {
		sc := mustParse(t, strings.ReplaceAll(testdataText(t, "consumer-mixed-subscriptions.yaml"),
			"{profile: kafka-4.3, group.protocol: consumer, group.remote.assignor: uniform}", client))
		for seed := uint64(1); seed <= 3; seed++ {
			res, err := Run(sc, seed, Options{KeepTrace: true})
			require.NoError(t, err)
			assert.Empty(t, res.Summary.InvariantViolations, "%s seed %d", client, seed)
			last := map[string][]protocol.TopicPartition{}
			for _, e := range res.Trace {
				if e.Kind != protocol.EvAssigned {
					continue
				}
				last[e.Node] = e.Partitions
				for _, tp := range e.Partitions {
					assert.True(t, slices.Contains(subs[e.Node], tp.Topic), "%s seed %d: %s owns %v", client, seed, e.Node, tp)
				}
			}
			owned := 0
			for _, l := range last {
				owned += len(l)
			}
			assert.Equal(t, 18, owned, "%s seed %d: every partition owned at the end", client, seed)
		}
	}
}

// TestConsumerAddPartitions runs testdata/consumer-add-partitions.yaml (10
// consumers, a 100-partition topic grown to 1,000 at 60 s): the brokers' metadata change bumps the group epoch at the next
// heartbeat (GroupMetadataManager.onNewMetadataImage →
// updateSubscriptionMetadata, v8.0.0; GroupMetadataManagerTest.
// testOnNewMetadataImage), each member gets its share of the new partitions
// and nobody revokes anything: 1,000 partitions owned, 100 per member, at
// the end. On main the scenario was rejected ("add-partitions is modelled
// for classic groups only"), and with the check lifted nothing bumped the
// epoch: the 900 new partitions were never owned.
func TestConsumerAddPartitions(t *testing.T) {
	b, err := os.ReadFile("testdata/consumer-add-partitions.yaml")
	require.NoError(t, err)
	sc := mustParse(t, string(b))
	for seed := uint64(1); seed <= 3; seed++ {
		res, err := Run(sc, seed, Options{KeepTrace: true})
		require.NoError(t, err)
		assert.Empty(t, res.Summary.InvariantViolations, "seed %d", seed)
		faulted := false
		bumps := 0
		last := map[string][]protocol.TopicPartition{}
		for _, e := range res.Trace {
			switch {
			case e.Kind == tracing.EvFault:
				faulted = true
			case faulted && e.Kind == protocol.EvRebalanceStart:
				assert.Equal(t, "metadata", e.Reason, "seed %d: the only bump after the fault", seed)
				bumps++
			case faulted && e.Kind == protocol.EvRevoked:
				t.Errorf("seed %d: %s revoked %v after the fault", seed, e.Node, e.Partitions)
			case e.Kind == protocol.EvAssigned:
				last[e.Node] = e.Partitions
			}
		}
		assert.Equal(t, 1, bumps, "seed %d: one group epoch bump for the metadata change", seed)
		assert.Len(t, last, 10, "seed %d", seed)
		for node, l := range last {
			assert.Len(t, l, 100, "seed %d: %s", seed, node)
		}
	}
}

// TestConsumerSwarmMixedSubscriptions: consumer-swarm.yaml with mixed
// subscriptions (heterogeneous and overlapping): the static cohort subscribes to t and u,
// a third cohort to u only, so the group is heterogeneous and overlapping
// (the balancing loop of UniformHeterogeneousAssignmentBuilder moves
// partitions), and u grows from 5 to 9 partitions at 30 s (item 7f). Under
// the swarm's crashes, pauses, partitions, loss and failovers, with either
// server assignor, every invariant holds — owns-only-subscribed-topics and
// exclusive-ownership among them.
func TestConsumerSwarmMixedSubscriptions(t *testing.T) {
	src := testdataText(t, "consumer-swarm.yaml")
	src = strings.Replace(src, "topics: [{name: t, partitions: 12}]", "topics: [{name: t, partitions: 12}, {name: u, partitions: 5}]", 1)
	src = strings.Replace(src, `  - id: g
    members: 2
    subscribe: [t]`, `  - id: g
    members: 2
    subscribe: [t, u]`, 1)
	src = strings.Replace(src, "swarm:\n", `  - id: g
    members: 2
    subscribe: [u]
    client: {profile: kafka-4.3, group.protocol: consumer}
faults:
  - {at: 30s, add-partitions: u, partitions: 9}
swarm:
`, 1)
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	for _, assignor := range []string{"uniform", "range"} {
		sc := mustParse(t, strings.ReplaceAll(src, "group.protocol: consumer", "group.protocol: consumer, group.remote.assignor: "+assignor))
		require.Len(t, sc.Groups, 3)
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			res := run(t, sc, seed, Options{})
			requireNoViolations(t, seed, res, true)
		}
	}
}

// TestOraclesMixedSubscriptionsNotUnbalanced: in a group whose cohorts
// subscribe to different topics, a member may own nothing by design (two
// payments members share its single partition while the orders members own
// four each): unbalanced-assignment does not judge such a group, as it does
// not judge range over several topics. The group is otherwise healthy:
// no finding at all, under either protocol.
func TestOraclesMixedSubscriptionsNotUnbalanced(t *testing.T) {
	src := strings.Replace(testdataText(t, "consumer-mixed-subscriptions.yaml"), "{name: payments, partitions: 6}", "{name: payments, partitions: 1}", 1)
	for _, client := range []string{"", "{profile: kafka-4.3, partition.assignment.strategy: roundrobin}"} {
		s := src
		if client != "" {
			s = strings.ReplaceAll(s, "{profile: kafka-4.3, group.protocol: consumer, group.remote.assignor: uniform}", client)
		}
		s = strings.Replace(s, "duration: 120s", "duration: 900s", 1)
		for seed := uint64(1); seed <= 3; seed++ {
			res, fs, err := RunOracles(mustParse(t, s), seed, Options{})
			require.NoError(t, err)
			assert.Empty(t, res.Summary.InvariantViolations)
			assert.Empty(t, fs, "%q seed %d", client, seed)
		}
	}
}
