package report

import (
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTickLabel: ticks read "50000", not "50000.00": a tick is a value, not a measurement with two decimals.
func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{50000: "50000", 0.5: "0.5", 0: "0", 1e-5: "1e-05", 2.25: "2.25", 1234567: "1234570"} {
		assert.Equal(t, want, TickLabel(v))
	}
	for _, tk := range (cleanTicks{}).Ticks(0, 50000) {
		assert.NotContains(t, tk.Label, ".00")
	}
}

// TestHeatmapPalette: a non-negative quantity gets a sequential palette
// (light for low, dark for high); values straddling 0 a diverging one.
func TestHeatmapPalette(t *testing.T) {
	h := Heat{XCats: Categories{"a", "b"}, YCats: Categories{"x"}, Z: [][]float64{{0, 10}}, ZLabel: "rate (per member-hour)"}
	f, err := Heatmap(Style{Title: "t"}, h)
	require.NoError(t, err)
	_, isSeq := f.(heatFigure).cm.(*sequential)
	assert.True(t, isSeq, "non-negative: sequential")
	h.Z = [][]float64{{-5, 10}}
	f, err = Heatmap(Style{Title: "t"}, h)
	require.NoError(t, err)
	_, isSeq = f.(heatFigure).cm.(*sequential)
	assert.False(t, isSeq, "values on both sides of 0: diverging")
	cm := &sequential{stops: []color.NRGBA{{R: 255, G: 255, B: 255, A: 255}, {A: 255}}, min: 0, max: 10}
	lo, _ := cm.At(0)
	hi, _ := cm.At(10)
	assert.Greater(t, luminance(lo), luminance(hi), "light for low values")
	mid, _ := cm.At(5)
	assert.InDelta(t, (luminance(lo)+luminance(hi))/2, luminance(mid), 0.05)
	_, err = cm.At(math.NaN())
	assert.Error(t, err)
}

// TestProblemsFindsCutLabels: Problems reports a label that cannot fit even
// at the smallest font, and a too-wide legend.
func TestProblemsFindsCutLabels(t *testing.T) {
	long := strings.Repeat("a very long axis label ", 12)
	f, err := Line(Style{Title: "t", XLabel: "x (s)", YLabel: long}, []LineSeries{{Name: strings.Repeat("legend ", 20), X: []float64{1, 2}, Y: []float64{1, 2}}}, nil)
	require.NoError(t, err)
	p := Problems(f)
	joined := strings.Join(p, "\n")
	assert.Contains(t, joined, "y label")
	assert.Contains(t, joined, "legend is")
	ok, err := Line(Style{Title: "t", XLabel: "x (s)", YLabel: "y (ms)"}, []LineSeries{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}, nil)
	require.NoError(t, err)
	assert.Empty(t, Problems(ok))
}

// TestProblemsFindsCategoryCollisions: bar and box categories whose labels
// run into each other are a problem (a review of the plots found "category labels collide;
// the report says nothing"), and a legend too wide for a column beside the
// data goes below it, leaving the data area its width.
func TestProblemsFindsCategoryCollisions(t *testing.T) {
	cats := Categories{"classic eager range", "classic cooperative-sticky", "consumer uniform", "consumer range", "static eager range", "static cooperative-sticky", "classic roundrobin", "classic sticky"}
	series := []BarSeries{{Name: "a", Y: make([]float64, len(cats)), Lo: make([]float64, len(cats)), Hi: make([]float64, len(cats))}}
	f, err := Bar(Style{Title: "t", XLabel: "protocol", YLabel: "y (ms)"}, cats, series)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(Problems(f), "\n"), "overlap", "eight long category labels on 16 cm")
	b, err := Box(Style{Title: "t", XLabel: "protocol", YLabel: "y (ms)"}, cats, []BoxSeries{{Name: "a", Values: [][]float64{{1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}}}})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(Problems(b), "\n"), "overlap", "box categories too")
	wide, err := Line(Style{Title: "t", XLabel: "x (s)", YLabel: "y (ms)"}, []LineSeries{{Name: "session timeout 10 s, heartbeat 3 s, eager", X: []float64{1, 2}, Y: []float64{1, 2}}}, nil)
	require.NoError(t, err)
	assert.Empty(t, Problems(wide), "a wide legend goes below the data, where it fits")
	assert.Zero(t, wide.(plotFigure).legendWidth(draw.New(vgimg.New(Width, Height))), "no column at the right")
}
