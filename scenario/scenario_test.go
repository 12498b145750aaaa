// Tests for the scenario file. Goal: every key of INTERFACE.md is parsed and
// defaulted, every bad input gives one exact, located message, overrides
// reach every key, built-ins parse, and no input panics (FuzzParse).
// Method: table tests over small literal files; messages are compared
// byte for byte because users and scripts read them.
package scenario

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const minimal = `name: t
topics:
  - {name: orders, partitions: 4}
groups:
  - id: g
    members: 2
    subscribe: [orders]
`

// TestParseErrors: each bad input gives exactly this message.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"heartbeat not below session", minimal + `    client:
      session.timeout.ms: 2000
`, "f.yaml:9: groups[0].client.session.timeout.ms: heartbeat.interval.ms (3000) must be lower than session.timeout.ms (2000)"},
		{"heartbeat not below default session", minimal + `    client:
      heartbeat.interval.ms: 45000
`, "f.yaml:9: groups[0].client.heartbeat.interval.ms: heartbeat.interval.ms (45000) must be lower than session.timeout.ms (45000)"},
		{"missing name", `topics: []
`, "f.yaml:1: name: missing required key"},
		{"unknown top-level key", "nme: x\n", "f.yaml:1: nme: unknown key (did you mean name?); known keys: name, duration, seed, coordinator, network, topics, groups, faults, swarm, timing, measure, oracles"},
		{"unknown client key", minimal + `    client:
      sesion.timeout.ms: 1
`, "f.yaml:9: groups[0].client.sesion.timeout.ms: unknown key (did you mean session.timeout.ms?); known keys: profile, session.timeout.ms, heartbeat.interval.ms, max.poll.interval.ms, retry.backoff.ms, retry.backoff.max.ms, request.timeout.ms, partition.assignment.strategy, group.instance.id, enable.auto.commit, auto.commit.interval.ms, reconnect.backoff.ms, reconnect.backoff.max.ms, socket.connection.setup.timeout.ms, socket.connection.setup.timeout.max.ms, group.protocol, group.remote.assignor, metadata.max.age.ms"},
		{"negative duration", "duration: -1s\n" + minimal, "f.yaml:1: duration: negative duration -1s"},
		{"duration without unit", "duration: 100\n" + minimal, `f.yaml:1: duration: a duration needs a unit, like "100ms" or "100s"`},
		{"ms key given a Go duration", minimal + `    client:
      session.timeout.ms: 10s
`, `f.yaml:9: groups[0].client.session.timeout.ms: Kafka *.ms properties are integers in milliseconds, got "10s"`},
		{"negative ms", minimal + `    client:
      retry.backoff.ms: -5
`, "f.yaml:9: groups[0].client.retry.backoff.ms: negative duration -5ms"},
		{"loss above 1", "network: {loss: 1.5}\n" + minimal, "f.yaml:1: network.loss: must be between 0 and 1, got 1.5"},
		{"unknown timing", "timing: fast\n" + minimal, `f.yaml:1: timing: must be realistic or exact, not "fast"`},
		{"measure after the end", "duration: 60s\nmeasure: {from: 60s}\n" + minimal, "f.yaml:2: measure.from: 1m0s is not before the end of the run (duration 1m0s)"},
		{"unknown measure key", "measure: {form: 10s}\n" + minimal, "f.yaml:1: measure.form: unknown key (did you mean from?); known keys: from"},
		{"zero members", strings.Replace(minimal, "members: 2", "members: 0", 1), "f.yaml:6: groups[0].members: must be between 1 and 100000, got 0"},
		{"too many members", strings.Replace(minimal, "members: 2", "members: 100001", 1), "f.yaml:6: groups[0].members: must be between 1 and 100000, got 100001"},
		{"unknown topic", strings.Replace(minimal, "[orders]", "[orders, refunds]", 1), `f.yaml:7: groups[0].subscribe[1]: unknown topic "refunds"`},
		{"unknown profile", minimal + `    client: {profile: kafka-9}
