//go:build unix

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWritesIntoWhatTheUserNames: a symlink is followed,
// not replaced; a FIFO is written into, not replaced; /dev/null stays a
// device; "-" is standard output.
func TestWritesIntoWhatTheUserNames(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, WriteFile(link, []byte("new")))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the symlink is still a symlink")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "new", string(b), "written through the link")

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	require.NoError(t, WriteFile(fifo, []byte("through the pipe")))
	assert.Equal(t, "through the pipe", string(<-got))
	fi, err = os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO is still a FIFO")

	require.NoError(t, WriteFile(os.DevNull, []byte("x")))
	fi, err = os.Lstat(os.DevNull)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeDevice, "/dev/null is still a device")

	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := Stdout
	Stdout = w
	defer func() { Stdout = old }()
	require.NoError(t, WriteFile("-", []byte("to stdout")))
	w.Close()
	b, _ = io.ReadAll(r)
	assert.Equal(t, "to stdout", string(b))
}
