// Package harness is the engine that runs one scenario for one seed: it
// builds a world (coordinator brokers, member processes, the simulated TCP
// network, the fault timeline, the application workload), drives the pure
// models of model/client and model/coordinator from one sim.Queue, and
// watches what they do.
//
// The models never perform anything: every call returns an Output (requests
// to send, connections to open, trace events), and the harness decides when
// a message arrives, is lost or is held (world.go). One event loop fires the
// queue's events in (time, seeded tie-break) order: network deliveries,
// each member's application-thread and heartbeat-thread deadlines, broker
// deadlines, process starts, faults and their ends (faults.go, filter.go,
// swarm.go). Time always advances (limits.go).
//
// Watching a run:
//   - trace.go records every event, hashes it (the trace hash of the
//     summary) and optionally writes JSON lines (docs/TRACE.md);
//   - checkers.go holds the invariant checkers (single owner per
//     generation, monotonic generations, liveness, model assertions): a
//     violation fails the run and names its seed;
//   - observe.go classifies model events into typed observations
//     (evictions, dead marks, rebalances), which metrics.go and summary.go
//     turn into the figures DESIGN.md defines, and oracles.go into anomaly
//     findings;
//   - explain.go, perfetto.go read a finished trace (simrun explain,
//     --perfetto); shrink.go reduces a failing run's faults.
//
// Run (run.go) is the entry point: a pure function of (scenario, seed,
// options) returning a Result whose Summary is docs/INTERFACE.md's JSON.
package harness
