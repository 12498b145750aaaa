package coordinator

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestMemberSize keeps the coordinator's member in the 208-byte allocation
// size class (issue 15: live heap per member at 100,000 members; it was 232
// bytes, in the 240-byte class). Fails when a field added pushes it out.
func TestMemberSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(member{}), uintptr(208))
}

// TestStaticMemberKeepsInstanceID: the group.instance.id, kept behind a
// pointer, reads back as sent; a dynamic member has none and is not static.
func TestStaticMemberKeepsInstanceID(t *testing.T) {
	s := member{static: instanceIDRef("i-1")}
	require.True(t, s.isStatic())
	require.Equal(t, "i-1", s.instanceID())
	d := member{static: instanceIDRef("")}
	require.False(t, d.isStatic())
	require.Equal(t, "", d.instanceID())
}
