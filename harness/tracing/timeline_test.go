package tracing

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBinMean: a step series' time-weighted mean per bin.
func TestBinMean(t *testing.T) {
	// 0 until 0.5 s, then 10 until 2.25 s, then 4 until the end (3 s).
	xs := []float64{0, 0.5, 0.5, 2.25, 2.25, 3}
	ys := []float64{0, 0, 10, 10, 4, 4}
	bx, by := binMean(xs, ys, 3, 1)
	assert.Equal(t, []float64{0.5, 1.5, 2.5}, bx)
	assert.InDeltaSlice(t, []float64{5, 10, 0.25*10 + 0.75*4}, by, 1e-12)
}
