package coordinator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestGroupForLastPartition: groupFor's one-entry cache (Broker.lastPart)
// answers as the map does for requests that alternate between groups, for
// a group the broker never hosted, and across a resignation and a
// re-election of a group.
func TestGroupForLastPartition(t *testing.T) {
	b := NewBroker(testConfig("kafka-3.x"))
	var out Output
	b.Elect(0, "a", 0, nil, &out)
	b.Elect(0, "b", 0, nil, &out)
	want := func(id string, code protocol.ErrorCode) {
		t.Helper()
		p, err := b.groupFor(id, protocol.APIHeartbeat)
		require.Equal(t, code, err, "group %q", id)
		if code == protocol.None {
			require.Same(t, b.parts[id], p, "group %q", id)
			assert.Equal(t, id, p.groupID)
		} else {
			assert.Nil(t, p)
		}
	}
	for range 3 {
		want("a", protocol.None)
		want("a", protocol.None)
		want("b", protocol.None)
		want("c", protocol.NotCoordinator)
		want("", protocol.InvalidGroupID)
	}
	b.Resign(0, "a", &out)
	want("a", protocol.NotCoordinator)
	want("b", protocol.None)
	b.Elect(0, "a", 0, nil, &out)
	want("a", protocol.None)
}
