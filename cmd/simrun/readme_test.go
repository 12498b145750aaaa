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
