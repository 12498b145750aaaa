// Tests of the fault-syntax extensions (docs/OBSERVABILITY.md): one-way
// partitions, message filters and the swarm: what parses, and the
// file:line: path errors of what does not.
package scenario

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExtensionsParse(t *testing.T) {
	s, err := Parse("f.yaml", []byte(minimal+`faults:
  - {at: 10s, partition: [g-1, coordinator], for: 5s, direction: one-way}
  - {at: 11s, partition: [g-0, coordinator], for: 5s, direction: both}
  - {at: 30s, filter: {api: Heartbeat, member: g-1, direction: request, action: drop}, for: 10s}
  - {at: 40s, filter: {action: delay, delay: 200ms}, for: 10s}
swarm:
  from: 5s
  crash: 0.5
  crash.downtime: 2s
  loss: 1
  loss.probability: 0.05
  loss.for: {dist: uniform, min: 1s, max: 3s}
`))
	require.NoError(t, err)
	require.Len(t, s.Faults, 4)
	assert.Equal(t, DirectionOneWay, s.Faults[0].Direction)
	assert.Equal(t, DirectionBoth, s.Faults[1].Direction)
	assert.Equal(t, &MessageFilter{API: "Heartbeat", Member: "g-1", Direction: FilterRequest, Action: FilterDrop}, s.Faults[2].Filter)
	assert.Equal(t, 10*time.Second, s.Faults[2].For)
	assert.Equal(t, &MessageFilter{Direction: FilterBoth, Action: FilterDelay, Delay: 200 * time.Millisecond}, s.Faults[3].Filter)
	require.NotNil(t, s.Swarm)
	assert.Equal(t, Swarm{From: 5 * time.Second, Until: s.Duration, Crash: 0.5, CrashDowntime: Dist{Kind: DistConstant, Value: 2 * time.Second},
		Loss: 1, LossRate: 0.05, LossFor: Dist{Kind: DistUniform, Min: time.Second, Max: 3 * time.Second}}, *s.Swarm)
}

func TestExtensionErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"direction on a crash", "  - {at: 1s, crash: g-0, direction: one-way}\n", `f.yaml:9: faults[0].direction: crash does not take "direction"`},
		{"unknown direction", "  - {at: 1s, partition: [g-0, coordinator], for: 1s, direction: sideways}\n", `f.yaml:9: faults[0].direction: unknown direction "sideways"; one of: both, one-way`},
		{"filter unknown api", "  - {at: 1s, filter: {api: Fetch}, for: 1s}\n", `f.yaml:9: faults[0].filter.api: unknown API "Fetch"; one of: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit`},
		{"filter unknown member", "  - {at: 1s, filter: {member: g-9}, for: 1s}\n", `f.yaml:9: faults[0].filter: member "g-9" does not exist: group g has members g-0 to g-1`},
		{"filter delay without delay", "  - {at: 1s, filter: {action: delay}, for: 1s}\n", `f.yaml:9: faults[0].filter.delay: missing key: action delay needs "delay"`},
		{"filter drop with delay", "  - {at: 1s, filter: {action: drop, delay: 1s}, for: 1s}\n", `f.yaml:9: faults[0].filter.delay: action drop does not take "delay"`},
		{"filter without for", "  - {at: 1s, filter: {action: drop}}\n", `f.yaml:9: faults[0].for: missing key: filter needs "for"`},
		{"filter unknown key", "  - {at: 1s, filter: {apy: Heartbeat}, for: 1s}\n", `f.yaml:9: faults[0].filter.apy: unknown key (did you mean api?); known keys: api, member, direction, action, delay`},
		{"swarm rate without duration", "  []\nswarm: {pause: 1}\n", `f.yaml:10: swarm.pause.for: missing key: pause needs "pause.for"`},
		{"swarm negative rate", "  []\nswarm: {failover: 1}\n", `f.yaml:10: swarm.failover: unknown key; known keys: from, until, crash, crash.downtime, pause, pause.for, partition, partition.for, loss, loss.probability, loss.for, latency, latency.value, latency.for, coordinator-failover`},
		{"swarm bad rate", "  []\nswarm: {coordinator-failover: -1}\n", `f.yaml:10: swarm.coordinator-failover: rate -1 out of range [0, 600] per simulated minute`},
		{"swarm empty window", "  []\nswarm: {from: 10s, until: 5s}\n", `f.yaml:10: swarm.until: the window is empty: until 5s is not after from 10s`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(minimal+"faults:\n"+c.yaml))
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

