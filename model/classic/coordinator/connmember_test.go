package coordinator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestConnMemberCacheForgetsRemovedMembers: Broker.connMember's shortcut
// (the member whose request last came on a connection) gives the answers of
// the id map (GroupCoordinator.validateCurrentMember): a member that left is
// unknown on the connection it used, and another member's request on that
// connection finds the other member. Not a Kafka test: it guards the
// simulator's lookup cache, which has no Kafka counterpart.
func TestConnMemberCacheForgetsRemovedMembers(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, gen := f.stableGroup(2)
	require.Equal(t, protocol.None, only(t, f.send(1, hbReq(ids[0], gen)), 1).Err(), "caches conn 1 -> member 0")
	commit := &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen, MemberID: ids[0]}
	require.Equal(t, protocol.None, only(t, f.send(1, commit), 1).Err())

	lr := only(t, f.send(1, leaveReq(protocol.LeaveGroupMember{MemberID: ids[0]})), 1).(*protocol.LeaveGroupResponse)
	require.Equal(t, protocol.None, lr.Error)
	// The lone remaining member's rejoin completes the DelayedJoin at once.
	jr := joinResp(t, only(t, f.send(2, dynamicJoin(ids[1])), 2))
	require.Equal(t, gen+1, jr.GenerationID)
	require.Equal(t, CompletingRebalance, f.state())

	// The member that left, on its old connection, with the current
	// generation: unknown (a stale cache would answer NONE).
	assert.Equal(t, protocol.UnknownMemberID, only(t, f.send(1, hbReq(ids[0], gen+1)), 1).Err())
	commit = &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen + 1, MemberID: ids[0]}
	assert.Equal(t, protocol.UnknownMemberID, only(t, f.send(1, commit), 1).Err())
	// Another member on that connection is found.
	assert.Equal(t, protocol.None, only(t, f.send(1, hbReq(ids[1], gen+1)), 1).Err())
	assert.Equal(t, protocol.UnknownMemberID, only(t, f.send(1, hbReq("unknown", gen+1)), 1).Err())
}
