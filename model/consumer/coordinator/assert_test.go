package coordinator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// assertGroup is a coordinator with group g: A (STABLE, t:0-5, epoch 1).
func assertGroup(t *testing.T) (*Coordinator, *Group, *Member) {
	t.Helper()
	c, err := New(Config{Name: "broker-0", Profile: "kafka-4.0", Topics: []assign.Topic{{Name: "t", Partitions: 6}}})
	require.NoError(t, err)
	var out Output
	c.Heartbeat(0, &protocol.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "A", RebalanceTimeoutMs: 1000,
		SubscribedTopics: []string{"t"}, OwnedSent: true, Owned: []protocol.TopicPartition{}}, &out)
	require.Equal(t, protocol.None, out.Resp.Error)
	g := c.Group("g")
	return c, g, g.Member("A")
}

func asserts(out *Output) []string {
	var got []string
	for _, e := range out.Events {
		if e.Kind == protocol.EvAssertFailed {
			got = append(got, e.Detail)
		}
	}
	return got
}

// A member epoch ahead of the group epoch is caught where the assignment is
// produced.
func TestAssertMemberEpochAtMostGroupEpoch(t *testing.T) {
	c, g, m := assertGroup(t)
	var out Output
	next := m.assignment
	next.state, next.epoch = UnreleasedPartitions, g.Epoch+1
	c.setAssignment(g, m, next, &out)
	require.Equal(t, []string{"consumer-coordinator: member A epoch 2 > group epoch 1"}, asserts(&out))
}

// A partition both assigned and pending revocation (hand-broken state) is
// caught when the member's heartbeat hands the assignment on: the member
// still owns it, so CurrentAssignmentBuilder keeps the state as it is.
func TestAssertAssignedDisjointFromRevoking(t *testing.T) {
	c, _, m := assertGroup(t)
	m.state, m.revoking = UnrevokedPartitions, []protocol.TopicPartition{{Topic: "t", Partition: 5}}
	var out Output
	c.Heartbeat(0, &protocol.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "A", MemberEpoch: 1, RebalanceTimeoutMs: -1,
		OwnedSent: true, Owned: m.assigned}, &out)
	require.Equal(t, protocol.None, out.Resp.Error)
	require.Equal(t, []string{
		"consumer-coordinator: member A has {t 5} both assigned and pending revocation", // produced (setAssignment)
		"consumer-coordinator: member A has {t 5} both assigned and pending revocation", // consumed (the response)
	}, asserts(&out))
}

// A STABLE member at an epoch other than its target's is caught.
func TestAssertStableAtTargetEpoch(t *testing.T) {
	c, g, m := assertGroup(t)
	var out Output
	next := m.assignment
	next.epoch = 0
	c.setAssignment(g, m, next, &out)
	require.Equal(t, []string{"consumer-coordinator: member A STABLE at epoch 0, target epoch 1"}, asserts(&out))
}

// Lists out of order or with a partition twice are caught too.
func TestAssertAssignedSortedUnique(t *testing.T) {
	c, g, m := assertGroup(t)
	var out Output
	next := m.assignment
	next.assigned = []protocol.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0}}
	c.setAssignment(g, m, next, &out)
	require.Equal(t, []string{"consumer-coordinator: member A assigned [{t 1} {t 0}] or revoking [] not sorted and unique"}, asserts(&out))
}
