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

// GroupMetadataManagerTest.testMemberJoinsEmptyConsumerGroup and
// testNewJoiningMemberTriggersNewTargetAssignment / testReconciliationProcess:
// the first member gets everything at epoch 1; a second member bumps the
// epoch; the first must revoke half before the second gets it, and the
// second receives it on its own next heartbeat (no push): revocation always
// precedes assignment, no partition is ever owned twice.
func TestJoinAndReconciliation(t *testing.T) {
	h := newH(t, "kafka-4.0")
	r := h.hb(join("A"))
	assert.Equal(t, protocol.None, r.Error)
	assert.Equal(t, int32(1), r.MemberEpoch)
	assert.Equal(t, tps("a", 0, 1, 2, 3, 4, 5), r.Assignment)
	g := h.c.Group("g")
	assert.Equal(t, GroupStable, g.State())

	r = h.hb(join("B"))
	assert.Equal(t, int32(2), r.MemberEpoch, "B is at the new epoch")
	assert.Empty(t, r.Assignment, "B waits: A still owns everything")
	assert.Equal(t, UnreleasedPartitions, g.Member("B").State())
	assert.Equal(t, Reconciling, g.State())

	r = h.hb(beat("A", 1, tps("a", 0, 1, 2, 3, 4, 5)))
	assert.Equal(t, int32(1), r.MemberEpoch, "A stays at its epoch until it revokes")
	assert.Equal(t, tps("a", 0, 1, 2), r.Assignment)
	assert.Equal(t, UnrevokedPartitions, g.Member("A").State())
	assert.Equal(t, tps("a", 3, 4, 5), g.Member("A").Revoking())

	r = h.hb(beat("B", 2, []protocol.TopicPartition{}))
	assert.Empty(t, r.Assignment, "still unreleased: A has not acknowledged")
	r = h.hb(beat("A", 1, tps("a", 0, 1, 2)))
	assert.Equal(t, int32(2), r.MemberEpoch)
	assert.Equal(t, Stable, g.Member("A").State())
	r = h.hb(beat("B", 2, []protocol.TopicPartition{}))
	assert.Equal(t, tps("a", 3, 4, 5), r.Assignment)
	assert.Equal(t, GroupStable, g.State())
}

// GroupMetadataManagerTest.testConsumerGroupMemberEpochValidation: a bigger
// epoch is fenced; the previous epoch is accepted when the owned partitions
// are a subset of the assigned ones (the response with the bump was lost);
// an unknown member id is UNKNOWN_MEMBER_ID.
func TestMemberEpochValidation(t *testing.T) {
	h := newH(t, "kafka-4.0")
	h.hb(join("A"))
	h.hb(join("B"))
	h.hb(beat("A", 1, tps("a", 0, 1, 2, 3, 4, 5)))
	h.hb(beat("A", 1, tps("a", 0, 1, 2)))
	require.Equal(t, int32(2), h.c.Group("g").Member("A").Epoch())
	assert.Equal(t, protocol.FencedMemberEpoch, h.hb(beat("A", 3, nil)).Error)
	assert.Equal(t, protocol.None, h.hb(beat("A", 1, tps("a", 0, 1))).Error, "previous epoch, owned ⊆ assigned")
	assert.Equal(t, protocol.FencedMemberEpoch, h.hb(beat("A", 1, tps("a", 0, 5))).Error, "previous epoch owning a revoked partition")
	assert.Equal(t, protocol.UnknownMemberID, h.hb(beat("Z", 2, nil)).Error)
	// KAFKA-19233 (4.2+): epoch 0 from an existing member is accepted; 4.0
	// fences it like any smaller epoch that is not the previous one.
	assert.Equal(t, protocol.FencedMemberEpoch, h.hb(join("A")).Error)
	h2 := newH(t, "kafka-4.2")
	h2.hb(join("A"))
	h2.hb(join("B"))
	h2.hb(beat("A", 1, tps("a", 0, 1, 2, 3, 4, 5)))
	h2.hb(beat("A", 1, tps("a", 0, 1, 2)))
	assert.Equal(t, protocol.None, h2.hb(join("A")).Error)
}

