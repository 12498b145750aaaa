package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.csv")
	require.NoError(t, WriteFile(p, []byte("old")))
	f, err := Create(p)
	require.NoError(t, err)
	_, err = f.WriteString("new, half written")
	require.NoError(t, err)
	b, _ := os.ReadFile(p)
	assert.Equal(t, "old", string(b), "a reader sees the old file until Commit")
	require.NoError(t, f.Commit())
	b, _ = os.ReadFile(p)
	assert.Equal(t, "new, half written", string(b))
	f.Abort() // after Commit: nothing happens

	g, err := Create(p)
	require.NoError(t, err)
	g.WriteString("dropped")
	g.Abort()
	b, _ = os.ReadFile(p)
	assert.Equal(t, "new, half written", string(b), "Abort leaves the file as it was")
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 1, "no temporary file left behind")
}

// TestErrorsNameTheUsersPath: an error names the user's path, not the
// hidden temp file, which the user never wrote.
func TestErrorsNameTheUsersPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no-such-dir", "trace.jsonl")
	err := WriteFile(p, []byte("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), p)
	assert.NotContains(t, err.Error(), ".tmp-")
	if _, err := os.Stat("/dev/full"); err == nil {
		err := WriteFile("/dev/full", make([]byte, 1<<16))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/dev/full")
	}
}

// TestLeftoverTempFilesRemoved: a write killed before
// its rename leaves ".NAME.tmp-*"; the next write of NAME removes it.
func TestLeftoverTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "points.csv")
	left := filepath.Join(dir, ".points.csv.tmp-123456")
	require.NoError(t, os.WriteFile(left, nil, 0o600))
	other := filepath.Join(dir, ".summary.csv.tmp-1")
	require.NoError(t, os.WriteFile(other, nil, 0o600))
	require.NoError(t, WriteFile(p, []byte("a,b\n")))
	_, err := os.Stat(left)
	assert.True(t, os.IsNotExist(err), "the leftover is gone")
	_, err = os.Stat(other)
	assert.NoError(t, err, "another path's temp file is left alone")
	assert.True(t, IsTemp(".points.csv.tmp-99"))
	assert.False(t, IsTemp("points.csv"))
}
