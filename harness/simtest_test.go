package harness

import "github.com/rebalsim/rebalsim/internal/simtest"

// The test scenarios and trace helpers harness's tests share with the
// trace readers' (internal/simtest), under the names these tests use.
const (
	small           = simtest.Small
	allFaults       = simtest.AllFaults
	netTimelineTmpl = simtest.NetTimelineTmpl
)

var (
	parseSmall      = simtest.ParseSmall
	parse           = simtest.Parse
	exactUnlessSaid = simtest.ExactUnlessSaid
	find            = simtest.Find
	kindOf          = simtest.KindOf
	secs            = simtest.Secs
)
