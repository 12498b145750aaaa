package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogYSkipsZeroWhiskers: a log y axis with zero means or interval
// bounds (0 events in some runs) draws what is above 0 and skips the rest;
// with nothing above 0 it falls back to a linear axis instead of panicking
// after the sweep (a log axis cannot show 0).
func TestLogYSkipsZeroWhiskers(t *testing.T) {
	for _, s := range []LineSeries{
		{Name: "a", X: []float64{1, 2, 3}, Y: []float64{0, 2, 3}, Lo: []float64{0, 0, 1}, Hi: []float64{0, 4, 5}},
		{Name: "a", X: []float64{1, 2, 3}, Y: []float64{0, 0, 0}, Lo: []float64{0, 0, 0}, Hi: []float64{0, 4, 5}},
		{Name: "a", X: []float64{1, 2, 3}, Y: []float64{0, 0, 0}, Lo: []float64{0, 0, 0}, Hi: []float64{0, 0, 0}},
	} {
		f, err := Line(Style{Title: "t", XLabel: "x (s)", YLabel: "y (ms)", LogY: true}, []LineSeries{s}, nil)
		require.NoError(t, err)
		for _, format := range []string{"png", "svg"} {
			require.NotPanics(t, func() { _, err = Render(f, format) })
			require.NoError(t, err)
		}
	}
}
