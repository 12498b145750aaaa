package protoscript

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestPartsRoundTrip: what FormatParts writes, Parts reads back, ranges and
// the default topic included; a malformed word is an error, not a panic.
func TestPartsRoundTrip(t *testing.T) {
	ps, err := Parts([]string{"b:1", "a:0-2,5", "7"})
	require.NoError(t, err)
	require.Equal(t, "[a:0-2,5 b:1 t:7]", FormatParts(ps))
	again, err := Parts([]string{"a:0-2,5", "b:1", "t:7"})
	require.NoError(t, err)
	require.Equal(t, ps, again)
	require.Equal(t, "[a:0,1]", FormatParts([]protocol.TopicPartition{{Topic: "a"}, {Topic: "a", Partition: 1}}))
	require.Equal(t, "[]", FormatParts(nil))
	for _, bad := range []string{"a:x", "a:3-1", "a:1-"} {
		_, err := Parts([]string{bad})
		require.Error(t, err, bad)
	}
}
