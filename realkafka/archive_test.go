package realkafka

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPackedEqualsRaw: the captured run converted from logs.tar.gz (only
// the lines the parsers read) equals its conversion from the raw logs, the
// raw logs are gone after packing, and packing is byte-for-byte
// reproducible (a committed archive does not change when packed again).
func TestPackedEqualsRaw(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run-smoke-4.3.1"))
	raw, err := Convert(dir)
	require.NoError(t, err)

	require.NoError(t, Pack(dir, true))
	first, err := os.ReadFile(filepath.Join(dir, ArchiveName))
	require.NoError(t, err)
	require.NoError(t, Pack(dir, false))
	second, err := os.ReadFile(filepath.Join(dir, ArchiveName))
	require.NoError(t, err)
	require.Equal(t, first, second, "packing is reproducible")
	for _, d := range []string{"brokers", "members"} {
		_, err := os.Stat(filepath.Join(dir, d))
		require.True(t, os.IsNotExist(err), "%s removed after packing", d)
	}
	packed, err := Convert(dir)
	require.NoError(t, err)
	require.Equal(t, raw, packed)
	require.NotEmpty(t, packed.Groups[0].Rebalances, "the archive was read, not an empty directory")
}
