package coordinator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestStaticMemberKeepsInstanceID: the group.instance.id, kept behind a
// pointer, reads back as sent; a dynamic member has none and is not static.
func TestStaticMemberKeepsInstanceID(t *testing.T) {
	s := member{cfg: &MemberConfig{GroupInstanceID: "i-1"}}
	require.True(t, s.isStatic())
	require.Equal(t, "i-1", s.instanceID())
	d := member{cfg: &MemberConfig{}}
	require.False(t, d.isStatic())
	require.Equal(t, "", d.instanceID())
}

// TestOutputResetKeepsNoResponses: Output.Reset leaves no reply, event or
// record reachable from its buffers (a rebalance's n JoinGroup and SyncGroup
// responses were kept alive by the stale slots), drops a buffer a burst grew
// beyond outputKeep, and keeps a steady flush's buffers without allocating.
func TestOutputResetKeepsNoResponses(t *testing.T) {
	var o Output
	o.Replies = append(o.Replies, Reply{Conn: 1, Corr: 2, Resp: &protocol.HeartbeatResponse{}})
	o.Events = append(o.Events, protocol.Event{Detail: "x"})
	o.Persist = append(o.Persist, GroupRecord{GroupID: "g"})
	o.Reset()
	require.Empty(t, o.Replies)
	require.Equal(t, Reply{}, o.Replies[:1][0], "the reply's slot is zeroed")
	require.Equal(t, protocol.Event{}, o.Events[:1][0])
	require.Equal(t, GroupRecord{}, o.Persist[:1][0])

	for range outputKeep + 1 {
		o.Replies = append(o.Replies, Reply{Resp: &protocol.HeartbeatResponse{}})
	}
	o.Reset()
	require.Zero(t, cap(o.Replies), "a burst's buffer is dropped")

	resp := &protocol.HeartbeatResponse{}
	steady := func() {
		o.Replies = append(o.Replies, Reply{Resp: resp}, Reply{Resp: resp})
		o.Reset()
	}
	steady()
	require.Zero(t, testing.AllocsPerRun(100, steady))
}

// TestMemberConfigShared: dynamic members joining with the same timeouts
// and the same protocol list share one MemberConfig (memberSize), the most recent
// first; different timeouts or another list (even an equal one) get their
// own; the cache keeps at most maxConfigs.
func TestMemberConfigShared(t *testing.T) {
	var b Broker
	ps := []protocol.GroupProtocol{{Name: "range"}}
	a := b.config("", time.Second, 2*time.Second, ps)
	require.Same(t, a, b.config("", time.Second, 2*time.Second, ps))
	require.NotSame(t, a, b.config("", time.Second, 3*time.Second, ps))
	require.NotSame(t, a, b.config("", time.Second, 2*time.Second, []protocol.GroupProtocol{{Name: "range"}}))
	require.NotSame(t, a, b.config("i-1", time.Second, 2*time.Second, ps), "a static member's own")
	require.Same(t, a, b.config("", time.Second, 2*time.Second, ps))
	require.Same(t, a, b.configs[0], "most recent first")
	for i := range 2 * maxConfigs {
		b.config("", time.Duration(i), 0, nil)
	}
	require.Len(t, b.configs, maxConfigs)
}

// TestHeapEntryPacked: a timer heap entry (packed: heapEntrySize) orders
// equal deadlines by arming order whatever the ids, and gives back both.
func TestHeapEntryPacked(t *testing.T) {
	a, b := newHeapEntry(5, 7, 1<<idBits-1), newHeapEntry(5, 8, 0)
	require.True(t, a.less(&b))
	require.False(t, b.less(&a))
	require.Equal(t, int32(1<<idBits-1), a.id())
	require.Equal(t, uint64(8), b.seq())
	require.Panics(t, func() { newHeapEntry(0, 0, 1<<idBits) })
}
