package harness

import (
	"runtime"
	"slices"
	"testing"

	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/stretchr/testify/require"
)

// TestSteadyStateAllocationFree: once a group is Stable, a run allocates
// nothing per event (0 allocs/op in the steady state, so a long run's
// cost is its events, not the collector's). The
// benchmark-of-record scenario (auto-commit, heartbeats, a crash at 60 s,
// jittered latency) for 5 and for 20 simulated minutes: the longer run fires
// about four times the events and must allocate no more objects (a small
// slack for the runtime's own).
func TestSteadyStateAllocationFree(t *testing.T) {
	mallocs := func(dur string) (uint64, int64) {
		sc := recordScenario(t, 100, dur, 0)
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		res, err := Run(sc, 1, Options{})
		runtime.ReadMemStats(&b)
		require.NoError(t, err)
		return b.Mallocs - a.Mallocs, res.Summary.Events
	}
	short, shortEvents := mallocs("5m")
	long, longEvents := mallocs("20m")
	require.Greater(t, longEvents, 3*shortEvents)
	require.LessOrEqual(t, long, short+64, "allocations grew with simulated time: %d objects for %d events vs %d for %d",
		long, longEvents, short, shortEvents)
}

// TestSlotLinks: a slot keeps its first two connections inline and the
// rest in rare (most slots never have a third), in the order they were added, a re-opened one
// replaced in place, and forgets them all with the process.
func TestSlotLinks(t *testing.T) {
	var s slot
	s.setLink(0, chNode, 1)
	s.setLink(1, chCoord, 2)
	require.Nil(t, s.rare, "two links fit inline")
	s.setLink(2, chCoord, 3)
	s.setLink(1, chCoord, 4) // re-opened
	s.setLink(2, chCoord, 5)
	require.Equal(t, []link{{0, chNode, 1}, {1, chCoord, 4}, {2, chCoord, 5}}, slices.Collect(s.allLinks()))
	require.Equal(t, coordinator.Conn(5), s.link(2, chCoord))
	require.Equal(t, coordinator.Conn(0), s.link(2, chNode))
	s.clearProcess()
	require.Empty(t, slices.Collect(s.allLinks()))
	require.Equal(t, coordinator.Conn(0), s.link(2, chCoord))
}

// TestGroupPartitionRuns: a group's partition list kept as runs (partRun)
// lists each topic's partitions in order, then the added ones.
func TestGroupPartitionRuns(t *testing.T) {
	var g groupState
	g.addPartitions("a", 0, 2)
	g.addPartitions("b", 0, 1)
	g.addPartitions("a", 2, 1)
	g.addPartitions("c", 0, 0)
	require.Equal(t, []protocol.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1},
		{Topic: "b", Partition: 0}, {Topic: "a", Partition: 2}}, g.partitionList())
	require.Equal(t, 4, g.nparts)
}
