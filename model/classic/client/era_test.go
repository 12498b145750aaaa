package client

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Tests of the network era a client profile runs: the jittered reconnect
// backoff and setup timeout (capped at their max only from 3.7.0), the
// setup timeout's existence and max per era, and leastLoadedNode's
// preference for the oldest connectable node (2.7+).

// drawBackoffs draws n reconnect backoffs and n setup timeouts of profile's
// member at their largest exponent, through the member's own network client
// (ClusterConnectionStates.disconnected → updateReconnectBackoff;
// connecting → updateConnectionSetupTimeout after failed connects) and
// returns the largest of each.
func drawBackoffs(t *testing.T, profile string, n int) (backoffMax, setupMax time.Duration) {
	t.Helper()
	d := newDriver(t, profile, func(c *Config) { c.Brokers = []int32{0, 1, 2} })
	o := netOwner{d.m}
	var out Output
	now := protocol.Instant(0)
	for i := range n + 8 {
		now = now.Add(10 * time.Minute) // out of any backoff
		d.m.net.TryConnect(now, &out, 2, false, o)
		c := d.m.net.Conn(2, false)
		require.Equal(t, netclient.Connecting, c.State())
		if i >= 8 { // failedConnectAttempts ≥ 8: 10 s · 2^k is past the 30 s max
			setupMax = max(setupMax, c.SetupTimeout())
		}
		d.m.net.ConnectFailed(now, &out, 2, false, o)
		if i >= 8 { // failedAttempts ≥ 8: 50 ms · 2^k is past the 1 s max
			backoffMax = max(backoffMax, c.Backoff())
		}
	}
	return backoffMax, setupMax
}

// The jittered reconnect backoff and connection setup timeout are capped at
// their maximum from 3.7.0 only: ExponentialBackoff.backoff @3.7.0 returns
// min((long) (randomFactor * term), maxInterval); @3.0.0 … @3.6.2 (and
// @2.7.0 … @2.8.2) it returns the jittered term, up to 1.2 × max, which
// ClusterConnectionStates.updateReconnectBackoff and
// updateConnectionSetupTimeout store as they are (@3.6.2). So 3.0–3.6
// reconnect after up to ~1.2 s and time a setup out after up to ~36 s.
func TestJitterCappedFrom37(t *testing.T) {
	for _, c := range []struct {
		profile string
		capped  bool
	}{
		{"kafka-2.7", false}, {"kafka-2.8", false}, {"kafka-3.0", false}, {"kafka-3.6", false},
		{"kafka-3.7", true}, {"kafka-4.3", true},
	} {
		backoff, setup := drawBackoffs(t, c.profile, 200)
		if c.capped {
			require.Equal(t, time.Second, backoff, "%s: reconnect backoff capped at reconnect.backoff.max.ms", c.profile)
			require.Equal(t, 30*time.Second, setup, "%s: setup timeout capped at socket.connection.setup.timeout.max.ms", c.profile)
			continue
		}
		require.Greater(t, backoff, 1100*time.Millisecond, "%s: the jitter takes the backoff past its max", c.profile)
		require.Less(t, backoff, 1200*time.Millisecond, c.profile)
		setupCap := 30 * time.Second
		if c.profile == "kafka-2.7" {
			setupCap = 127 * time.Second // CommonClientConfigs @2.7.0
		}
		require.Greater(t, setup, setupCap+setupCap/10, "%s: the jitter takes the setup timeout past its max", c.profile)
		require.Less(t, setup, setupCap+setupCap/5, c.profile)
	}
}

// NetworkClient.leastLoadedNode @2.3.0 … @3.7.0 starts its scan at
// randOffset.nextInt(nodes.size()) on every call: a member's first
// FindCoordinator goes to a random broker, not always to the first listed.
func TestLeastLoadedNodeRandomOffset(t *testing.T) {
	seen := map[int32]int{}
	for seed := range uint64(40) {
		cfg := testConfig("kafka-3.7")
		cfg.Brokers = []int32{0, 1, 2}
		m := newMember(cfg, rand.New(rand.NewPCG(seed, 7)), stubLookup)
		var out Output
		m.Start(0, &out)
		b := int32(-1)
		for _, op := range out.Conns {
			if op.Open && !op.Coord {
				b = op.Broker
			}
		}
		require.GreaterOrEqual(t, b, int32(0), "seed %d: a node connection is opened for FindCoordinator", seed)
		seen[b]++
	}
	require.Len(t, seen, 3, "every broker is some member's first FindCoordinator target: %v", seen)
}

// Among the brokers a client may connect to, NetworkClient.leastLoadedNode
// @2.7.0 (KIP-601) … @3.7.0 picks the one whose last connection attempt is
// oldest (lastConnectAttemptMs); @2.3.0 … @2.6.3 the last one in its scan.
// Of several connections being set up, the last one in the scan (every
// tag).
func TestLeastLoadedNodeOldestAttempt(t *testing.T) {
	at := func(s int) protocol.Instant { return protocol.Instant(0).Add(time.Duration(s) * time.Second) }
	brokers := []int32{0, 1, 2}
	for _, c := range []struct {
		profile string
		want    [3]int32 // by offset 0, 1, 2
	}{
		// attempts: broker 0 at 10 s, 1 at 5 s, 2 at 8 s; all out of backoff at 20 s.
		{"kafka-2.6", [3]int32{2, 0, 1}},
		{"kafka-2.6.1", [3]int32{2, 0, 1}},
		{"kafka-2.7", [3]int32{1, 1, 1}},
		{"kafka-2.7.2", [3]int32{1, 1, 1}},
		{"kafka-3.7", [3]int32{1, 1, 1}},
	} {
		d := newDriver(t, c.profile, func(cfg *Config) { cfg.Brokers = brokers })
		o := netOwner{d.m}
		var out Output
		for b, s := range map[int32]int{0: 10, 1: 5, 2: 8} {
			d.m.net.TryConnect(at(s), &out, b, false, o)
			d.m.net.ConnectFailed(at(s), &out, b, false, o)
		}
		for off := range 3 {
			got := d.m.net.LeastLoadedNode(at(20), d.m.cfg.net.Era, brokers, off)
			require.Equal(t, c.want[off], got, "%s, offset %d", c.profile, off)
		}
		// Two connections being set up: the last one scanned.
		d.m.net.TryConnect(at(20), &out, 0, false, o)
		d.m.net.TryConnect(at(20), &out, 2, false, o)
		require.Equal(t, int32(2), d.m.net.LeastLoadedNode(at(20), d.m.cfg.net.Era, brokers, 0), c.profile)
		require.Equal(t, int32(0), d.m.net.LeastLoadedNode(at(20), d.m.cfg.net.Era, brokers, 1), c.profile)
	}
}
