// Package simtest holds the test scenarios and trace helpers that the
// engine's tests (package harness) and the trace readers' tests (package
// harness/tracing) share, so neither copies the other's. It imports
// neither harness nor anything that does: harness's own tests import it.
package simtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/vtime"
)

// Small is a two-member group on one broker with constant latency, so the
// instants in the trace are easy to read; faults are appended.
const Small = `
name: obs
duration: %s
seed: 3
coordinator: {brokers: %d, profile: kafka-3.x, group.initial.rebalance.delay.ms: 1000}
network: {latency: 1ms}
topics: [{name: t, partitions: 4}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.x, session.timeout.ms: 10000, heartbeat.interval.ms: 3000}
    workload: {poll.interval: 500ms, poll.timeout: 500ms}
    start: {at: 0s, stagger: 100ms}
faults:
%s`

// SlowPoll is a two-member group whose g-1's poll() takes longer than
// max.poll.interval.ms from 20 s for 8 s: its heartbeat thread leaves the
// group (a poll-timeout eviction), the group rebalances and g-1 rejoins
// within the same settle episode (two generations).
const SlowPoll = `
name: slow-poll
duration: 60s
timing: exact
coordinator: {brokers: 1, profile: kafka-3.x}
network: {latency: 1ms}
topics: [{name: t, partitions: 4}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.x, max.poll.interval.ms: 5000}
    workload: {poll.interval: 200ms, poll.timeout: 500ms}
faults:
  - {at: 20s, slow-poll: g-1, for: 8s}
`

// ParseSmall is Small for the given duration, brokers and faults (YAML
// list items; "" for none), with timing: exact.
func ParseSmall(t testing.TB, duration string, brokers int, faults string) *scenario.Scenario {
	t.Helper()
	if faults == "" {
		faults = "  []\n"
	}
	src := fmt.Sprintf(Small, duration, brokers, faults)
	sc, err := scenario.Parse("obs.yaml", []byte(src))
	require.NoError(t, err)
	ExactUnlessSaid(sc, src)
	return sc
}

// AllFaults uses every fault kind, the extensions and a swarm.
const AllFaults = `  - {at: 20s, crash: g-1}
  - {at: 25s, restart: g-1}
  - {at: 40s, pause: g-0, for: 4s}
  - {at: 50s, slow-poll: g-1, for: 2s}
  - {at: 60s, partition: [g-1, coordinator], for: 3s}
  - {at: 70s, partition: [coordinator, g-0], for: 3s, direction: one-way}
  - {at: 80s, loss: 0.2, for: 5s}
  - {at: 90s, latency: {dist: uniform, min: 50ms, max: 150ms}, for: 5s}
  - {at: 100s, coordinator-failover: g}
  - {at: 110s, leave: g-0}
  - {at: 115s, join: g}
  - {at: 130s, rolling-restart: g, interval: 5s, downtime: 1s}
  - {at: 150s, filter: {api: Heartbeat, member: g-1, direction: request, action: drop}, for: 4s}
  - {at: 160s, filter: {api: SyncGroup, direction: response, action: delay, delay: 300ms}, for: 20s}
swarm:
  until: 200s
  crash: 1
  crash.downtime: 2s
  pause: 1
  pause.for: {dist: uniform, min: 100ms, max: 3s}
  partition: 0.5
  partition.for: 2s
  loss: 0.5
  loss.probability: 0.1
  loss.for: 3s
  latency: 0.5
  latency.value: 30ms
  latency.for: 3s
  coordinator-failover: 0.3
`

// NetTimelineTmpl is a three-member group over TCP with a constant 1 ms
// latency (every connection's RTO is 202 ms): brokers, session.timeout.ms
// and one fault item to fill in (network-model.md §6.3 and §7).
const NetTimelineTmpl = `
name: net-timeline
duration: 150s
coordinator: {brokers: %d, profile: kafka-3.x, group.initial.rebalance.delay.ms: 0}
network: {latency: 1ms}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-3.x, session.timeout.ms: %d}
    start: {at: 0s, stagger: 10ms}
faults:
  - %s
`

// Parse reads a test scenario. Test scenarios assert exact instants, so
// they run with timing: exact unless they say otherwise.
func Parse(t testing.TB, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("test.yaml", []byte(src))
	require.NoError(t, err)
	ExactUnlessSaid(sc, src)
	return sc
}

// ExactUnlessSaid sets timing: exact on a test scenario that does not
// choose its timing.
func ExactUnlessSaid(sc *scenario.Scenario, src string) {
	if !strings.Contains(src, "timing:") {
		sc.SetTiming(scenario.TimingExact)
	}
}

// Find returns the events matching pred.
func Find(tr []tracing.Event, pred func(e *tracing.Event) bool) []tracing.Event {
	var out []tracing.Event
	for i := range tr {
		if pred(&tr[i]) {
			out = append(out, tr[i])
		}
	}
	return out
}

// KindOf matches the events of kind k at node ("" for any node).
func KindOf(k protocol.EventKind, node string) func(e *tracing.Event) bool {
	return func(e *tracing.Event) bool { return e.Kind == k && (node == "" || e.Node == node) }
}

// Secs is an instant in seconds.
func Secs(a vtime.Instant) float64 { return float64(a) / 1e9 }

// FuzzSized reports whether sc is small enough for a fuzz target's short
// run (at most 64 members, 512 partitions, 16 brokers): big worlds are the
// benchmarks' business. The fuzz targets of harness, experiments and the
// CLI share it.
func FuzzSized(sc *scenario.Scenario) bool {
	members, partitions := 0, 0
	for _, g := range sc.Groups {
		members += g.Members
	}
	for _, tp := range sc.Topics {
		partitions += tp.Partitions
	}
	return members <= 64 && partitions <= 512 && sc.Coordinator.Brokers <= 16
}