// GroupMetadataManagerTest.testSessionTimeoutLifecycle and
// testLeavingMemberBumpsGroupEpoch: a member whose heartbeats stop is
// fenced one session timeout after its last accepted heartbeat; its
// partitions are free at once; the group epoch is bumped and the next
// heartbeat of a remaining member computes the new target.
func TestSessionTimeoutAndLeave(t *testing.T) {
	h := newH(t, "kafka-4.0")
	h.hb(join("A"))
	h.hb(join("B"))
	h.hb(beat("A", 1, tps("a", 0, 1, 2, 3, 4, 5)))
	h.hb(beat("A", 1, tps("a", 0, 1, 2)))
	h.hb(beat("B", 2, []protocol.TopicPartition{}))
	g := h.c.Group("g")
	require.Equal(t, GroupStable, g.State())
	last := h.now
	h.now = h.now.Add(40 * time.Second)
	h.hb(beat("A", 2, tps("a", 0, 1, 2)))
	assert.Equal(t, last.Add(45*time.Second), h.c.NextDeadline(), "B's session")
	h.advance(5 * time.Second)
	require.Len(t, h.out.Events, 2)
	assert.Equal(t, protocol.EvMemberRemoved, h.out.Events[0].Kind)
	assert.Equal(t, "session-expired", h.out.Events[0].Reason)
	assert.Equal(t, int32(3), g.Epoch)
	assert.Equal(t, Assigning, g.State(), "no computation until someone heartbeats")
	r := h.hb(beat("A", 2, tps("a", 0, 1, 2)))
	assert.Equal(t, int32(3), r.MemberEpoch)
	assert.Equal(t, tps("a", 0, 1, 2, 3, 4, 5), r.Assignment, "B's partitions were freed by the fence")
	r = h.hb(protocol.ConsumerGroupHeartbeatRequest{MemberID: "A", MemberEpoch: protocol.LeaveEpoch})
	assert.Equal(t, int32(-1), r.MemberEpoch)
	assert.Equal(t, int32(4), g.Epoch)
	assert.Equal(t, Empty, g.State())
}

// GroupMetadataManagerTest.testRebalanceTimeoutLifecycle: a member that does
// not revoke within its rebalance timeout (max.poll.interval.ms) is fenced.
func TestRebalanceTimeout(t *testing.T) {
	h := newH(t, "kafka-4.0")
	h.hb(join("A"))
	h.hb(join("B"))
	h.hb(beat("A", 1, tps("a", 0, 1, 2, 3, 4, 5))) // now UNREVOKED
	for i := 0; i < 60; i++ {
		h.now = h.now.Add(5 * time.Second)
		h.hb(beat("A", 1, tps("a", 0, 1, 2, 3, 4, 5))) // never revokes
		h.hb(beat("B", 2, []protocol.TopicPartition{}))
		h.out = Output{}
		h.c.Tick(h.now, &h.out)
		if len(h.out.Events) > 0 {
			break
		}
	}
	require.NotEmpty(t, h.out.Events)
	assert.Equal(t, "rebalance-timeout", h.out.Events[0].Reason)
	assert.Equal(t, protocol.Instant(300*time.Second), h.now, "5-minute revocation deadline")
}

// GroupMetadataManagerTest.testNoGroupEpochBumpWhenStaticMemberTemporarilyLeaves,
// testStaticMemberGetsBackAssignmentUponRejoin and
// testShouldThrowFencedInstanceIdExceptionWhenStaticMemberWithDifferentMemberIdJoins:
// a static member leaving with −2 keeps its partitions and bumps nothing; a
// new incarnation rejoining with epoch 0 gets them back at once; a second
// incarnation while the first is active is UNRELEASED_INSTANCE_ID.
func TestStaticMembership(t *testing.T) {
	h := newH(t, "kafka-4.0")
	j := join("A1")
	j.InstanceID = "i-A"
	h.hb(j)
	j2 := join("A2")
	j2.InstanceID = "i-A"
	assert.Equal(t, protocol.UnreleasedInstanceID, h.hb(j2).Error)
	g := h.c.Group("g")
	epoch := g.Epoch
	r := h.hb(protocol.ConsumerGroupHeartbeatRequest{MemberID: "A1", InstanceID: "i-A", MemberEpoch: protocol.StaticLeaveEpoch})
	assert.Equal(t, int32(-2), r.MemberEpoch)
	assert.Equal(t, epoch, g.Epoch, "no bump")
	r = h.hb(j2)
	require.Equal(t, protocol.None, r.Error)
	assert.Equal(t, epoch, g.Epoch, "no rebalance: same subscription")
	assert.Equal(t, tps("a", 0, 1, 2, 3, 4, 5), r.Assignment, "its partitions back at once")
	hb := beat("A1", r.MemberEpoch, nil)
	hb.InstanceID = "i-A"
	assert.Equal(t, protocol.FencedInstanceID, h.hb(hb).Error, "the old incarnation is fenced")
}

