package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func consumerYAML(coord, client string) string {
	return "name: t\ncoordinator: {profile: kafka-4.3" + coord + "}\ntopics:\n  - {name: orders, partitions: 4}\ngroups:\n  - id: g\n    members: 2\n    subscribe: [orders]\n    client: {profile: kafka-4.3, group.protocol: consumer" + client + "}\n"
}

// rollingYAML is a classic group of 2 on a 4.0 broker with one fault.
func rollingYAML(fault string) string {
	return "name: t\ncoordinator: {profile: kafka-4.0}\ntopics:\n  - {name: orders, partitions: 4}\ngroups:\n  - id: g\n    members: 2\n    subscribe: [orders]\n    client: {profile: kafka-4.0}\nfaults:\n  - " + fault + "\n"
}

// TestMigrationKeys: a group's members may mix protocols (cohorts), a
// rolling restart may move them to the other protocol (`set:`), and the
// broker's group.consumer.migration.policy (4.0+ default bidirectional,
// case-insensitive as ConsumerGroupMigrationPolicy.parse).
func TestMigrationKeys(t *testing.T) {
	s, err := Parse("f.yaml", []byte(consumerYAML(", group.consumer.migration.policy: UPGRADE", "")+"  - id: g\n    members: 1\n    subscribe: [orders]\n    client: {profile: kafka-4.3}\n"))
	require.NoError(t, err)
	assert.Equal(t, "upgrade", s.Coordinator.ConsumerMigrationPolicy)
	assert.True(t, s.Groups[0].Consumer())
	assert.False(t, s.Groups[1].Consumer(), "a classic cohort of a consumer group")

	s, err = Parse("f.yaml", []byte(rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {group.protocol: consumer, group.remote.assignor: range}}")))
	require.NoError(t, err)
	assert.Equal(t, "bidirectional", s.Coordinator.ConsumerMigrationPolicy)
	require.NotNil(t, s.Faults[0].Set)
	assert.Equal(t, ClientChange{GroupProtocol: "consumer", RemoteAssignor: "range"}, *s.Faults[0].Set)
	// The writer round-trips it (shrink writes faults back).
	assert.Contains(t, FormatFault(s.Faults[0]), "set: {group.protocol: consumer, group.remote.assignor: range}")
	src := []byte(rollingYAML("{at: 1s, crash: g-0}"))
	out, err := WithFaults("f.yaml", src, s.Faults)
	require.NoError(t, err)
	back, err := Parse("f.yaml", out)
	require.NoError(t, err, "%s", out)
	require.Len(t, back.Faults, 1)
	assert.Equal(t, s.Faults[0].Set, back.Faults[0].Set)
}

// TestConsumerCostKeys: the consumer-group coordinator runtime's costs
// (durations, 0 by default, ConsumerCostsSet when one is written).
func TestConsumerCostKeys(t *testing.T) {
	s, err := Parse("f.yaml", []byte(consumerYAML("", "")))
	require.NoError(t, err)
	c := s.Coordinator
	assert.Zero(t, c.ConsumerAssignTime+c.ConsumerFirstTargetTime+c.ConsumerAppendLatency+c.ConsumerFirstAppendLatency)
	assert.False(t, c.ConsumerCostsSet)
	s, err = Parse("f.yaml", []byte(consumerYAML(", consumer.assign.time: 2ms, consumer.first.target.time: 785ms, consumer.append.latency: 5ms, consumer.first.append.latency: 2.1s", "")))
	require.NoError(t, err)
	c = s.Coordinator
	assert.Equal(t, []time.Duration{2 * time.Millisecond, 785 * time.Millisecond, 5 * time.Millisecond, 2100 * time.Millisecond},
		[]time.Duration{c.ConsumerAssignTime, c.ConsumerFirstTargetTime, c.ConsumerAppendLatency, c.ConsumerFirstAppendLatency})
	assert.True(t, c.ConsumerCostsSet)
}

// TestConsumerKeys: group.protocol: consumer with the broker's
// group.consumer.* settings (GroupCoordinatorConfig defaults, §1.1).
func TestConsumerKeys(t *testing.T) {
	s, err := Parse("f.yaml", []byte(consumerYAML(", group.consumer.session.timeout.ms: 50000, group.consumer.heartbeat.interval.ms: 2000, group.consumer.min.heartbeat.interval.ms: 1000, group.consumer.assignment.interval.ms: 0", ", group.remote.assignor: range")))
	require.NoError(t, err)
	c := s.Coordinator
	assert.Equal(t, "kafka-4.3", c.ConsumerProfile)
	assert.Equal(t, 50*time.Second, c.ConsumerSessionTimeout)
	assert.Equal(t, 2*time.Second, c.ConsumerHeartbeatInterval)
	assert.Equal(t, time.Duration(0), c.ConsumerAssignmentInterval)
	assert.Equal(t, []string{"uniform", "range"}, c.ConsumerAssignors)
	assert.True(t, s.Groups[0].Consumer())
	assert.Equal(t, "range", s.Groups[0].Client.RemoteAssignor)

	s, err = Parse("f.yaml", []byte(strings.Replace(consumerYAML("", ""), "kafka-4.3", "kafka-4.0", 2)))
	require.NoError(t, err)
	assert.Equal(t, "kafka-4.0", s.Coordinator.ConsumerProfile)
	assert.Equal(t, 45*time.Second, s.Coordinator.ConsumerSessionTimeout)
	assert.Equal(t, 5*time.Second, s.Coordinator.ConsumerHeartbeatInterval)
	assert.Zero(t, s.Coordinator.ConsumerAssignmentInterval, "4.0 has no assignment batching")

	s, err = Parse("f.yaml", []byte(strings.Replace(consumerYAML("", ""), "kafka-4.3", "kafka-4.x", 2)))
	require.NoError(t, err)
	assert.Equal(t, "kafka-4.4", s.Coordinator.ConsumerProfile, "kafka-4.x is the last modelled 4.x release")
}

// TestConsumerPatchVersions: a patch version gets the consumer-group
// coordinator fixes its release has: KAFKA-19546 in
// 4.0.2 and 4.1.1 (not 4.1.0), KAFKA-19449 in 4.0.2 and 4.1.2, KAFKA-20601
// on the 4.3 branch after 4.3.1 — each dated by the "Bump version to"
// commits of confluentinc/kafka's 4.0, 4.1 and 4.3 branches (4.0.2:
// 27d3284b3d; 4.1.0: 13f70256db; 4.1.1: be816b82d2; 4.1.2: add1569cdc;
// 4.3.1: 26b251a451). The classic layers keep the minor's era.
func TestConsumerPatchVersions(t *testing.T) {
	for _, c := range []struct{ version, consumer string }{
		{"kafka-4.0.1", "kafka-4.0"},
		{"kafka-4.0.2", "kafka-4.0.2"},
		{"kafka-4.0.3", "kafka-4.0.2"},
		{"kafka-4.1.0", "kafka-4.1"},
		{"kafka-4.1.1", "kafka-4.1.1"},
		{"kafka-4.1.2", "kafka-4.1.2"},
		{"kafka-4.2.1", "kafka-4.2"},
		{"kafka-4.3.1", "kafka-4.3"},
		{"kafka-4.3.2", "kafka-4.3.2"},
		{"kafka-4.4.0", "kafka-4.4"},
		{"kafka-4.1", "kafka-4.1"},
	} {
		src := strings.Replace(consumerYAML("", ""), "profile: kafka-4.3", "profile: "+c.version, 1)
		s, err := Parse("f.yaml", []byte(src))
		require.NoError(t, err, c.version)
		assert.Equal(t, c.consumer, s.Coordinator.ConsumerProfile, c.version)
		if c.version != "kafka-4.1" {
			require.NotEmpty(t, s.Notes, c.version)
			if c.consumer != s.Coordinator.Profile {
				assert.Contains(t, s.Notes[0], "consumer-group (KIP-848) coordinator by "+c.consumer, c.version)
			}
		}
	}
}

// TestConsumerKeyErrors: careless and hostile input for the consumer
// protocol's keys is refused with file, line and field — Kafka's
// forbidden client keys name the broker setting to use instead.
func TestConsumerKeyErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"session.timeout.ms forbidden", consumerYAML("", ", session.timeout.ms: 10000"),
			"f.yaml:9: groups[0].client.session.timeout.ms: not allowed with group.protocol: consumer (Kafka's ConsumerConfig rejects it, KAFKA-17338); set the broker's coordinator: group.consumer.session.timeout.ms instead"},
		{"heartbeat.interval.ms forbidden", consumerYAML("", ", heartbeat.interval.ms: 1000"),
			"groups[0].client.heartbeat.interval.ms: not allowed with group.protocol: consumer (Kafka's ConsumerConfig rejects it, KAFKA-17338); set the broker's coordinator: group.consumer.heartbeat.interval.ms instead"},
		{"partition.assignment.strategy forbidden", consumerYAML("", ", partition.assignment.strategy: range"),
			"groups[0].client.partition.assignment.strategy: not allowed with group.protocol: consumer"},
		{"unknown protocol", strings.Replace(consumerYAML("", ""), "group.protocol: consumer", "group.protocol: next", 1),
			"f.yaml:9: groups[0].client.group.protocol: must be classic or consumer, not \"next\""},
		{"protocol not a string", strings.Replace(consumerYAML("", ""), "group.protocol: consumer", "group.protocol: [consumer]", 1),
			"f.yaml:9: groups[0].client.group.protocol:"},
		{"old client", strings.Replace(consumerYAML("", ""), "{profile: kafka-4.3, group", "{profile: kafka-3.9, group", 1),
			"groups[0].client.group.protocol: group.protocol: consumer needs client profile kafka-4.0 or later"},
		{"group.protocol before 3.7", strings.Replace(consumerYAML("", ""), "{profile: kafka-4.3, group.protocol: consumer", "{profile: kafka-2.8, group.protocol: classic", 1),
			"groups[0].client.group.protocol: not a property of profile kafka-2.8"},
		{"old broker", strings.Replace(consumerYAML("", ""), "coordinator: {profile: kafka-4.3", "coordinator: {profile: kafka-3.x", 1),
			"f.yaml:9: groups[0].client.group.protocol: group.protocol: consumer needs a broker that serves consumer groups: coordinator.profile kafka-4.0 or later (is kafka-3.x)"},
		{"remote assignor under classic", strings.Replace(consumerYAML("", ", group.remote.assignor: uniform"), "group.protocol: consumer", "group.protocol: classic", 1),
			"groups[0].client.group.remote.assignor: only with group.protocol: consumer"},
		{"unknown remote assignor", consumerYAML("", ", group.remote.assignor: sticky"),
			"groups[0].client.group.remote.assignor: unknown assignor \"sticky\"; valid: uniform, range"},
		{"session below min", consumerYAML(", group.consumer.session.timeout.ms: 10000", ""),
			"f.yaml:2: coordinator.group.consumer.session.timeout.ms: group.consumer.session.timeout.ms (10000) must lie in [group.consumer.min.session.timeout.ms, group.consumer.max.session.timeout.ms] = [45000, 60000]"},
		{"heartbeat above max", consumerYAML(", group.consumer.heartbeat.interval.ms: 20000", ""),
			"coordinator.group.consumer.heartbeat.interval.ms: group.consumer.heartbeat.interval.ms (20000) must lie in"},
		{"heartbeat not below session", consumerYAML(", group.consumer.session.timeout.ms: 5000, group.consumer.min.session.timeout.ms: 1000, group.consumer.heartbeat.interval.ms: 5000", ""),
			"group.consumer.heartbeat.interval.ms (5000) must be lower than group.consumer.session.timeout.ms (5000)"},
		{"min above max", consumerYAML(", group.consumer.min.session.timeout.ms: 70000", ""),
			"coordinator.group.consumer.min.session.timeout.ms: group.consumer.min.session.timeout.ms (70000) must not be greater than group.consumer.max.session.timeout.ms (60000)"},
		{"zero session", consumerYAML(", group.consumer.session.timeout.ms: 0", ""),
			"coordinator.group.consumer.session.timeout.ms: must be at least 1"},
		{"negative interval", consumerYAML(", group.consumer.assignment.interval.ms: -5", ""),
			"coordinator.group.consumer.assignment.interval.ms:"},
		{"huge session", consumerYAML(", group.consumer.session.timeout.ms: 99999999999999999999", ""),
			"coordinator.group.consumer.session.timeout.ms:"},
		{"assignment interval before 4.3", strings.Replace(consumerYAML(", group.consumer.assignment.interval.ms: 100", ""), "kafka-4.3", "kafka-4.2", 2),
			"coordinator.group.consumer.assignment.interval.ms: not a property of profile kafka-4.2 (KIP-1263 added it in Kafka 4.3)"},
		{"consumer keys on a 3.x broker", "name: t\ncoordinator: {profile: kafka-3.x, group.consumer.session.timeout.ms: 45000}\ntopics: [{name: o, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [o]}]\n",
			"f.yaml:2: coordinator.group.consumer.session.timeout.ms: not a property of profile kafka-3.x: consumer groups (KIP-848) need coordinator.profile kafka-4.0 or later"},
		{"unknown broker assignor", consumerYAML(", group.consumer.assignors: [uniform, magic]", ""),
			"coordinator.group.consumer.assignors: unknown assignor \"magic\"; valid: uniform, range"},
		{"duplicate broker assignor", consumerYAML(", group.consumer.assignors: [range, range]", ""),
			"coordinator.group.consumer.assignors: assignor \"range\" listed twice"},
		{"empty broker assignors", consumerYAML(", group.consumer.assignors: []", ""),
			"coordinator.group.consumer.assignors: must not be empty"},
		{"max size zero", consumerYAML(", group.consumer.max.size: 0", ""),
			"coordinator.group.consumer.max.size:"},
		{"consumer cost without a unit", consumerYAML(", consumer.append.latency: 10", ""),
			"coordinator.consumer.append.latency: a duration needs a unit"},
		{"negative consumer cost", consumerYAML(", consumer.assign.time: -1ms", ""),
			"coordinator.consumer.assign.time: negative duration"},
		{"consumer costs on a 3.x broker", "name: t\ncoordinator: {profile: kafka-3.x, consumer.first.append.latency: 2s}\ntopics: [{name: o, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [o]}]\n",
			"coordinator.consumer.first.append.latency: not a setting of profile kafka-3.x"},
		{"unknown migration policy", consumerYAML(", group.consumer.migration.policy: sideways", ""),
			"f.yaml:2: coordinator.group.consumer.migration.policy: unknown policy \"sideways\"; valid: bidirectional, upgrade, downgrade, disabled"},
		{"set on a crash", rollingYAML("{at: 5s, crash: g-0, set: {group.protocol: consumer}}"),
			"faults[0].set: crash does not take \"set\" (only rolling-restart restarts members with new client settings)"},
		{"set unknown key", rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {session.timeout.ms: 1000}}"),
			"faults[0].set.session.timeout.ms:"},
		{"set bad protocol", rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {group.protocol: kip848}}"),
			"faults[0].set.group.protocol: must be classic or consumer, not \"kip848\""},
		{"set empty", rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {}}"),
			"faults[0].set: set needs group.protocol or group.remote.assignor"},
		{"set assignor under classic", rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {group.remote.assignor: range}}"),
			"faults[0].set.group.remote.assignor: only with group.protocol: consumer"},
		{"set consumer on an old broker", strings.Replace(rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {group.protocol: consumer}}"), "coordinator: {profile: kafka-4.0}", "coordinator: {profile: kafka-3.x}", 1),
			"faults[0].set.group.protocol: group.protocol: consumer needs a broker that serves consumer groups: coordinator.profile kafka-4.0 or later (is kafka-3.x)"},
		{"set consumer on an old client", strings.Replace(rollingYAML("{at: 5s, rolling-restart: g, interval: 1s, downtime: 1s, set: {group.protocol: consumer}}"), "client: {profile: kafka-4.0}", "client: {profile: kafka-3.x}", 1),
			"faults[0].set.group.protocol: group.protocol: consumer needs client profile kafka-4.0 or later; group \"g\" runs kafka-3.x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "f.yaml:"), "names the file and line: %s", err)
		})
	}
}

