package client

import (
	"fmt"
	"slices"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// The membership's own invariants, the client's half of the pairs the
// broker checks where it produces an assignment (model/consumer/
// coordinator/assert.go): the client consumes the broker's epoch and
// partitions, and checks them as it takes them. A failed check is
// reported as the classic client's assertFailed does (model/classic/
// client/assert.go): an EvAssertFailed event, which the harness's
// model-assertion checker turns into a violation of the run with its seed,
// and the member stops as on a fatal error (an EvFatal the Process stops
// on), losing its partitions, so a broken state is never carried on and
// one model bug never panics a sweep. Callers test the condition first.
func (m *Member) assertFailed(out *Output, what string) {
	m.emit(out, protocol.Event{Kind: protocol.EvAssertFailed, Detail: "membership: " + what, Gen: m.epoch})
	m.emit(out, protocol.Event{Kind: protocol.EvFatal, Err: protocol.UnknownServerError, Detail: "assert", Gen: m.epoch})
	m.transition(Fatal, out)
	m.lose(out)
}

// checkResponse: a successful response never lowers the member epoch
// (the broker's member epoch only moves up to its target's, and the
// member's own resets — join 0, leave −1/−2 — happen before the request
// that carries them), and its assignment is sorted and unique (the
// broker's assigned list is). It reports whether the response may be used.
// Kafka: AbstractMembershipManager.onHeartbeatSuccess takes
// response.memberEpoch() as is @v8.0.0; the broker's side is
// CurrentAssignmentBuilder.computeNextAssignment.
func (m *Member) checkResponse(r *protocol.ConsumerGroupHeartbeatResponse, out *Output) bool {
	if r.MemberEpoch < m.epoch {
		m.assertFailed(out, fmt.Sprintf("a response lowers the member epoch from %d to %d", m.epoch, r.MemberEpoch))
		return false
	}
	if r.HasAssignment && !sortedUnique(r.Assignment) {
		m.assertFailed(out, fmt.Sprintf("assignment %v not sorted and unique", r.Assignment))
		return false
	}
	return true
}

// checkStable: a member becomes STABLE only owning its target (the
// client's form of "a STABLE member is at its target's epoch": it has
// reconciled the target of the epoch it holds), and owns a sorted, unique
// list. Kafka: AbstractMembershipManager.transitionTo(STABLE) after
// onHeartbeatSuccess / the ack @v8.0.0.
func (m *Member) checkStable(out *Output) bool {
	if !slices.Equal(m.owned, m.target) || !sortedUnique(m.owned) {
		m.assertFailed(out, fmt.Sprintf("STABLE owning %v, target %v", m.owned, m.target))
		return false
	}
	return true
}

func sortedUnique(l []protocol.TopicPartition) bool {
	for i := 1; i < len(l); i++ {
		a, b := l[i-1], l[i]
		if a.Topic > b.Topic || (a.Topic == b.Topic && a.Partition >= b.Partition) {
			return false
		}
	}
	return true
}