// GroupMetadataManagerTest.testUnknownGroupId and request validation (§2.3).
func TestRequestErrors(t *testing.T) {
	h := newH(t, "kafka-4.0", func(c *Config) { c.MaxSize = 1 })
	assert.Equal(t, protocol.GroupIDNotFound, h.hb(beat("A", 3, nil)).Error)
	bad := join("A")
	bad.SubscribedTopics = nil
	assert.Equal(t, protocol.InvalidRequest, h.hb(bad).Error, "a join must be a full request")
	un := join("A")
	un.ServerAssignor = "sticky"
	assert.Equal(t, protocol.UnsupportedAssignor, h.hb(un).Error)
	h.hb(join("A"))
	assert.Equal(t, protocol.GroupMaxSizeReached, h.hb(join("B")).Error)
	assert.Equal(t, protocol.InvalidRequest, h.hb(protocol.ConsumerGroupHeartbeatRequest{MemberID: "A", MemberEpoch: -3}).Error)
}

// KIP-1263 (4.3): a target is computed at most once per
// group.consumer.assignment.interval.ms; meanwhile members reconcile toward
// the old target, and a new member is STABLE at the old epoch with nothing.
func TestAssignmentBatching43(t *testing.T) {
	h := newH(t, "kafka-4.3")
	r := h.hb(join("A"))
	assert.Equal(t, int32(2), r.MemberEpoch, "4.3 groups start at epoch 1; A's join bumps to 2")
	h.now = h.now.Add(100 * time.Millisecond)
	r = h.hb(join("B"))
	g := h.c.Group("g")
	assert.Equal(t, int32(3), g.Epoch)
	assert.Equal(t, int32(2), g.AssignmentEpoch, "gated: less than 1 s since the last computation")
	assert.Equal(t, int32(2), r.MemberEpoch)
	assert.Empty(t, r.Assignment)
	h.now = h.now.Add(time.Second)
	r = h.hb(beat("B", 2, []protocol.TopicPartition{}))
	assert.Equal(t, int32(3), g.AssignmentEpoch, "computed once the gate opened")
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

// Group-level configs (kafka-configs --entity-type groups --add-config):
// a group with consumer.session.timeout.ms / consumer.heartbeat.interval.ms
// lives by them, another group on the same broker by the broker's
// group.consumer.* values; 4.3's consumer.assignment.interval.ms gates that
// group's target computations (0: none). Kafka: GroupMetadataManager.
// consumerGroupSessionTimeoutMs, consumerGroupHeartbeatIntervalMs @v8.0.0,
// consumerGroupAssignmentIntervalMs @v8.3.0; GroupMetadataManagerTest.
// testConsumerGroupDynamicConfigs @v8.0.0 (50000 / 10000 after the update).
func TestGroupConfigs(t *testing.T) {
	h := newH(t, "kafka-4.3", func(c *Config) {
		c.Groups = []GroupConfig{{ID: "g", SessionTimeout: 50 * time.Second, HeartbeatInterval: 7 * time.Second, AssignmentIntervalSet: true}}
	})
	r := h.hb(join("A"))
	assert.Equal(t, int32(7000), r.HeartbeatIntervalMs, "the group's consumer.heartbeat.interval.ms")
	assert.Equal(t, h.now.Add(50*time.Second), h.c.NextDeadline(), "the group's consumer.session.timeout.ms")
	r = h.hb(join("B"))
	assert.Equal(t, h.c.Group("g").Epoch, h.c.Group("g").AssignmentEpoch, "consumer.assignment.interval.ms 0: no batching for g")
	other := join("X")
	other.GroupID = "other"
	r = h.hb(other)
	assert.Equal(t, int32(5000), r.HeartbeatIntervalMs, "another group: the broker's value")
}