// TestGroupConfigsKey: a group's `configs:` are Kafka's group configs
// (GroupConfig, kafka-configs --entity-type groups): checked as
// GroupConfigManager.validate does, each within the broker's
// group.consumer.min/max (GroupConfig.validateValues @v8.0.0, @v8.3.0),
// the session above the heartbeat interval with an unset key taking the
// broker's value; consumer.assignment.interval.ms from 4.3 (KAFKA-20251);
// errors name file, line and field. The effective values are the group's.
func TestGroupConfigsKey(t *testing.T) {
	withCfg := func(cfg string) string {
		return consumerYAML(", group.consumer.max.session.timeout.ms: 90000", "") + "    configs: {" + cfg + "}\n"
	}
	s, err := Parse("f.yaml", []byte(withCfg("consumer.session.timeout.ms: 80000, consumer.heartbeat.interval.ms: 6000, consumer.assignment.interval.ms: 0")))
	require.NoError(t, err)
	g := &s.Groups[0]
	assert.Equal(t, GroupConfigs{SessionTimeout: 80 * time.Second, HeartbeatInterval: 6 * time.Second, AssignmentIntervalSet: true}, g.Configs)
	assert.Equal(t, 80*time.Second, s.SessionTimeout(g))
	assert.Equal(t, 6*time.Second, s.HeartbeatInterval(g))
	assert.Equal(t, 45*time.Second, s.Coordinator.ConsumerSessionTimeout, "the broker's own value is unchanged")

	for _, c := range []struct{ name, yaml, want string }{
		{"session above the broker's max", withCfg("consumer.session.timeout.ms: 95000"),
			"f.yaml:10: groups[0].configs.consumer.session.timeout.ms: consumer.session.timeout.ms (95000) must lie in the broker's [group.consumer.min.session.timeout.ms, group.consumer.max.session.timeout.ms] = [45000, 90000]"},
		{"heartbeat below the broker's min", withCfg("consumer.heartbeat.interval.ms: 1000"),
			"f.yaml:10: groups[0].configs.consumer.heartbeat.interval.ms: consumer.heartbeat.interval.ms (1000) must lie in the broker's [group.consumer.min.heartbeat.interval.ms, group.consumer.max.heartbeat.interval.ms] = [5000, 15000]"},
		{"session not above heartbeat", strings.Replace(withCfg("consumer.session.timeout.ms: 46000, consumer.heartbeat.interval.ms: 50000"), "max.session.timeout.ms: 90000", "max.session.timeout.ms: 90000, group.consumer.max.heartbeat.interval.ms: 60000", 1),
			"f.yaml:10: groups[0].configs.consumer.session.timeout.ms: consumer.session.timeout.ms (46000) must be greater than consumer.heartbeat.interval.ms (50000)"},
		{"assignment interval before 4.3", strings.Replace(withCfg("consumer.assignment.interval.ms: 10"), "kafka-4.3", "kafka-4.2", 2),
			"f.yaml:10: groups[0].configs.consumer.assignment.interval.ms: not a group config of coordinator.profile kafka-4.2 (KAFKA-20251 added it in Kafka 4.3)"},
		{"unknown key", withCfg("session.timeout.ms: 10000"),
			"f.yaml:10: groups[0].configs"},
		{"a classic broker", strings.Replace(withCfg("consumer.session.timeout.ms: 50000"), "coordinator: {profile: kafka-4.3, group.consumer.max.session.timeout.ms: 90000}", "coordinator: {profile: kafka-3.x}", 1),
			"groups[0].configs: group configs (consumer.*) need a broker that serves consumer groups: coordinator.profile kafka-4.0 or later (is kafka-3.x)"},
		{"two cohorts disagree", withCfg("consumer.session.timeout.ms: 50000") + "  - {id: g, members: 1, subscribe: [orders], client: {profile: kafka-4.3, group.protocol: consumer}, configs: {consumer.session.timeout.ms: 60000}}\n",
			"groups[1].configs: group \"g\" already has other configs (groups[0].configs)"},
	} {
		_, err := Parse("f.yaml", []byte(c.yaml))
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}
