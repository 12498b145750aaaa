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