`, `f.yaml:8: groups[0].client.profile: unknown profile "kafka-9"; valid profiles: kafka-0.10, kafka-2.3, kafka-2.3.0, kafka-2.4, kafka-2.5, kafka-2.6, kafka-2.6.1, kafka-2.7, kafka-2.7.2, kafka-2.8, kafka-2.8.1, kafka-2.x, kafka-3.0, kafka-3.2, kafka-3.3, kafka-3.3.2, kafka-3.4, kafka-3.6, kafka-3.7, kafka-3.8, kafka-3.9, kafka-3.x, kafka-4.0, kafka-4.1, kafka-4.2, kafka-4.3, kafka-4.4, kafka-4.x`},
		{"fault member out of range", minimal + `faults:
  - {at: 1s, crash: g-2}
`, `f.yaml:9: faults[0].crash: member "g-2" does not exist: group g has members g-0 to g-1`},
		{"fault member allowed after join", minimal + `faults:
  - {at: 1s, join: g}
  - {at: 2s, crash: g-3}
`, `f.yaml:10: faults[1].crash: member "g-3" does not exist: group g has members g-0 to g-2`},
		{"fault unknown member", minimal + `faults:
  - {at: 1s, pause: h-0, for: 1s}
`, `f.yaml:9: faults[0].pause: unknown member "h-0"; members are named <group>-<index>`},
		{"fault without action", minimal + `faults:
  - {at: 1s}
`, "f.yaml:9: faults[0]: a fault needs one action: crash, restart, pause, slow-poll, partition, loss, host-down, latency, coordinator-failover, leave, join, rolling-restart, filter, add-partitions"},
		{"fault with two actions", minimal + `faults:
  - {at: 1s, crash: g-0, leave: g-1}
`, "f.yaml:9: faults[0].leave: a fault has exactly one action, got crash and leave"},
		{"pause without for", minimal + `faults:
  - {at: 1s, pause: g-0}
`, `f.yaml:9: faults[0].for: missing key: pause needs "for"`},
		{"restart with for", minimal + `faults:
  - {at: 1s, restart: g-0, for: 2s}
`, `f.yaml:9: faults[0].for: restart does not take "for"`},
		{"host-down without for", minimal + `faults:
  - {at: 1s, host-down: g-0}
`, `f.yaml:9: faults[0].for: missing key: host-down needs "for"`},
		{"crash of an unknown broker", minimal + `faults:
  - {at: 1s, crash: broker-3, for: 2s}
`, `f.yaml:9: faults[0].crash: unknown broker "broker-3"; brokers are broker-0 to broker-2`},
		{"partition with one endpoint", minimal + `faults:
  - {at: 1s, partition: [g-0], for: 2s}
`, "f.yaml:9: faults[0].partition: expected two endpoints [a, b], got 1"},
		{"add-partitions of an unknown topic", minimal + `faults:
  - {at: 1s, add-partitions: payments, partitions: 8}
`, `f.yaml:9: faults[0].add-partitions: unknown topic "payments"; topics: orders`},
		{"add-partitions not raising the count", minimal + `faults:
  - {at: 1s, add-partitions: orders, partitions: 8}
  - {at: 2s, add-partitions: orders, partitions: 6}
`, `f.yaml:10: faults[1].partitions: topic orders has 8 partitions at 2s; add-partitions must raise the count (Kafka cannot lower it)`},
		{"add-partitions without a count", minimal + `faults:
  - {at: 1s, add-partitions: orders}
