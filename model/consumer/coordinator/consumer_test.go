package coordinator

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Tests of the KIP-848 broker side. Table cases port Kafka's
// CurrentAssignmentBuilderTest and GroupMetadataManagerTest (Apache 4.0 =
// confluentinc/kafka v8.0.0, group-coordinator/src/test/java/org/apache/
// kafka/coordinator/group/{modern/consumer/CurrentAssignmentBuilderTest,
// GroupMetadataManagerTest}.java); each names the Java test.

// tps builds a sorted partition list: tps("a", 1, 2, 3).
func tps(topic string, ps ...int32) []protocol.TopicPartition {
	out := make([]protocol.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = protocol.TopicPartition{Topic: topic, Partition: p}
	}
	return out
}

func cat(ls ...[]protocol.TopicPartition) []protocol.TopicPartition {
	var out []protocol.TopicPartition
	for _, l := range ls {
		out = append(out, l...)
	}
	return sortedUnion(out, nil)
}

func epochOf(e int32) ownerEpoch { return func(protocol.TopicPartition) int32 { return e } }

// The topics of the Java tests: topicId1 ("a") and topicId2 ("b").
func ab(a, b []int32) []protocol.TopicPartition { return cat(tps("a", a...), tps("b", b...)) }

func TestCurrentAssignmentBuilder(t *testing.T) {
	b40, _ := lookup("kafka-4.0")
	type in struct {
		cur         assignment
		target      []protocol.TopicPartition
		targetEpoch int32
		owner       ownerEpoch
		owned       []protocol.TopicPartition
		ownedSent   bool
	}
	ints := func(xs ...int32) []int32 { return xs }
	cases := []struct {
		java string
		in   in
		want assignment
	}{
		{"testStableToStable", in{assignment{Stable, 10, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}, ab(ints(1, 2, 3), ints(4, 5, 6)), 11, epochOf(10), nil, false},
			assignment{Stable, 11, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}},
		{"testStableToStableWithNewPartitions", in{assignment{Stable, 10, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}, ab(ints(1, 2, 3, 4), ints(4, 5, 6, 7)), 11, epochOf(-1), nil, false},
			assignment{Stable, 11, 10, ab(ints(1, 2, 3, 4), ints(4, 5, 6, 7)), nil}},
		{"testStableToUnrevokedPartitions", in{assignment{Stable, 10, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}, ab(ints(2, 3, 4), ints(5, 6, 7)), 11, epochOf(-1), nil, false},
			assignment{UnrevokedPartitions, 10, 10, ab(ints(2, 3), ints(5, 6)), ab(ints(1), ints(4))}},
		{"testStableToUnreleasedPartitions", in{assignment{Stable, 10, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}, ab(ints(1, 2, 3, 4), ints(4, 5, 6, 7)), 11, epochOf(10), nil, false},
			assignment{UnreleasedPartitions, 11, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}},
		{"testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions", in{assignment{Stable, 10, 10, ab(ints(1, 2, 3), ints(4, 5, 6)), nil}, ab(ints(1, 2, 3), ints(4, 5, 7)),
			11, func(p protocol.TopicPartition) int32 {
				if p.Topic == "b" {
					return 10
				}
				return -1
			}, nil, true},
			assignment{UnreleasedPartitions, 11, 10, ab(ints(1, 2, 3), ints(4, 5)), nil}},
		{"testUnrevokedPartitionsToStable", in{assignment{UnrevokedPartitions, 10, 10, ab(ints(2, 3), ints(5, 6)), ab(ints(1), ints(4))}, ab(ints(2, 3), ints(5, 6)), 11, epochOf(-1), ab(ints(2, 3), ints(5, 6)), true},
			assignment{Stable, 11, 10, ab(ints(2, 3), ints(5, 6)), nil}},
		{"testUnrevokedPartitionsToUnrevokedPartitions (3.8–4.1: memberEpoch+1)", in{assignment{UnrevokedPartitions, 10, 10, ab(ints(2, 3), ints(5, 6)), ab(ints(1), ints(4))}, ab(ints(3), ints(6)), 12, epochOf(-1), ab(ints(2, 3), ints(5, 6)), true},
			assignment{UnrevokedPartitions, 11, 10, ab(ints(3), ints(6)), ab(ints(2), ints(5))}},
		{"testUnrevokedPartitionsToUnreleasedPartitions", in{assignment{UnrevokedPartitions, 11, 10, ab(ints(2, 3), ints(5, 6)), nil}, ab(ints(2, 3, 4), ints(5, 6, 7)), 11, epochOf(10), ab(ints(2, 3), ints(5, 6)), true},
			assignment{UnreleasedPartitions, 11, 11, ab(ints(2, 3), ints(5, 6)), nil}},
		{"testUnreleasedPartitionsToStable", in{assignment{UnreleasedPartitions, 11, 11, ab(ints(2, 3), ints(5, 6)), nil}, ab(ints(2, 3), ints(5, 6)), 12, epochOf(10), nil, false},
			assignment{Stable, 12, 11, ab(ints(2, 3), ints(5, 6)), nil}},
		{"testUnreleasedPartitionsToStableWithNewPartitions", in{assignment{UnreleasedPartitions, 11, 11, ab(ints(2, 3), ints(5, 6)), nil}, ab(ints(2, 3, 4), ints(5, 6, 7)), 11, epochOf(-1), nil, false},
			assignment{Stable, 11, 11, ab(ints(2, 3, 4), ints(5, 6, 7)), nil}},
		{"testUnreleasedPartitionsToUnreleasedPartitions", in{assignment{UnreleasedPartitions, 11, 11, ab(ints(2, 3), ints(5, 6)), nil}, ab(ints(2, 3, 4), ints(5, 6, 7)), 11, epochOf(10), nil, false},
			assignment{UnreleasedPartitions, 11, 11, ab(ints(2, 3), ints(5, 6)), nil}},
		{"testUnreleasedPartitionsToUnrevokedPartitions", in{assignment{UnreleasedPartitions, 11, 11, ab(ints(2, 3), ints(5, 6)), nil}, ab(ints(3), ints(6)), 12, epochOf(10), nil, false},
			assignment{UnrevokedPartitions, 11, 11, ab(ints(3), ints(6)), ab(ints(2), ints(5))}},
		{"testUnknownState (rejoin with no owned partitions)", in{assignment{Unknown, 11, 11, ab(ints(3), ints(6)), ab(ints(2), ints(5))}, ab(ints(3), ints(6)), 12, epochOf(11), []protocol.TopicPartition{}, true},
			assignment{Stable, 12, 11, ab(ints(3), ints(6)), nil}},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			got, err := b40.reconcile(c.in.cur, c.in.target, c.in.targetEpoch, c.in.owner, c.in.owned, c.in.ownedSent)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	// testRemainsInUnrevokedPartitions: while the member still owns a
	// partition it must revoke (or sends no owned list), nothing changes.
	cur := assignment{UnrevokedPartitions, 10, 10, ab(ints(2, 3), ints(5, 6)), ab(ints(1), ints(4))}
	for _, owned := range [][]protocol.TopicPartition{nil, ab(ints(1, 2, 3), ints(5, 6)), ab(ints(2, 3), ints(4, 5, 6))} {
		got, err := b40.reconcile(cur, ab(ints(3), ints(6)), 12, epochOf(-1), owned, owned != nil)
		require.NoError(t, err)
		assert.Equal(t, cur, got, "testRemainsInUnrevokedPartitions")
	}
	// testUnknownState: a member in UNKNOWN is fenced until it rejoins with
	// nothing owned.
	_, err := b40.reconcile(assignment{state: Unknown, epoch: 11, prevEpoch: 11}, nil, 12, epochOf(10), nil, false)
	assert.ErrorIs(t, err, errFenced)
	// KAFKA-19974 (4.2): the revoked-everything step keeps the member epoch.
	b42, _ := lookup("kafka-4.2")
	got, err := b42.reconcile(assignment{UnrevokedPartitions, 10, 10, ab(ints(2, 3), ints(5, 6)), ab(ints(1), ints(4))}, ab(ints(3), ints(6)), 12, epochOf(-1), ab(ints(2, 3), ints(5, 6)), true)
	require.NoError(t, err)
	assert.Equal(t, int32(10), got.epoch)
}

// ---- the coordinator ----

type harness struct {
	t   *testing.T
	c   *Coordinator
	now protocol.Instant
	out Output
}

func newH(t *testing.T, profile string, mutate ...func(*Config)) *harness {
	cfg := Config{Name: "broker-0", Profile: Profile(profile), Topics: []assign.Topic{{Name: "a", Partitions: 6}}}
	for _, f := range mutate {
		f(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	return &harness{t: t, c: c}
}

func (h *harness) hb(r protocol.ConsumerGroupHeartbeatRequest) *protocol.ConsumerGroupHeartbeatResponse {
	h.out = Output{}
	if r.GroupID == "" {
		r.GroupID = "g"
	}
	h.c.Heartbeat(h.now, &r, &h.out)
	require.NotNil(h.t, h.out.Resp)
	return h.out.Resp
}

func join(id string) protocol.ConsumerGroupHeartbeatRequest {
	return protocol.ConsumerGroupHeartbeatRequest{MemberID: id, MemberEpoch: 0, RebalanceTimeoutMs: 300000, SubscribedTopics: []string{"a"}, OwnedSent: true, Owned: []protocol.TopicPartition{}}
}

func beat(id string, epoch int32, owned []protocol.TopicPartition) protocol.ConsumerGroupHeartbeatRequest {
	return protocol.ConsumerGroupHeartbeatRequest{MemberID: id, MemberEpoch: epoch, RebalanceTimeoutMs: -1, Owned: owned, OwnedSent: owned != nil}
}

func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.out = Output{}
	h.c.Tick(h.now, &h.out)
}

// The uniform assignor is balanced (sizes differ by at most one) and
// sticky: a member keeps what it had up to its quota.
func TestUniformAssignor(t *testing.T) {
	topics := []assign.Topic{{Name: "a", Partitions: 10}, {Name: "b", Partitions: 3}}
	for n := 1; n <= 7; n++ {
		in := make([]assignInput, n)
		for i := range in {
			in[i].id = fmt.Sprint("m", i)
		}
		out := uniform(in, topics)
		total, lo, hi := 0, 99, 0
		for _, l := range out {
			total += len(l)
			lo, hi = min(lo, len(l)), max(hi, len(l))
		}
		assert.Equal(t, 13, total, "n=%d", n)
		assert.LessOrEqual(t, hi-lo, 1, "n=%d", n)
		// Add a member: everyone keeps what they had up to the new quota.
		in2 := append([]assignInput(nil), in...)
		for i := range in2 {
			in2[i].prev = out[i]
		}
		in2 = append(in2, assignInput{id: "new"})
		out2 := uniform(in2, topics)
		quota := 13 / (n + 1)
		for i := range in {
			kept := 0
			for _, p := range out2[i] {
				if contains(out[i], p) {
					kept++
				}
			}
			assert.GreaterOrEqual(t, kept, min(quota, len(out[i])), "n=%d member %d keeps its partitions", n, i)
		}
	}
}

// The range assignor orders static members first (by instance id), then
// dynamic ones by member id, and hands out contiguous ranges per topic.
func TestRangeAssignor(t *testing.T) {
	in := []assignInput{{id: "z", topics: []string{"t"}}, {id: "y", instance: "a-static", topics: []string{"t"}}, {id: "x", topics: []string{"t"}}}
	out := rangeAssign(in, []assign.Topic{{Name: "t", Partitions: 7}})
	assert.Equal(t, tps("t", 0, 1, 2), out[1], "a-static sorts first")
	assert.Equal(t, tps("t", 3, 4), out[2])
	assert.Equal(t, tps("t", 5, 6), out[0])
}

// A static member restarting (a new member id, epoch 0) into a group at
// group.consumer.max.size: 4.0–4.3 reject it GROUP_MAX_SIZE_REACHED
// (throwIfConsumerGroupIsFull runs before the static replacement, and the
// new member id is not in the group); 4.4 (and the 4.3 branch after 4.3.1)
// lets an instance id already in the group through, so it takes its old
// incarnation's place. A new static member is still rejected. Kafka:
// GroupMetadataManager.throwIfConsumerGroupIsFull @v8.0.0, @v8.3.0;
// KAFKA-20601 on branch 4.4 (e6919341bb): GroupMetadataManagerTest.
// testStaticMemberCanRejoinWhenConsumerGroupIsFull,
// testNewStaticMemberIsRejectedWhenConsumerGroupIsFull.
func TestStaticRejoinIntoFullGroup(t *testing.T) {
	for _, c := range []struct {
		profile string
		rejoins bool
	}{{"kafka-4.0", false}, {"kafka-4.1.2", false}, {"kafka-4.2", false}, {"kafka-4.3", false}, {"kafka-4.3.2", true}, {"kafka-4.4", true}} {
		t.Run(c.profile, func(t *testing.T) {
			h := newH(t, c.profile, func(cfg *Config) { cfg.MaxSize = 2 })
			for _, id := range []string{"A1", "B1"} {
				j := join(id)
				j.InstanceID = "i-" + id[:1]
				require.Equal(t, protocol.None, h.hb(j).Error)
			}
			r := h.hb(protocol.ConsumerGroupHeartbeatRequest{MemberID: "A1", InstanceID: "i-A", MemberEpoch: protocol.StaticLeaveEpoch})
			require.Equal(t, protocol.None, r.Error)
			j := join("A2")
			j.InstanceID = "i-A"
			r = h.hb(j)
			if c.rejoins {
				require.Equal(t, protocol.None, r.Error)
				assert.Equal(t, "A2", h.c.Group("g").static("i-A").ID)
			} else {
				assert.Equal(t, protocol.GroupMaxSizeReached, r.Error)
			}
			n := join("C1")
			n.InstanceID = "i-C"
			assert.Equal(t, protocol.GroupMaxSizeReached, h.hb(n).Error, "a new static member is still rejected")
		})
	}
}
