package outdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockIsExclusive: a second writer of a directory is refused until the
// first unlocks (two sweeps into one --out raced).
func TestLockIsExclusive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	unlock, err := Lock(dir)
	require.NoError(t, err)
	_, err = Lock(dir)
	assert.ErrorContains(t, err, "is being written by another simrun right now")
	unlock()
	unlock2, err := Lock(dir)
	require.NoError(t, err)
	unlock2()
}

// TestNoWritingThroughLinks: a symlink planted inside the directory, as the
// file or as a directory on the way, is refused and its target untouched;
// the directory itself may be a link.
func TestNoWritingThroughLinks(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	require.NoError(t, os.MkdirAll(real, 0o755))
	out := filepath.Join(base, "out")
	require.NoError(t, os.Symlink(real, out))
	require.NoError(t, WriteFile(out, filepath.Join(out, "a.csv"), []byte("ok")), "--out itself may be a link")

	target := filepath.Join(base, "target")
	require.NoError(t, os.WriteFile(target, []byte("precious"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(real, "points.csv")))
	err := WriteFile(out, filepath.Join(out, "points.csv"), []byte("x"))
	assert.ErrorContains(t, err, "is a symbolic link inside the output directory")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "precious", string(b))

	require.NoError(t, os.Symlink(base, filepath.Join(real, ".points")))
	err = WriteFile(out, filepath.Join(out, ".points", "p0.csv"), []byte("x"))
	assert.ErrorContains(t, err, ".points is a symbolic link")
	err = MkdirAll(out, filepath.Join(out, ".points"))
	assert.ErrorContains(t, err, ".points is a symbolic link")
	_, err = os.Stat(filepath.Join(base, "p0.csv"))
	assert.True(t, os.IsNotExist(err))
}