`, `f.yaml:9: faults[0].partitions: missing key: add-partitions needs "partitions" (the topic's new partition count)`},
		{"partitions on another fault", minimal + `faults:
  - {at: 1s, restart: g-0, partitions: 6}
`, `f.yaml:9: faults[0].partitions: restart does not take "partitions"`},
		{"unknown group in failover", minimal + `faults:
  - {at: 1s, coordinator-failover: h}
`, `f.yaml:9: faults[0].coordinator-failover: unknown group "h"; groups: g`},
		{"uniform min above max", "network: {latency: {dist: uniform, min: 5ms, max: 1ms}}\n" + minimal, "f.yaml:1: network.latency: uniform min (5ms) must not be greater than max (1ms)"},
		{"lognormal p99 below median", "network:\n  latency: {dist: lognormal, median: 5ms, p99: 1ms}\n" + minimal, "f.yaml:2: network.latency: lognormal p99 (1ms) must be greater than median (5ms)"},
		{"unknown distribution", "network:\n  latency: {dist: pareto}\n" + minimal, `f.yaml:2: network.latency.dist: unknown distribution "pareto"; valid: constant, uniform, exponential, lognormal`},
		{"wrong dist parameter", "network:\n  latency: {dist: uniform, min: 1ms, max: 2ms, mean: 3ms}\n" + minimal, "f.yaml:2: network.latency.mean: not a parameter of a uniform distribution; it takes: min, max"},
		{"unknown assignor", minimal + `    client: {partition.assignment.strategy: [range, fair]}
`, `f.yaml:8: groups[0].client.partition.assignment.strategy: unknown assignor "fair"; valid: range, roundrobin, sticky, cooperative-sticky`},
		{"cooperative-sticky before 2.4", minimal + `    client: {profile: kafka-2.3, partition.assignment.strategy: cooperative-sticky}
`, `f.yaml:8: groups[0].client.partition.assignment.strategy: assignor "cooperative-sticky" is not available in profile kafka-2.3 (KIP-429, Kafka 2.4)`},
		{"static membership on 0.10", minimal + `    client: {profile: kafka-0.10, group.instance.id: true}
`, "f.yaml:8: groups[0].client.group.instance.id: static membership needs profile kafka-2.3 or later (KIP-345); profile is kafka-0.10"},
		{"max.poll on 0.10", minimal + `    client: {profile: kafka-0.10, max.poll.interval.ms: 1000}
`, "f.yaml:8: groups[0].client.max.poll.interval.ms: not a property of profile kafka-0.10 (KIP-62 added it in Kafka 0.10.1)"},
		{"0.10 request timeout not above session", minimal + `    client: {profile: kafka-0.10, session.timeout.ms: 40000}
`, "f.yaml:8: groups[0].client.session.timeout.ms: request.timeout.ms (40000) must be greater than session.timeout.ms (40000) in profile kafka-0.10"},
		{"duplicate key", "name: a\nname: b\n", "f.yaml:2: name: duplicate key"},
		{"wrong type", strings.Replace(minimal, "members: 2", "members: many", 1), `f.yaml:6: groups[0].members: expected an integer, got "many"`},
		{"bool wrong type", minimal + `    client: {enable.auto.commit: yes please}
`, `f.yaml:8: groups[0].client.enable.auto.commit: expected true or false, got "yes please"`},
		{"topics not a list", "name: a\ntopics: {name: x}\n", "f.yaml:2: topics: expected a list, got a mapping"},
		{"duplicate topic", "name: a\ntopics:\n  - {name: x, partitions: 1}\n  - {name: x, partitions: 1}\n", `f.yaml:4: topics[1].name: duplicate topic "x"`},
		{"syntax error", "name: [a\n", "f.yaml:1: invalid YAML: the [ opened here is never closed (expected ',' or ']')"},
		{"empty", "", "f.yaml: empty scenario file"},
		{"min session above max", "coordinator: {group.min.session.timeout.ms: 70000, group.max.session.timeout.ms: 60000}\n" + minimal, "f.yaml:1: coordinator.group.min.session.timeout.ms: group.min.session.timeout.ms (70000) must not be greater than group.max.session.timeout.ms (60000)"},
		{"zero duration", "duration: 0s\n" + minimal, "f.yaml:1: duration: must be positive"},
		{"fault loss out of range", minimal + `faults:
  - {at: 1s, loss: -0.1, for: 1s}
`, "f.yaml:9: faults[0].loss: must be between 0 and 1, got -0.1"},
		{"partition same endpoint", minimal + `faults:
  - {at: 1s, partition: [coordinator, coordinator], for: 1s}
`, `f.yaml:9: faults[0].partition: the two endpoints must differ, got "coordinator" twice`},
		{"leading zero member", minimal + `faults:
  - {at: 1s, crash: g-01}
`, `f.yaml:9: faults[0].crash: unknown member "g-01"; members are named <group>-<index>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("f.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Equal(t, tc.want, err.Error())
			var e *Error
			assert.ErrorAs(t, err, &e)
		})
	}
}

// TestSessionOutsideBrokerRangeIsNotAParseError: the broker answers
// INVALID_SESSION_TIMEOUT at run time (GroupCoordinator.handleJoinGroup), a
// scenario someone may want to run.
func TestSessionOutsideBrokerRangeIsNotAParseError(t *testing.T) {
	s, err := Parse("f.yaml", []byte(minimal+"    client: {session.timeout.ms: 5000}\n"))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, s.Groups[0].Client.SessionTimeout)
	assert.Less(t, s.Groups[0].Client.SessionTimeout, s.Coordinator.MinSessionTimeout)
}

// full sets every key of INTERFACE.md to a non-default value.
const full = `name: everything
duration: 5m
seed: 42
coordinator: &coord
  brokers: 5
  profile: kafka-2.8
  group.initial.rebalance.delay.ms: 100
  group.min.session.timeout.ms: 1000
  group.max.session.timeout.ms: 60000
  group.max.size: 50
  load.time: 2s
  append.latency: {dist: lognormal, median: 5ms, p99: 200ms}
  append.bandwidth: 100MB/s
  offsets.commit.timeout.ms: 4000
  append.error.probability: 0.01
  append.error: NOT_ENOUGH_REPLICAS
  request.time: {dist: uniform, min: 1ms, max: 3ms}
  metadata.mode: kraft
  broker.session.timeout.ms: 12000
network:
  latency: {dist: exponential, min: 1ms, mean: 3ms}
  loss: 0.25
topics:
  - {name: orders, partitions: 24}
  - {name: refunds, partitions: 3}
groups:
  - id: pay-ments
    members: 7
    subscribe: [orders, refunds]
    client:
      profile: kafka-2.4
      session.timeout.ms: 12000
      heartbeat.interval.ms: 4000
      max.poll.interval.ms: 60000
      retry.backoff.ms: 50
      retry.backoff.max.ms: 500
      request.timeout.ms: 20000
      partition.assignment.strategy: [cooperative-sticky, sticky, roundrobin, range]
      group.instance.id: true
      enable.auto.commit: false
      metadata.max.age.ms: 60000
    workload:
      poll.interval: {dist: uniform, min: 10ms, max: 20ms}
      poll.timeout: 250ms
      assign.time: {dist: lognormal, median: 2ms, p99: 40ms}
      callback.time: {dist: constant, value: 7ms}
    start: {at: 1s, stagger: 50ms}
  - id: other
    members: 1
    subscribe: refunds
    client: {profile: kafka-0.10, partition.assignment.strategy: "range, roundrobin"}
faults:
  - {at: 260s, rolling-restart: pay-ments, interval: 10s, downtime: 2s}
  - {at: 60s, crash: pay-ments-3}
  - {at: 70s, restart: pay-ments-3}
  - {at: 80s, pause: pay-ments-4, for: 15s}
  - {at: 90s, slow-poll: pay-ments-5, for: 400s}
  - {at: 100s, partition: [pay-ments-6, coordinator], for: 20s}
  - {at: 130s, loss: 0.05, for: 30s}
  - {at: 160s, latency: {dist: uniform, min: 100ms, max: 300ms}, for: 30s}
  - {at: 60s, coordinator-failover: pay-ments}
  - {at: 220s, leave: other-0}
  - {at: 240s, join: pay-ments}
  - {at: 250s, crash: pay-ments-7}
  - {at: 290s, add-partitions: orders, partitions: 30}
`

// TestRoundTripEveryKey: every key of the format lands in its field.
func TestRoundTripEveryKey(t *testing.T) {
	s, err := Parse("full.yaml", []byte(full))
	require.NoError(t, err)
	ms := time.Millisecond
	assert.Equal(t, "everything", s.Name)
	assert.Equal(t, 5*time.Minute, s.Duration)
	assert.Equal(t, uint64(42), s.Seed)
	assert.Equal(t, "full.yaml", s.Source)
	assert.Equal(t, Coordinator{Brokers: 5, Profile: "kafka-2.8", InitialRebalanceDelay: 100 * ms,
		MinSessionTimeout: 1000 * ms, MaxSessionTimeout: 60000 * ms, MaxSize: 50, LoadTime: 2 * time.Second,
		FailoverDelay: 12 * time.Second, MetadataMode: "kraft", BrokerSessionTimeout: 12 * time.Second, BrokerHeartbeatInterval: 2 * time.Second,
		AppendLatency: Dist{Kind: DistLognormal, Median: 5 * ms, P99: 200 * ms}, AppendLatencySet: true, AppendBandwidth: 100_000_000,
		OffsetsCommitTimeout: 4 * time.Second, AppendErrorProbability: 0.01, AppendError: "NOT_ENOUGH_REPLICAS",
		RequestTime: Dist{Kind: DistUniform, Min: ms, Max: 3 * ms}}, s.Coordinator)
	assert.Equal(t, Network{Latency: Dist{Kind: DistExponential, Min: ms, Mean: 3 * ms}, Loss: 0.25}, s.Network)
	assert.Equal(t, []Topic{{"orders", 24}, {"refunds", 3}}, s.Topics)
	require.Len(t, s.Groups, 2)
	g := s.Groups[0]
	assert.Equal(t, "pay-ments", g.ID)
	assert.Equal(t, 7, g.Members)
	assert.Equal(t, []string{"orders", "refunds"}, g.Subscribe)
	assert.Equal(t, Client{Profile: "kafka-2.4", SessionTimeout: 12000 * ms, HeartbeatInterval: 4000 * ms,
		MaxPollInterval: 60000 * ms, RetryBackoff: 50 * ms, RetryBackoffMax: 500 * ms, RequestTimeout: 20000 * ms,
		Assignors:        []string{"cooperative-sticky", "sticky", "roundrobin", "range"},
		StaticMembership: true, AutoCommit: false, AutoCommitInterval: 5 * time.Second,
		ReconnectBackoff: 50 * ms, ReconnectBackoffMax: time.Second, MetadataMaxAge: 60000 * ms}, g.Client)
	assert.Equal(t, Workload{
		PollInterval:  Dist{Kind: DistUniform, Min: 10 * ms, Max: 20 * ms},
		PollTimeout:   Dist{Kind: DistConstant, Value: 250 * ms},
		AssignTime:    Dist{Kind: DistLognormal, Median: 2 * ms, P99: 40 * ms},
		CallbackTime:  Dist{Kind: DistConstant, Value: 7 * ms},
		AssignTimeSet: true,
	}, g.Workload)
	assert.Equal(t, Start{At: time.Second, Stagger: 50 * ms}, g.Start)
	o := s.Groups[1]
	assert.Equal(t, []string{"refunds"}, o.Subscribe)
	assert.Equal(t, []string{"range", "roundrobin"}, o.Client.Assignors)
	assert.Equal(t, 30000*ms, o.Client.SessionTimeout, "kafka-0.10 default")
	assert.Equal(t, time.Duration(0), o.Client.MaxPollInterval, "kafka-0.10 has no max.poll.interval.ms")

	sec := time.Second
	want := []Fault{
		{At: 60 * sec, Kind: FaultCrash, Target: "pay-ments-3", Line: 54},
		{At: 60 * sec, Kind: FaultCoordinatorFailover, Target: "pay-ments", Line: 61},
		{At: 70 * sec, Kind: FaultRestart, Target: "pay-ments-3", Line: 55},
		{At: 80 * sec, Kind: FaultPause, Target: "pay-ments-4", For: 15 * sec, Line: 56},
		{At: 90 * sec, Kind: FaultSlowPoll, Target: "pay-ments-5", For: 400 * sec, Line: 57},
		{At: 100 * sec, Kind: FaultPartition, Peers: [2]string{"pay-ments-6", "coordinator"}, For: 20 * sec, Line: 58},
		{At: 130 * sec, Kind: FaultLoss, Loss: 0.05, For: 30 * sec, Line: 59},
		{At: 160 * sec, Kind: FaultLatency, Latency: Dist{Kind: DistUniform, Min: 100 * ms, Max: 300 * ms}, For: 30 * sec, Line: 60},
		{At: 220 * sec, Kind: FaultLeave, Target: "other-0", Line: 62},
		{At: 240 * sec, Kind: FaultJoin, Target: "pay-ments", Line: 63},
		{At: 250 * sec, Kind: FaultCrash, Target: "pay-ments-7", Line: 64},
		{At: 260 * sec, Kind: FaultRollingRestart, Target: "pay-ments", Interval: 10 * sec, Downtime: 2 * sec, Line: 53},
		{At: 290 * sec, Kind: FaultAddPartitions, Target: "orders", Partitions: 30, Line: 65},
	}
	assert.Equal(t, want, s.Faults)

	gi, mi, ok := s.ResolveMember("pay-ments-6")
	assert.True(t, ok)
	assert.Equal(t, 0, gi)
	assert.Equal(t, 6, mi)
	assert.Equal(t, "pay-ments-6", MemberName("pay-ments", 6))
}

// TestDefaults: profile defaults apply where keys are absent (ConsumerConfig
// and KafkaConfig defaults of each release; KIP-735 for 3.x).
func TestDefaults(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		profile                      string
		session, request, maxPoll    time.Duration
		assignors                    []string
		initialDelay, maxSessionTime time.Duration
	}{
		{"kafka-0.10", 30000 * ms, 40000 * ms, 0, []string{"range"}, 0, 300000 * ms},
		{"kafka-2.x", 10000 * ms, 30000 * ms, 300000 * ms, []string{"range"}, 3000 * ms, 1800000 * ms},
		{"kafka-2.3", 10000 * ms, 30000 * ms, 300000 * ms, []string{"range"}, 3000 * ms, 1800000 * ms},
		{"kafka-2.8", 10000 * ms, 30000 * ms, 300000 * ms, []string{"range"}, 3000 * ms, 1800000 * ms},
		{"kafka-3.0", 45000 * ms, 30000 * ms, 300000 * ms, []string{"range", "cooperative-sticky"}, 3000 * ms, 1800000 * ms},
		{"kafka-3.x", 45000 * ms, 30000 * ms, 300000 * ms, []string{"range", "cooperative-sticky"}, 3000 * ms, 1800000 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.profile, func(t *testing.T) {
			y := "coordinator: {profile: " + tc.profile + "}\n" + minimal + "    client: {profile: " + tc.profile + "}\n"
			s, err := Parse("f.yaml", []byte(y))
			require.NoError(t, err)
			c := s.Groups[0].Client
			assert.Equal(t, tc.session, c.SessionTimeout)
			assert.Equal(t, tc.request, c.RequestTimeout)
			assert.Equal(t, tc.maxPoll, c.MaxPollInterval)
			assert.Equal(t, tc.assignors, c.Assignors)
			assert.Equal(t, 3000*ms, c.HeartbeatInterval)
			assert.Equal(t, 100*ms, c.RetryBackoff)
			assert.Equal(t, 1000*ms, c.RetryBackoffMax)
			assert.True(t, c.AutoCommit)
			assert.False(t, c.StaticMembership)
			assert.Equal(t, tc.initialDelay, s.Coordinator.InitialRebalanceDelay)
			assert.Equal(t, tc.maxSessionTime, s.Coordinator.MaxSessionTimeout)
		})
	}
	s, err := Parse("f.yaml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, 60*time.Second, s.Duration)
	assert.Equal(t, uint64(1), s.Seed)
	assert.Equal(t, Coordinator{Brokers: 3, Profile: "kafka-3.x", InitialRebalanceDelay: 3 * time.Second,
		MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute, MaxSize: math.MaxInt32,
		FailoverDelay: 9 * time.Second, MetadataMode: "kraft", BrokerSessionTimeout: 9 * time.Second, BrokerHeartbeatInterval: 2 * time.Second,
		AppendLatency: Dist{Kind: DistConstant}, OffsetsCommitTimeout: 5 * time.Second, RequestTime: Dist{Kind: DistConstant}}, s.Coordinator)
	assert.Equal(t, Network{Latency: Dist{Kind: DistConstant, Value: ms}}, s.Network)
	assert.Equal(t, "kafka-3.x", s.Groups[0].Client.Profile)
	assert.Equal(t, Workload{PollInterval: Dist{Kind: DistLognormal, Median: 200 * ms, P99: 2000 * ms},
		PollTimeout: Dist{Kind: DistConstant, Value: 100 * ms},
		AssignTime:  Dist{Kind: DistConstant}, CallbackTime: Dist{Kind: DistConstant}}, s.Groups[0].Workload)
	assert.Equal(t, Start{}, s.Groups[0].Start)
	assert.Empty(t, s.Faults)
}

func TestOverrides(t *testing.T) {
	cases := []struct {
		name  string
		ovs   []Override
		check func(t *testing.T, s *Scenario)
	}{
		{"session timeout in existing client", []Override{{"groups[0].client.session.timeout.ms", 20000}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, 20*time.Second, s.Groups[0].Client.SessionTimeout)
			}},
		{"members and loss", []Override{{"groups[0].members", 1000}, {"network.loss", 0.01}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, 1000, s.Groups[0].Members)
				assert.Equal(t, 0.01, s.Network.Loss)
			}},
		{"creates absent coordinator mapping", []Override{{"coordinator.group.initial.rebalance.delay.ms", 0}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, time.Duration(0), s.Coordinator.InitialRebalanceDelay)
				assert.Equal(t, 3, s.Coordinator.Brokers)
			}},
		{"duration as string and as time.Duration", []Override{{"duration", "90s"}, {"groups[0].start.stagger", 5 * time.Millisecond}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, 90*time.Second, s.Duration)
				assert.Equal(t, 5*time.Millisecond, s.Groups[0].Start.Stagger)
			}},
		{"float ms from JSON", []Override{{"groups[0].client.heartbeat.interval.ms", 1000.0}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, time.Second, s.Groups[0].Client.HeartbeatInterval)
			}},
		{"distribution value", []Override{{"network.latency", map[string]any{"dist": "uniform", "min": "1ms", "max": "5ms"}}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, Dist{Kind: DistUniform, Min: time.Millisecond, Max: 5 * time.Millisecond}, s.Network.Latency)
			}},
		{"strategy list", []Override{{"groups[0].client.partition.assignment.strategy", []any{"sticky"}}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, []string{"sticky"}, s.Groups[0].Client.Assignors)
			}},
		{"fault field", []Override{{"faults[0].at", "5s"}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, 5*time.Second, s.Faults[0].At)
			}},
		{"profile then its default", []Override{{"groups[0].client.profile", "kafka-2.x"}},
			func(t *testing.T, s *Scenario) {
				assert.Equal(t, 10*time.Second, s.Groups[0].Client.SessionTimeout)
			}},
	}
	base := minimal + "    client: {session.timeout.ms: 10000}\n    start: {at: 0s}\nfaults:\n  - {at: 1s, crash: g-0}\n"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseWithOverrides("f.yaml", []byte(base), tc.ovs)
			require.NoError(t, err)
			tc.check(t, s)
		})
	}
}

// TestOverrideErrors: an override's error names the override, not a line
// of the file ("f.yaml:6: groups[0].members: ..." would blame the file
// for the command line's value).
func TestOverrideErrors(t *testing.T) {
	cases := []struct {
		ov   Override
		want string
	}{
		{Override{"groups[0].client.sesion.timeout.ms", 1}, `f.yaml: --set groups[0].client.sesion.timeout.ms=1: unknown key "sesion" in groups[0].client; known keys: profile, session.timeout.ms, heartbeat.interval.ms, max.poll.interval.ms, retry.backoff.ms, retry.backoff.max.ms, request.timeout.ms, partition.assignment.strategy, group.instance.id, enable.auto.commit, auto.commit.interval.ms, reconnect.backoff.ms, reconnect.backoff.max.ms, socket.connection.setup.timeout.ms, socket.connection.setup.timeout.max.ms, group.protocol, group.remote.assignor, metadata.max.age.ms`},
		{Override{"groups[3].members", 1}, `f.yaml: --set groups[3].members=1: groups[3]: index out of range (groups has 1 entries)`},
		{Override{"network.loss.x", 1}, `f.yaml: --set network.loss.x=1: network.loss has no keys below it`},
		{Override{"name[0]", 1}, `f.yaml: --set name[0]=1: name is not a list`},
		{Override{"faults[0].at", 1}, `f.yaml: --set faults[0].at=1: faults[0]: the file has no faults`},
		{Override{"groups[0].members", 0}, `f.yaml: --set groups[0].members=0: groups[0].members: must be between 1 and 100000, got 0`},
	}
	for _, tc := range cases {
		t.Run(tc.ov.Path, func(t *testing.T) {
			_, err := ParseWithOverrides("f.yaml", []byte(minimal+"    client: {}\n"), []Override{tc.ov})
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestOverrideDoesNotLeakThroughAnchors: an override of one alias use leaves
// the anchor's other uses alone.
func TestOverrideDoesNotLeakThroughAnchors(t *testing.T) {
	y := `name: t
topics: [{name: o, partitions: 2}]
groups:
  - {id: a, members: 1, subscribe: [o], client: &c {session.timeout.ms: 10000}}
  - {id: b, members: 1, subscribe: [o], client: *c}
  - id: m
    members: 1
    subscribe: [o]
    client:
      <<: *c
      heartbeat.interval.ms: 1000
`
	s, err := ParseWithOverrides("f.yaml", []byte(y), []Override{{"groups[1].client.session.timeout.ms", 20000}})
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, s.Groups[0].Client.SessionTimeout)
	assert.Equal(t, 20*time.Second, s.Groups[1].Client.SessionTimeout)
	assert.Equal(t, 10*time.Second, s.Groups[2].Client.SessionTimeout, "merge key")
	assert.Equal(t, time.Second, s.Groups[2].Client.HeartbeatInterval)
}

func TestBuiltins(t *testing.T) {
	names := BuiltinNames()
	for _, want := range []string{"crash-one-member", "graceful-leave", "gc-pause", "static-restart",
		"kip62-slow-poll", "coordinator-failover", "rolling-restart-dynamic", "rolling-restart-static", "lossy-network"} {
		assert.Contains(t, names, want)
	}
	assert.IsNonDecreasing(t, names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			b, ok := Builtin(n)
			require.True(t, ok)
			assert.True(t, strings.HasPrefix(string(b), "# "+n+":"), "comment header")
			s, err := Load(n)
			require.NoError(t, err)
			assert.Equal(t, n, s.Name)
			assert.Equal(t, "builtin:"+n, s.Source)
		})
	}
	s, err := Load("crash-one-member")
	require.NoError(t, err)
	assert.Equal(t, 12, s.Groups[0].Members)
	assert.Equal(t, 180*time.Second, s.Duration)
	assert.Equal(t, 10*time.Second, s.Groups[0].Client.SessionTimeout)
	assert.Equal(t, []Fault{{At: 60 * time.Second, Kind: FaultCrash, Target: "payments-3", Line: 24}}, s.Faults)

	_, ok := Builtin("../scenario")
	assert.False(t, ok)
	_, err = Load("no-such-scenario")
	assert.ErrorContains(t, err, `scenario "no-such-scenario": no such file and no such built-in scenario`)
}

// TestInterfaceExample: the example of INTERFACE.md parses (it is the contract).
func TestInterfaceExample(t *testing.T) {
	s, err := Load("testdata/interface-example.yaml")
	require.NoError(t, err)
	assert.Equal(t, "crash-one-member", s.Name)
	assert.Len(t, s.Faults, 11)
	assert.Equal(t, "testdata/interface-example.yaml", s.Source)
}

func TestProfileNames(t *testing.T) {
	assert.Equal(t, []string{"kafka-0.10", "kafka-2.3", "kafka-2.3.0", "kafka-2.4", "kafka-2.5", "kafka-2.6", "kafka-2.6.1", "kafka-2.7", "kafka-2.7.2", "kafka-2.8",
		"kafka-2.8.1", "kafka-2.x", "kafka-3.0", "kafka-3.2", "kafka-3.3", "kafka-3.3.2", "kafka-3.4", "kafka-3.6", "kafka-3.7", "kafka-3.8", "kafka-3.9", "kafka-3.x",
		"kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3", "kafka-4.4", "kafka-4.x"}, ProfileNames())
}

// FuzzParse: no input panics; every error is a located *Error or the Load
// error; a success is fully validated.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(full))
	for _, n := range BuiltinNames() {
		b, _ := Builtin(n)
		f.Add(b)
	}
	if b, err := os.ReadFile("testdata/interface-example.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("a: &a [*a]\nname: *a\n"))
	f.Add([]byte("<<: {name: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			require.Nil(t, s)
			var e *Error
			require.ErrorAs(t, err, &e)
			return
		}
		require.NotEmpty(t, s.Name)
		for _, g := range s.Groups {
			require.Less(t, g.Client.HeartbeatInterval, g.Client.SessionTimeout)
			require.GreaterOrEqual(t, g.Members, 1)
		}
		_, err = ParseWithOverrides("fuzz.yaml", data, []Override{{"groups[0].members", 3}, {"network.loss", 0.5}})
		_ = err // may fail validation (e.g. a fault naming member 5); must not panic
	})
}

// TestTimingAndMeasure: realistic timing is the default; timing: exact and
// measure.from parse to their fields.
func TestTimingAndMeasure(t *testing.T) {
	sc, err := Parse("f.yaml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, TimingRealistic, sc.Timing)
	assert.Zero(t, sc.MeasureFrom)
	sc, err = Parse("f.yaml", []byte("timing: exact\nmeasure: {from: 20s}\n"+minimal))
	require.NoError(t, err)
	assert.Equal(t, TimingExact, sc.Timing)
	assert.Equal(t, 20*time.Second, sc.MeasureFrom)
}
