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
	// Counts tallies observations per kind.
	Counts = tracing.Counts
)

// Observation kinds (tracing.ObsEviction, ...).
const (
	ObsEviction   = tracing.ObsEviction
	ObsLeave      = tracing.ObsLeave
	ObsFence      = tracing.ObsFence
	ObsDeadMark   = tracing.ObsDeadMark
	ObsGeneration = tracing.ObsGeneration
	ObsSettle     = tracing.ObsSettle
	ObsFault      = tracing.ObsFault
)

// The harness's own trace event kinds (tracing.EvSend, ...), beside the
// models' protocol.EventKind values.
const (
	EvSend          = tracing.EvSend
	EvDeliver       = tracing.EvDeliver
	EvDrop          = tracing.EvDrop
	EvLost          = tracing.EvLost
	EvRetransmit    = tracing.EvRetransmit
	EvFault         = tracing.EvFault
	EvFaultEnd      = tracing.EvFaultEnd
	EvProcess       = tracing.EvProcess
	EvBrokerRole    = tracing.EvBrokerRole
	EvBrokerProcess = tracing.EvBrokerProcess
	EvGroupType     = tracing.EvGroupType
)

// CountObservations tallies obs of one group ("" for all groups).
func CountObservations(obs []Observation, group string) Counts {
	return tracing.CountObservations(obs, group)
}