// TestNetworkBandwidthAndRetransmit: network.bandwidth takes bytes per second
// or a unit; network.retransmit is a duration; bad values name file, line
// and field.
func TestNetworkBandwidthAndRetransmit(t *testing.T) {
	base := "name: n\ntopics: [{name: t, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [t]}]\nnetwork:\n"
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"  bandwidth: 125000000\n", 125000000},
		{"  bandwidth: 1Gbit/s\n", 125000000},
		{"  bandwidth: 100MB/s\n", 100000000},
		{"  bandwidth: 1.5 KB/s\n", 1500},
	} {
		sc, err := Parse("n.yaml", []byte(base+c.in))
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, sc.Network.BandwidthBytesPerSecond, c.in)
	}
	sc, err := Parse("n.yaml", []byte(base+"  loss: {to-broker: 0.01, from-broker: 0.02}\n"))
	require.NoError(t, err)
	assert.True(t, sc.Network.LossDirectional)
	assert.Equal(t, 0.01, sc.Network.LossToBroker)
	assert.Equal(t, 0.02, sc.Network.Loss)

	for _, c := range []struct{ in, msg string }{
		{"  bandwidth: fast\n", `n.yaml:5: network.bandwidth: expected a bandwidth like "1Gbit/s", "100MB/s" or bytes per second, got "fast"`},
		{"  bandwidth: -3MB/s\n", `n.yaml:5: network.bandwidth: expected a bandwidth like "1Gbit/s", "100MB/s" or bytes per second, got "-3MB/s"`},
		{"  retransmit: 200ms\n", `n.yaml:5: network.retransmit: removed: the network is TCP now, so a lost packet is always retransmitted after the RTO (200 ms minimum, doubling); delete this key (docs/INTERFACE.md, "Network")`},
		{"  loss: {to-broker: 2}\n", `n.yaml:5: network.loss.to-broker: must be between 0 and 1, got 2`},
	} {
		_, err := Parse("n.yaml", []byte(base+c.in))
		require.Error(t, err, c.in)
		assert.Equal(t, c.msg, err.Error())
	}
}

func TestAppendErrorNeedsName(t *testing.T) {
	base := "name: n\ntopics: [{name: t, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [t]}]\ncoordinator:\n"
	_, err := Parse("n.yaml", []byte(base+"  append.error.probability: 0.1\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "n.yaml:5: coordinator.append.error.probability: append.error.probability needs append.error")
	_, err = Parse("n.yaml", []byte(base+"  append.error: OOPS\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `n.yaml:5: coordinator.append.error: unknown append error "OOPS"`)
}

func TestAutoCommitInterval(t *testing.T) {
	base := "name: n\ntopics: [{name: t, partitions: 1}]\ngroups: [{id: g, members: 1, subscribe: [t], client: {auto.commit.interval.ms: %s}}]\n"
	sc, err := Parse("n.yaml", []byte(fmt.Sprintf(base, "1000")))
	require.NoError(t, err)
	assert.Equal(t, time.Second, sc.Groups[0].Client.AutoCommitInterval)
	_, err = Parse("n.yaml", []byte(fmt.Sprintf(base, "0")))
	require.Error(t, err)
	assert.Equal(t, "n.yaml:3: groups[0].client.auto.commit.interval.ms: must be positive", err.Error())
}
