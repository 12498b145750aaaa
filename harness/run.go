package harness

import (
	"errors"

	"github.com/rebalsim/rebalsim/scenario"
)

// Options adjusts one run. The zero value runs with no trace file.
type Options struct {
	// TraceJSONL, when non-nil, receives the trace as JSON lines.
	TraceJSONL interface{ Write([]byte) (int, error) }
}

// Result is what one run produced.
type Result struct {
	Summary Summary
}

// Run builds one world from the scenario, runs it for one seed and returns
// its summary. It is a pure function of (scenario, seed).
func Run(sc *scenario.Scenario, seed uint64, opts Options) (*Result, error) {
	return nil, errors.New("harness: not implemented yet")
}
