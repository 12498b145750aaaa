package protocol

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table's rows are distinct and in numeric order, and String/Retriable
// read them (names as in Errors.java).
func TestErrorTable(t *testing.T) {
	require.True(t, slices.IsSorted(AllErrorCodes))
	require.Len(t, AllErrorCodes, len(errorTable))
	seen := map[string]bool{}
	for _, row := range errorTable {
		require.False(t, seen[row.name], row.name)
		seen[row.name] = true
		require.Equal(t, row.name, row.code.String())
		require.Equal(t, row.retriable, row.code.Retriable(), row.name)
	}
	require.Equal(t, "REBALANCE_IN_PROGRESS", RebalanceInProgress.String())
	require.True(t, CoordinatorNotAvailable.Retriable())
	require.False(t, FencedInstanceID.Retriable())
	require.Equal(t, "STALE_MEMBER_EPOCH", StaleMemberEpoch.String())
	require.False(t, StaleMemberEpoch.Retriable())
	require.Equal(t, "ERROR_99", ErrorCode(99).String())
	require.Equal(t, "ERROR_-7", ErrorCode(-7).String())
	require.Equal(t, "ERROR_1000", ErrorCode(1000).String())
}
