package realkafka

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

func builtin(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	data, ok := scenario.Builtin(name)
	require.True(t, ok, name)
	sc, err := scenario.Parse(name, data)
	require.NoError(t, err)
	return sc
}

// TestPlanCrashOneMember: the built-in's members, client settings and fault
// become the real run's JVMs, consumer properties and a SIGKILL at 60 s.
func TestPlanCrashOneMember(t *testing.T) {
	p, err := NewPlan(builtin(t, "crash-one-member"), "", false)
	require.NoError(t, err)
	require.Equal(t, "3.9.1", p.BrokerVersion, "kafka-3.x runs on the 3.9 line")
	require.Equal(t, 3, p.Brokers)
	require.Len(t, p.Members, 12)
	m := p.Members[3]
	require.Equal(t, "payments-3", m.Name)
	require.Equal(t, 150*time.Millisecond, m.StartAt, "start.stagger 50ms")
	require.Equal(t, "3.7.2", m.ClientVersion, "client profile kafka-3.x = 3.7")
	require.Equal(t, "10000", m.Props["session.timeout.ms"])
	require.Equal(t, "3000", m.Props["heartbeat.interval.ms"])
	require.Equal(t, "payments-3", m.Props["client.id"], "the converter maps member ids to members by client.id")
	require.Equal(t, "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor", m.Props["partition.assignment.strategy"])
	require.Equal(t, "lognormal:200:2000", m.Driver["poll.interval"], "the default processing time (INTERFACE.md: lognormal, median 200 ms, p99 2 s), drawn per batch by the driver too")
	require.Equal(t, []Action{{At: 60 * time.Second, Kind: "kill", Target: "payments-3", Fault: "{at: 1m0s, crash: payments-3}",
		Subject: "payments-3", Window: 15 * time.Second, WindowWhy: "least common period of heartbeat 3s, auto-commit 5s"}}, p.Actions,
		"the phase window is the simulator's: heartbeat 3 s and auto-commit 5 s repeat every 15 s (harness phaseWindow)")
	require.Empty(t, p.Dropped)
}

// TestPlanUnsupported: what cannot be made here is an error naming it, or,
// with drop, a list in the plan (and so in the summary).
func TestPlanUnsupported(t *testing.T) {
	cases := map[string]string{
		"lossy-network":   "network.latency: lognormal:2:40 (only a constant latency at or below 1ms can run here",
		"bug-kafka-12890": "faults (line 44): filter: per-API message filters need a protocol-aware proxy",
		"bug-kafka-10870": "coordinator.append.error: cannot be injected into a real broker",
		"bug-kafka-13891": "workload.assign.time",
	}
	for name, want := range cases {
		_, err := NewPlan(builtin(t, name), "", false)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), want, name)
		require.Contains(t, err.Error(), "--drop-unsupported", name)
		p, err := NewPlan(builtin(t, name), "", true)
		require.NoError(t, err, name)
		require.NotEmpty(t, p.Dropped, name)
		require.True(t, strings.Contains(strings.Join(p.Dropped, "\n"), want), name)
	}
	_, err := NewPlan(builtin(t, "consumer-crash-one-member"), "3.9.1", false)
	require.ErrorContains(t, err, "groups[payments].client.group.protocol: consumer needs a 4.x broker (broker 3.9.1; pass --kafka 4.4.0)")
	p, err := NewPlan(builtin(t, "consumer-crash-one-member"), "", false)
	require.NoError(t, err)
	require.Equal(t, "4.3.1", p.BrokerVersion)
	require.Equal(t, "consumer", p.Members[0].Props["group.protocol"])
	require.NotContains(t, p.Members[0].Props, "session.timeout.ms", "a consumer-protocol client refuses the classic session settings")
	_, err = NewPlan(builtin(t, "bug-kafka-9752"), "", false)
	require.ErrorContains(t, err, "client profile kafka-2.4: no kafka-clients jar that the driver can use (it needs ConsumerGroupMetadata, Kafka 2.5+); the nearest available is 2.5.1")
}

// TestPlanFaults: pause, partition, loss and restart become their kernel
// actions (docs/real-kafka-testbed.md §6.3), and a later start gets its
// JVM started ahead (withPrepares).
func TestPlanFaults(t *testing.T) {
	sc, err := scenario.Parse("f.yaml", []byte(`
name: f
duration: 120s
topics: [{name: t, partitions: 4}]
groups:
  - {id: g, members: 2, subscribe: [t]}
faults:
  - {at: 10s, pause: g-0, for: 15s}
  - {at: 30s, partition: [g-1, coordinator], for: 5s}
  - {at: 40s, loss: 0.05, for: 10s}
  - {at: 90s, crash: g-1, for: 5s}
`))
	require.NoError(t, err)
	p, err := NewPlan(sc, "4.4.0", false)
	require.NoError(t, err)
	var got []string
	for _, a := range p.Actions {
		got = append(got, a.At.String()+" "+a.Kind+" "+a.Target+" "+a.Peer)
	}
	require.Equal(t, []string{
		"10s stop g-0 ", "25s cont g-0 ", "30s cut g-1 coordinator", "35s heal g-1 coordinator",
		"40s loss  ", "50s loss  ", "1m30s kill g-1 ", "1m35s start g-1 ",
	}, got)
	acts := withPrepares(append([]Action{{At: 0, Kind: "start", Target: "g-1", Fault: "start"}}, p.Actions...))
	require.Equal(t, Action{At: 35 * time.Second, Kind: "prepare", Target: "g-1", Fault: p.Actions[7].Fault}, acts[5],
		"the restart's JVM starts 60 s ahead")
}

