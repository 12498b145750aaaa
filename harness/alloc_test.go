package harness

import (
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
	"github.com/stretchr/testify/require"
)

// TestSteadyStateAllocationFree: once a group is Stable, a run allocates
// nothing per event (issue 15: 0 allocs/op in the steady state). The
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

// TestSlotSize: a member's slot (its process wiring, plus the embedded
// slotMetrics the watchers keep) stays within 176 bytes, a Go size class
// (issue 15, memory per member; issue 13 split the metrics half out without
// growing it), a kernel timer at 16 and a connection's record (world.conns) at 12.
func TestSlotSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(slot{}), uintptr(176))
	require.LessOrEqual(t, unsafe.Sizeof(sim.Timer{}), uintptr(16))
	require.LessOrEqual(t, unsafe.Sizeof(connInfo{}), uintptr(12))
	require.LessOrEqual(t, unsafe.Sizeof(ev{}), uintptr(16), "a queue slot is a pointer and an ev")
	require.LessOrEqual(t, unsafe.Sizeof(sim.Delivery[envelope]{}), uintptr(96), "the delivery table's entries")
	require.LessOrEqual(t, unsafe.Sizeof(slotMetrics{}), uintptr(48))
}

// TestSlotLinks: a slot keeps its first two connections inline and the
// rest in rare (issue 15), in the order they were added, a re-opened one
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

// TestGroupPartitionRuns: a group's partition list kept as runs (issue 15)
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
