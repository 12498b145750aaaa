// Package realkafka runs a rebalsim scenario on a real Kafka cluster: a KRaft
// controller, the scenario's brokers and one Java consumer per member, each
// in its own network namespace on a bridge, with the scenario's faults made
// by signals and nftables on the wall clock. It then turns the broker, client
// and driver logs into the same summary as `simrun run --json`
// (harness.Summary).
//
// This is the one package of the project that reads the wall clock and runs
// goroutines: it drives real processes. Nothing under sim/ or model/ imports
// it. The design, the log lines it parses (with file:line@tag) and what it
// measured are in docs/real-kafka-testbed.md; how to run it is docs/REAL.md.
//
// Files: plan.go (scenario → what to start, and what cannot be made here),
// maven.go (jars through Maven), netns.go (namespaces, bridge, nftables),
// timeline.go (the wall-clock fault timeline), orchestrate.go (one
// repetition), parse.go (log lines), convert.go (logs → harness.Summary).
package realkafka
