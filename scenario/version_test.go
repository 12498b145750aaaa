package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveVersion: the Kafka versions users type resolve to the era
// profile that models them (the latest era at or before the release, within
// the span the era covers); releases no era models are errors listing the
// eras.
func TestResolveVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kafka-3.6.1", "kafka-3.6"},
		{"kafka-3.5", "kafka-3.6"},
		{"kafka-3.2.3", "kafka-3.2"},
		{"kafka-3.3.0", "kafka-3.3"}, // client KAFKA-13891, broker KAFKA-14201 (3.3.0)
		{"kafka-3.3.1", "kafka-3.3"},
		{"kafka-3.3.2", "kafka-3.3.2"}, // client KAFKA-13891 reverted, broker KAFKA-14009
		{"kafka-3.4.1", "kafka-3.4"},
		{"kafka-4.1.0", "kafka-4.1"},
		{"kafka-2.8.0", "kafka-2.8"},
		{"kafka-2.8.2", "kafka-2.8.1"}, // broker KAFKA-12890 fixed in 2.8.1
		{"kafka-2.8.1", "kafka-2.8.1"},
		{"kafka-2.6.0", "kafka-2.6"},
		{"kafka-2.6.2", "kafka-2.6.1"}, // broker KAFKA-10284, client KAFKA-10134
		{"kafka-2.7.1", "kafka-2.7"},
		{"kafka-2.7.2", "kafka-2.7.2"}, // client KAFKA-13214 fixed
		{"kafka-2.5.1", "kafka-2.5"},
		{"kafka-2.4.1", "kafka-2.4"},
		{"kafka-3.1.2", "kafka-3.0"},
		{"kafka-3.9.0", "kafka-3.9"},
		{"3.7.1", "kafka-3.7"},
		{"kafka-0.10.2.1", "kafka-0.10"},
		{"kafka-4.4.0", "kafka-4.4"}, // every 4.4.x is kafka-4.4, the last 4.x line modelled
		{"kafka-4.4.1", "kafka-4.4"},
		{"kafka-4.1.2", "kafka-4.1"}, // the classic layers: kafka-4.1; the consumer-group coordinator: kafka-4.1.2
	} {
		got, note, err := ResolveVersion(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Contains(t, note, c.want, c.in)
	}
	for _, bad := range []string{"kafka-1.1.0", "kafka-2.2", "kafka-9.0", "kafka-4.5.0", "kafka-x", "kafka-3", "latest"} {
		_, _, err := ResolveVersion(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "kafka-3.2 (3.2.x), kafka-3.3 (3.3.x)", bad)
	}
}

