package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunTimeline: `simrun run --timeline` writes a PNG that decodes, and a
// wrong extension is refused with exit status 2.
func TestRunTimeline(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "gc.png")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"run", "gc-pause", "--timeline", out}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 1000, "wide enough to read the time axis")

	code = dispatch([]string{"run", "gc-pause", "--timeline", filepath.Join(dir, "gc.gif")}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr.String(), "drawn as .png or .svg")
}
