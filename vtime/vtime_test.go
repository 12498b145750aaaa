package vtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestInstant(t *testing.T) {
	i := Instant(0).Add(1500 * time.Millisecond)
	require.Equal(t, int64(1500), i.Ms())
	require.Equal(t, 500*time.Millisecond, i.Sub(Instant(time.Second)))
	require.Equal(t, "1.5s", i.String())
	require.Equal(t, "never", Never.String())
	require.Equal(t, 1500*time.Millisecond, i.Duration())
}

func TestConst(t *testing.T) {
	var d Dist = Const(2 * time.Second)
	require.Equal(t, 2*time.Second, d.Draw(nil))
	require.Equal(t, "2s", d.String())
}
