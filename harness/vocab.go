package harness

import "github.com/rebalsim/rebalsim/harness/tracing"

// The trace's vocabulary lives in package tracing, beside the readers of a
// finished trace (explain, Perfetto, timelines); the engine writes it under
// these names, which callers of harness keep using.
type (
	// TraceEvent is one event of a run's trace (tracing.Event).
	TraceEvent = tracing.Event
	// Observation is one classified fact of a run (tracing.Observation).
	Observation = tracing.Observation
	// ObsKind is the kind of an Observation.
	ObsKind = tracing.ObsKind
	// Rebalance is one settle episode (tracing.Rebalance).
	Rebalance = tracing.Rebalance
)