// TestPlanHostDownAndPartitions: host-down of a member and of the
// coordinator broker become the silence-kill-delete step and, after `for`,
// the host's return (docs/real-kafka-testbed.md §6.3); add-partitions is
// the Admin createPartitions from the tool host with the new count.
func TestPlanHostDownAndPartitions(t *testing.T) {
	sc, err := scenario.Parse("h.yaml", []byte(`
name: h
duration: 120s
topics: [{name: t, partitions: 4}]
groups:
  - {id: g, members: 2, subscribe: [t]}
faults:
  - {at: 10s, host-down: g-0, for: 20s}
  - {at: 40s, host-down: coordinator, for: 15s}
  - {at: 50s, host-down: g-1, for: 60s}
  - {at: 70s, add-partitions: t, partitions: 8}
`))
	require.NoError(t, err)
	p, err := NewPlan(sc, "", false)
	require.NoError(t, err, "host-down and add-partitions are made now")
	var got []string
	for _, a := range p.Actions {
		got = append(got, a.At.String()+" "+a.Kind+" "+a.Target+" "+a.Dur.String()+" "+strconv.Itoa(a.Count))
	}
	require.Equal(t, []string{
		"10s host-down g-0 20s 0", "30s host-up g-0 0s 0",
		"40s broker-host-down coordinator 15s 0", "50s host-down g-1 1m0s 0",
		"55s broker-host-up coordinator 0s 0", "1m10s add-partitions t 0s 8", "1m50s host-up g-1 0s 0",
	}, got)
	// A host's return is not a "start": no JVM is prepared ahead for it by
	// withPrepares (its namespace does not exist until host-down re-makes it).
	for _, a := range withPrepares(p.Actions) {
		require.NotEqual(t, "prepare", a.Kind)
	}
}

// TestPlanRollingRestartSet: a rolling restart with set: group.protocol:
// consumer (the classic → consumer migration, KIP-848 online upgrade) starts
// each member's next process with the consumer protocol's properties and
// without the classic ones a consumer-protocol client refuses
// (ConsumerConfig: session.timeout.ms, heartbeat.interval.ms and
// partition.assignment.strategy are rejected with group.protocol=consumer).
func TestPlanRollingRestartSet(t *testing.T) {
	sc, err := scenario.Parse("r.yaml", []byte(`
name: r
duration: 120s
coordinator: {profile: kafka-4.3}
topics: [{name: t, partitions: 4}]
groups:
  - {id: g, members: 2, subscribe: [t], client: {profile: kafka-4.x}}
faults:
  - {at: 30s, rolling-restart: g, interval: 10s, downtime: 2s, set: {group.protocol: consumer, group.remote.assignor: range}}
`))
	require.NoError(t, err)
	p, err := NewPlan(sc, "", false)
	require.NoError(t, err)
	want := map[string]string{"group.protocol": "consumer", "group.remote.assignor": "range",
		"session.timeout.ms": "", "heartbeat.interval.ms": "", "partition.assignment.strategy": ""}
	var got []string
	for _, a := range p.Actions {
		got = append(got, a.At.String()+" "+a.Kind+" "+a.Target)
		if a.Kind == "start" {
			require.Equal(t, want, a.Set)
		} else {
			require.Nil(t, a.Set)
		}
	}
	require.Equal(t, []string{"30s term g-0", "32s start g-0", "40s term g-1", "42s start g-1"}, got)
	m := p.Members[1]
	require.Equal(t, "45000", m.Props["session.timeout.ms"], "before the restart the member is classic")
	acts := withPrepares(p.Actions)
	require.Equal(t, want, acts[0].Set, "the JVM started ahead of the restart gets the new properties")
	applySet(&m, want)
	require.True(t, m.Consumer)
	require.Equal(t, "consumer", m.Props["group.protocol"])
	require.NotContains(t, m.Props, "session.timeout.ms")
	require.NotContains(t, m.Props, "partition.assignment.strategy")
	require.Equal(t, "g-1", m.Props["client.id"], "the set keeps the member's own client.id")
	// On a 3.x broker the consumer protocol cannot run.
	_, err = NewPlan(sc, "3.9.1", false)
	require.ErrorContains(t, err, "set: group.protocol: consumer needs a 4.x broker")
}

// TestPreparesAfterStarts: a restart less than 60 s after the run's start is
// prepared at the member's first start; that prepare must come after the
// first start's go, or the go reaches the restart's JVM (with a rolling
// restart's set: already applied) and the first JVM is orphaned.
func TestPreparesAfterStarts(t *testing.T) {
	acts := withPrepares([]Action{
		{At: 0, Kind: "start", Target: "g-0", Fault: "start"},
		{At: 30 * time.Second, Kind: "term", Target: "g-0", Fault: "r"},
		{At: 32 * time.Second, Kind: "start", Target: "g-0", Fault: "r", Set: map[string]string{"group.protocol": "consumer"}},
	})
	var got []string
	for _, a := range acts {
		got = append(got, a.At.String()+" "+a.Kind)
	}
	require.Equal(t, []string{"0s start", "0s prepare", "30s term", "32s start"}, got)
	require.Equal(t, "consumer", acts[1].Set["group.protocol"])
}
