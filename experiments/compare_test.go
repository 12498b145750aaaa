package experiments

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestComparePlotLeavesOutEqualPanels: the compare plot draws only the
// figures its table shows (panels of figures equal in every run were
// pairs of equal bars that said nothing), all of them with --all; recovery that
// moved by the same step on every seed gets its one-line note.
func TestComparePlotLeavesOutEqualPanels(t *testing.T) {
	fig := func(name string, a, b, lo, hi float64) FigureComparison {
		fc := FigureComparison{Figure: name, A: Num(a), B: Num(b), Diff: Num(b - a), DiffLo: Num(lo), DiffHi: Num(hi), Pairs: 5}
		fc.a, fc.b = Estimate{Value: a, Lo: a, Hi: a}, Estimate{Value: b, Lo: b, Hi: b}
		return fc
	}
	c := &Comparison{Seeds: 5, Figures: []FigureComparison{fig("evictions", 1, 1, 0, 0), fig("generations", 3, 3, 0, 0)}}
	c.A.Name, c.B.Name = "a", "b"
	assert.True(t, c.Figures[0].EqualInEveryRun())
	dir := t.TempDir()
	path, err := WriteComparePlot(c, dir, false)
	require.NoError(t, err)
	assert.Empty(t, path, "every figure equal: no panel, no plot")
	path, err = WriteComparePlot(c, dir, true)
	require.NoError(t, err)
	_, err = os.Stat(path)
	assert.NoError(t, err, "--all draws them")
	assert.Empty(t, c.QuantisedRecovery())
	c.Figures = append(c.Figures, fig("recovery_ms", 1041, 1335, 294, 294))
	assert.Contains(t, c.QuantisedRecovery(), "recovery_ms moved by the same 294 ms on all 5 seeds: recovery is quantised")
	c.Figures[2] = fig("recovery_ms", 1041, 1335, 100, 500)
	assert.Empty(t, c.QuantisedRecovery(), "a spread is not a grid step")
	assert.Equal(t, "recovery_ms", c.FigureLabel("recovery_ms"))
	c.ManyStep = true
	assert.Equal(t, "recovery_ms (first restart step)", c.FigureLabel("recovery_ms"), "a rolling restart's recovery is its first step")
	assert.Equal(t, "settled_after_fault_ms (deploy over)", c.FigureLabel("settled_after_fault_ms"))
}
