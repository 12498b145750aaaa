package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBrokerHeartbeatInterval: broker.heartbeat.interval.ms is KRaft's
// (KRaftConfigs @3.9.0-rc3: default 2000, beside broker.session.timeout.ms
// 9000), refused in ZooKeeper mode and at or above the session timeout; a
// written failover.delay is marked as written (no fencing phase).
func TestBrokerHeartbeatInterval(t *testing.T) {
	sc, err := Parse("f.yaml", []byte("coordinator: {profile: kafka-3.x}\n"+minimal))
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, sc.Coordinator.BrokerHeartbeatInterval)
	require.Equal(t, 9*time.Second, sc.Coordinator.FailoverDelay)
	require.False(t, sc.Coordinator.FailoverDelaySet)

	sc, err = Parse("f.yaml", []byte("coordinator: {profile: kafka-3.x, broker.heartbeat.interval.ms: 500, failover.delay: 4s}\n"+minimal))
	require.NoError(t, err)
	require.Equal(t, 500*time.Millisecond, sc.Coordinator.BrokerHeartbeatInterval)
	require.Equal(t, 4*time.Second, sc.Coordinator.FailoverDelay)
	require.True(t, sc.Coordinator.FailoverDelaySet)

	sc, err = Parse("f.yaml", []byte("coordinator: {profile: kafka-2.5}\n"+minimal))
	require.NoError(t, err)
	require.Zero(t, sc.Coordinator.BrokerHeartbeatInterval, "ZooKeeper mode has no broker heartbeat")

	for _, c := range []struct{ src, err string }{
		{"coordinator: {profile: kafka-2.5, broker.heartbeat.interval.ms: 2000}\n", "f.yaml:1: coordinator.broker.heartbeat.interval.ms: not a property of metadata.mode zookeeper (profile kafka-2.5): it applies in kraft mode"},
		{"coordinator: {profile: kafka-3.x, broker.heartbeat.interval.ms: 9000}\n", "f.yaml:1: coordinator.broker.heartbeat.interval.ms: must be less than broker.session.timeout.ms (9000): a broker would be fenced between two heartbeats"},
		{"coordinator: {profile: kafka-3.x, broker.heartbeat.interval.ms: 0}\n", "f.yaml:1: coordinator.broker.heartbeat.interval.ms: must be at least 1"},
	} {
		_, err := Parse("f.yaml", []byte(c.src+minimal))
		require.EqualError(t, err, c.err)
	}
}
