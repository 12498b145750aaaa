package coordinator

import (
	"fmt"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// The coordinator's own invariants, checked where an assignment is
// produced (setAssignment, after CurrentAssignmentBuilder) and where it is
// consumed (the response that hands the member its epoch and partitions),
// the pairing TIGER_STYLE asks for; the client checks its half (never
// lowering its epoch from a response) in model/consumer/client/assert.go.
// A failed check is an EvAssertFailed event, which the harness's
// model-assertion checker turns into a violation of the run with its
// seed, like the classic client's assertFailed (model/classic/client/
// assert.go); the broker carries on (it has no fatal state), so one model
// bug never panics a sweep. Callers test the condition first, so a
// passing check builds no message.
func (c *Coordinator) assertFailed(g *Group, out *Output, what string) {
	c.emit(out, g, protocol.Event{Kind: protocol.EvAssertFailed, Detail: "consumer-coordinator: " + what, Gen: g.Epoch})
}

// checkMember: the member epoch never runs ahead of the group epoch (a
// target is computed at a group epoch, and a member only ever takes its
// target's epoch: CurrentAssignmentBuilder.computeNextAssignment @v8.0.0);
// the assigned partitions and those pending revocation are each sorted
// and unique, and disjoint (a partition is revoked because it left the
// member's assignment: computeNextAssignment splits one list in two).
func (c *Coordinator) checkMember(g *Group, m *Member, out *Output) {
	if m.epoch > g.Epoch {
		c.assertFailed(g, out, fmt.Sprintf("member %s epoch %d > group epoch %d", m.ID, m.epoch, g.Epoch))
	}
	if !sortedUnique(m.assigned) || !sortedUnique(m.revoking) {
		c.assertFailed(g, out, fmt.Sprintf("member %s assigned %v or revoking %v not sorted and unique", m.ID, m.assigned, m.revoking))
	}
	for _, p := range m.revoking {
		if contains(m.assigned, p) {
			c.assertFailed(g, out, fmt.Sprintf("member %s has %v both assigned and pending revocation", m.ID, p))
			break
		}
	}
}

// checkStable: a STABLE member is at its target's epoch
// (computeNextAssignment sets STABLE with updateMemberEpoch(targetAssignmentEpoch)).
func (c *Coordinator) checkStable(g *Group, m *Member, targetEpoch int32, out *Output) {
	if m.state == Stable && m.epoch != targetEpoch {
		c.assertFailed(g, out, fmt.Sprintf("member %s STABLE at epoch %d, target epoch %d", m.ID, m.epoch, targetEpoch))
	}
}

func sortedUnique(l []protocol.TopicPartition) bool {
	for i := 1; i < len(l); i++ {
		if cmpTP(l[i-1], l[i]) >= 0 {
			return false
		}
	}
	return true
}
