package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeSampleOutput keeps the README's sample output honest: the block
// after the crash-one-member command must be what the command prints.
func TestReadmeSampleOutput(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	const marker = "`go run ./cmd/simrun run crash-one-member`:\n\n```\n"
	i := bytes.Index(readme, []byte(marker))
	require.GreaterOrEqual(t, i, 0, "README lost its sample output block")
	rest := string(readme[i+len(marker):])
	want := rest[:strings.Index(rest, "```")]
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, dispatch([]string{"run", "crash-one-member"}, &stdout, &stderr), stderr.String())
	require.Equal(t, want, stdout.String(), "update README.md's sample with the output of go run ./cmd/simrun run crash-one-member")
}

// TestReadmeTuneOutput keeps the README's first command honest: the block
// after it is what `simrun tune` prints (run in an empty directory, so the
// paths under results/ are the README's).
func TestReadmeTuneOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	const cmd = "go run ./cmd/simrun tune gc-pause --param 'groups[0].client.session.timeout.ms=6000..30000' --require 'false_evictions <= 0.1' --seeds 40\n"
	require.Contains(t, string(readme), "```sh\n"+cmd, "README's first command changed; update this test")
	const marker = "and answers:\n\n```\n"
	i := bytes.Index(readme, []byte(marker))
	require.GreaterOrEqual(t, i, 0, "README lost its tune output block")
	rest := string(readme[i+len(marker):])
	want := rest[:strings.Index(rest, "```")]
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(t.TempDir()))
	defer os.Chdir(wd)
	var stdout, stderr bytes.Buffer
	args := []string{"tune", "gc-pause", "--param", "groups[0].client.session.timeout.ms=6000..30000", "--require", "false_evictions <= 0.1", "--seeds", "40"}
	require.Equal(t, exitOK, dispatch(args, &stdout, &stderr), stderr.String())
	require.Equal(t, want, stdout.String(), "update README.md's tune sample with the output of its first command")
}