// A scenario naming a version parses with the era profile and one note.
func TestVersionInScenarioFile(t *testing.T) {
	src := `name: v
duration: 10s
coordinator: {profile: kafka-2.8.0}
topics: [{name: t, partitions: 2}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.6.1}
`
	sc, err := Parse("v.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "kafka-3.6", sc.Groups[0].Client.Profile)
	assert.Equal(t, "kafka-2.8", sc.Coordinator.Profile)
	require.Len(t, sc.Notes, 2)
	assert.Equal(t, "v.yaml:9: groups[0].client.profile: Kafka 3.6.1 is modelled by profile kafka-3.6 (the era covering 3.5–3.6)", sc.Notes[1])

	_, err = Parse("v.yaml", []byte(strings.Replace(src, "kafka-3.6.1", "kafka-1.1.0", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "v.yaml:9")
	assert.Contains(t, err.Error(), "no profile models Kafka 1.1.0; known eras:")
}

// The failover delay (how long the controller takes to notice a dead
// broker) is the session timeout of the cluster's metadata mode:
// zookeeper.session.timeout.ms, 6000 up to 2.4 and 18000 from 2.5
// (KIP-537; KafkaConfig.scala Defaults.ZkSessionTimeoutMs @2.4.0 = 6000,
// @2.5.0 = 18000), or KRaft's broker.session.timeout.ms, 9000
// (KafkaConfig.scala Defaults.BrokerSessionTimeoutMs @2.8.0, @3.3.0). A
// profile assumes ZooKeeper up to 3.2 and KRaft from 3.3 (KIP-833); 3.x
// can say metadata.mode: zookeeper, 4.x is KRaft only, ≤2.7 ZooKeeper only.
func TestFailoverDelayPerMetadataMode(t *testing.T) {
	parse := func(coord string) (*Scenario, error) {
		return Parse("f.yaml", []byte("name: f\nduration: 10s\ncoordinator: "+coord+"\ntopics: [{name: t, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [t]}]\n"))
	}
	for _, tc := range []struct {
		coord, mode string
		delay       time.Duration
	}{
		{"{profile: kafka-0.10}", "zookeeper", 6 * time.Second},
		{"{profile: kafka-2.3}", "zookeeper", 6 * time.Second},
		{"{profile: kafka-2.4.1}", "zookeeper", 6 * time.Second},
		{"{profile: kafka-2.5}", "zookeeper", 18 * time.Second},
		{"{profile: kafka-2.8}", "zookeeper", 18 * time.Second},
		{"{profile: kafka-2.x}", "zookeeper", 18 * time.Second},
		{"{profile: kafka-3.2}", "zookeeper", 18 * time.Second},
		{"{profile: kafka-3.3}", "kraft", 9 * time.Second},
		{"{profile: kafka-3.x}", "kraft", 9 * time.Second},
		{"{profile: kafka-4.0}", "kraft", 9 * time.Second},
		{"{profile: kafka-3.6, metadata.mode: zookeeper}", "zookeeper", 18 * time.Second},
		{"{profile: kafka-3.0, metadata.mode: kraft}", "kraft", 9 * time.Second},
		{"{profile: kafka-2.8, metadata.mode: kraft}", "kraft", 9 * time.Second},
		{"{profile: kafka-2.8, zookeeper.session.timeout.ms: 30000}", "zookeeper", 30 * time.Second},
		{"{profile: kafka-4.1, broker.session.timeout.ms: 4000}", "kraft", 4 * time.Second},
		{"{profile: kafka-2.8, failover.delay: 2s}", "zookeeper", 2 * time.Second},
	} {
		s, err := parse(tc.coord)
		require.NoError(t, err, tc.coord)
		assert.Equal(t, tc.mode, s.Coordinator.MetadataMode, tc.coord)
		assert.Equal(t, tc.delay, s.Coordinator.FailoverDelay, tc.coord)
	}
	for _, tc := range []struct{ coord, msg string }{
		{"{profile: kafka-2.4, metadata.mode: kraft}", "no KRaft mode"},
		{"{profile: kafka-4.0, metadata.mode: zookeeper}", "no ZooKeeper mode"},
		{"{profile: kafka-3.x, metadata.mode: raft}", "unknown metadata mode"},
		{"{profile: kafka-3.x, zookeeper.session.timeout.ms: 18000}", "applies in zookeeper mode"},
		{"{profile: kafka-2.8, broker.session.timeout.ms: 9000}", "applies in kraft mode"},
	} {
		_, err := parse(tc.coord)
		require.Error(t, err, tc.coord)
		assert.Contains(t, err.Error(), tc.msg, tc.coord)
		assert.Contains(t, err.Error(), "f.yaml:3", tc.coord)
	}
}

// group.coordinator.append.linger.ms: the Java group coordinator's write
// linger, per era (GroupCoordinatorConfig
// GROUP_COORDINATOR_APPEND_LINGER_MS_DEFAULT: 5 @v8.0.0 and @v8.1.0, -1 =
// adaptive @v8.2.0 and @v8.3.0, validator atLeast(0) then atLeast(-1));
// not a property of the Scala coordinator's eras.
func TestAppendLingerPerEra(t *testing.T) {
	parse := func(coord string) (*Scenario, error) {
		return Parse("f.yaml", []byte("name: f\nduration: 10s\ncoordinator: "+coord+"\ntopics: [{name: t, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [t]}]\n"))
	}
	for _, tc := range []struct {
		coord    string
		linger   time.Duration
		adaptive bool
	}{
		{"{profile: kafka-3.9}", 0, false},
		{"{profile: kafka-4.0}", 5 * time.Millisecond, false},
		{"{profile: kafka-4.1}", 5 * time.Millisecond, false},
		{"{profile: kafka-4.2}", 0, true},
		{"{profile: kafka-4.x}", 0, true},
		{"{profile: kafka-4.0, group.coordinator.append.linger.ms: 10}", 10 * time.Millisecond, false},
		{"{profile: kafka-4.3, group.coordinator.append.linger.ms: 5}", 5 * time.Millisecond, false},
		{"{profile: kafka-4.3, group.coordinator.append.linger.ms: -1}", 0, true},
	} {
		s, err := parse(tc.coord)
		require.NoError(t, err, tc.coord)
		assert.Equal(t, tc.linger, s.Coordinator.AppendLinger, tc.coord)
		assert.Equal(t, tc.adaptive, s.Coordinator.AppendLingerAdaptive, tc.coord)
	}
	for _, tc := range []struct{ coord, msg string }{
		{"{profile: kafka-3.9, group.coordinator.append.linger.ms: 10}", "not a property of profile kafka-3.9"},
		{"{profile: kafka-4.1, group.coordinator.append.linger.ms: -1}", "f.yaml:3"},
	} {
		_, err := parse(tc.coord)
		require.Error(t, err, tc.coord)
		assert.Contains(t, err.Error(), tc.msg, tc.coord)
	}
}
