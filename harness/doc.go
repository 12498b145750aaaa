// Package harness is the engine that runs one scenario for one seed: it
// builds a world (coordinator brokers, member processes, the simulated TCP
// network, the fault timeline, the application workload), drives the pure
// models of model/classic/client and model/classic/coordinator from one sim.Queue, and
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
// A member position is a slot (world.go): its process wiring (the model,
// its connections, its timers) and, embedded, its slotMetrics, what the
// watchers keep of it (alive time, owned partitions, the last leave).
//
// Watching a run:
//   - trace.go records every event, hashes it (the trace hash of the
//     summary) and optionally writes JSON lines (docs/TRACE.md); the
//     events' vocabulary (TraceEvent and the harness's kinds, Observation)
//     is package harness/tracing's, aliased here;
//   - checkers.go holds the invariant checkers (single owner per
//     generation, monotonic generations, liveness, exclusive ownership,
//     model assertions, a member owning only topics it subscribes to): they read the world through a read-only runView
//     (view.go), and a violation fails the run and names its seed;
//   - observe.go classifies model events into typed observations
//     (evictions, dead marks, rebalances), which metrics.go and summary.go
//     turn into the figures DESIGN.md defines, and oracles.go into anomaly
//     findings (from the events and an endState, never the world);
//   - shrink.go reduces a failing run's faults.
//
// Reading a finished trace is not the engine's job: harness/tracing holds
// the readers (Explain for simrun explain, WritePerfetto for --perfetto,
// TimelineOf for --timeline, Series for an experiment's timeline plot),
// which take a Result's Trace and Observations.
//
// Run (run.go) is the entry point: a pure function of (scenario, seed,
// options) returning a Result whose Summary is docs/INTERFACE.md's JSON.
package harness
