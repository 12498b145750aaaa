package coordinator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// The classic side of the online migration (migration.go;
// GroupMetadataManager.convertToConsumerGroup and convertToClassicGroup,
// Kafka 4.0.0 = confluentinc/kafka v8.0.0).

// TestRemoveForUpgrade: the classic group's state is handed over (members,
// assignments, generation) and, on removal, parked JoinGroups are answered
// REBALANCE_IN_PROGRESS (completeAllJoinFutures), the group's timers are
// cancelled and the group is gone.
func TestRemoveForUpgrade(t *testing.T) {
	f := newFixture(t, "kafka-4.x")
	ids, gen := f.stableGroup(2)
	rec, empty, ok := f.b.ClassicGroupForUpgrade(testGroup)
	require.True(t, ok)
	assert.False(t, empty)
	assert.Equal(t, gen, rec.GenerationID)
	assert.Equal(t, protocol.ConsumerProtocolType, rec.ProtocolType)
	require.Len(t, rec.Members, 2)
	assert.NotEmpty(t, rec.Members[0].Assignment.Partitions)
	// Member 1 rejoins: the group is PreparingRebalance with its JoinGroup parked.
	require.Empty(t, f.send(1, dynamicJoin(ids[0])))
	require.Equal(t, PreparingRebalance, f.state())
	f.out.Reset()
	f.b.RemoveForUpgrade(f.now, testGroup, &f.out)
	jr := joinResp(t, only(t, f.out.Replies, 1))
	assert.Equal(t, protocol.RebalanceInProgress, jr.Error)
	_, _, ok = f.b.GroupState(testGroup)
	assert.False(t, ok, "the classic group is gone")
	assert.Equal(t, protocol.Never, f.b.NextDeadline(), "no timer of the group is left")
}

// TestImportDowngrade: a downgraded group is Stable at the record's
// generation with the record's assignments, persisted, and with rebalance
// it moves to PreparingRebalance at once so every member rejoins
// (convertToClassicGroup → prepareRebalance); without (a downgrade by
// static replacement) it stays Stable and members heartbeat as usual.
func TestImportDowngrade(t *testing.T) {
	for _, rebalance := range []bool{true, false} {
		f := newFixture(t, "kafka-4.x")
		ids, _ := f.stableGroup(2)
		rec, _, _ := f.b.ClassicGroupForUpgrade(testGroup)
		f.b.RemoveForUpgrade(f.now, testGroup, &f.out)
		rec.GenerationID = 12 // the consumer group's epoch
		f.out.Reset()
		f.b.ImportDowngrade(f.now, &rec, rebalance, &f.out)
		f.notePersist()
		require.NotNil(t, f.persisted)
		assert.Equal(t, int32(12), f.persisted.GenerationID)
		assert.Equal(t, int32(12), f.generation())
		r := only(t, f.send(1, hbReq(ids[0], 12)), 1).(*protocol.HeartbeatResponse)
		if rebalance {
			assert.Equal(t, PreparingRebalance, f.state())
			assert.Equal(t, protocol.RebalanceInProgress, r.Error, "members are told to rejoin")
		} else {
			assert.Equal(t, Stable, f.state())
			assert.Equal(t, protocol.None, r.Error)
		}
	}
}
