package client

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// stable drives a member to STABLE at epoch 3 owning t:0 and t:1, by hand.
func stable(t *testing.T) *Member {
	t.Helper()
	m := New(Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}}, rand.New(rand.NewPCG(1, 7)))
	var out Output
	m.CoordinatorFound(0, &out)
	m.AppPoll(0, &out)
	m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 3, HeartbeatIntervalMs: 5000,
		HasAssignment: true, Assignment: []protocol.TopicPartition{{Topic: "t"}, {Topic: "t", Partition: 1}}}, &out)
	m.CallbackDone(0, &out)
	m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 3, HeartbeatIntervalMs: 5000}, &out)
	require.Equal(t, Stable, m.State())
	return m
}

// requireAssert: out carries exactly one assert-failed event with detail,
// and the member stopped (FATAL, its partitions lost) instead of panicking
// or carrying on.
func requireAssert(t *testing.T, m *Member, out *Output, detail string) {
	t.Helper()
	var got []string
	fatal := false
	for _, e := range out.Events {
		if e.Kind == protocol.EvAssertFailed {
			got = append(got, e.Detail)
		}
		fatal = fatal || e.Kind == protocol.EvFatal
	}
	require.Equal(t, []string{detail}, got)
	require.True(t, fatal, "an EvFatal, which stops the Process")
	require.Equal(t, Fatal, m.State())
	require.Empty(t, m.Owned())
}

// A response that would lower the member epoch (a broker bug, or a stale
// response taken for a fresh one) is caught, not taken.
func TestAssertEpochNeverLowered(t *testing.T) {
	m := stable(t)
	var out Output
	m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 2, HeartbeatIntervalMs: 5000}, &out)
	requireAssert(t, m, &out, "membership: a response lowers the member epoch from 3 to 2")
}

// An assignment the broker did not sort, or that lists a partition twice.
func TestAssertAssignmentSortedUnique(t *testing.T) {
	m := stable(t)
	var out Output
	m.Response(0, &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", MemberEpoch: 4, HeartbeatIntervalMs: 5000,
		HasAssignment: true, Assignment: []protocol.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 1}}}, &out)
	requireAssert(t, m, &out, "membership: assignment [{t 1} {t 1}] not sorted and unique")
}

// STABLE while owning something other than the target (a broken
// reconciliation) is caught at the transition.
func TestAssertStableOwnsTarget(t *testing.T) {
	m := stable(t)
	var out Output
	m.state = Acknowledging
	m.target = []protocol.TopicPartition{{Topic: "t"}}
	m.transition(Stable, &out)
	requireAssert(t, m, &out, "membership: STABLE owning [{t 0} {t 1}], target [{t 0}]")
}
