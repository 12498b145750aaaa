package client

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/scenario"
)

// netEraOfRelease is the network era of a Kafka client release, from the
// sources (not from the profile table): KIP-144's exponential reconnect
// backoff (0.11); KIP-601's setup timeout and leastLoadedNode's
// oldest-attempt preference (NetworkClient.leastLoadedNode @2.7.0), its max
// 127 s through 2.7.x and 30 s from 2.8.0
// (CommonClientConfigs.DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS
// @2.7.2, @2.8.0); the jitter capped at the max from 3.7.0
// (ExponentialBackoff.backoff @3.6.2 vs @3.7.0).
func netEraOfRelease(major, minor int) netclient.Era {
	at := func(M, m int) bool { return major > M || major == M && minor >= m }
	switch {
	case !at(0, 11):
		return netclient.Era010
	case !at(2, 7):
		return netclient.Era23
	case !at(2, 8):
		return netclient.Era27
	case !at(3, 7):
		return netclient.Era28
	}
	return netclient.Era37
}

// releaseOf is the major.minor a profile name or version string stands for
// (a coarse alias: the release of its row, profileAliases).
func releaseOf(t *testing.T, name string) (major, minor int) {
	t.Helper()
	switch name {
	case "kafka-2.x":
		return 2, 8
	case "kafka-3.x":
		return 3, 7
	case "kafka-4.x":
		return 4, 3
	}
	parts := strings.Split(strings.TrimPrefix(name, "kafka-"), ".")
	require.GreaterOrEqual(t, len(parts), 2, name)
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	require.NoError(t, err1, name)
	require.NoError(t, err2, name)
	return major, minor
}

// acceptedVersions is every client profile string a scenario file accepts:
// the scenario package's profile names and the Kafka versions that
// ResolveVersion maps to one (every patch 0–3 of every minor it knows).
func acceptedVersions() []string {
	out := scenario.ProfileNames()
	for _, mm := range [][2]int{{0, 10}, {2, 3}, {2, 4}, {2, 5}, {2, 6}, {2, 7}, {2, 8},
		{3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}, {3, 6}, {3, 7}, {3, 8}, {3, 9},
		{4, 0}, {4, 1}, {4, 2}, {4, 3}, {4, 4}} {
		for patch := range 4 {
			v := fmt.Sprintf("kafka-%d.%d.%d", mm[0], mm[1], patch)
			if _, _, err := scenario.ResolveVersion(v); err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

// TestOneRowDecidesEveryLayer: a client profile name is resolved once
// (lookupBehaviour) and every layer of the classic client reads that one
// row: the consumer's switches, its ConsumerConfig defaults, the network
// client's era, and the defaults the scenario file fills in. Over every
// version string a scenario file accepts, each layer's era is the one the
// Kafka release has (netEraOfRelease, from the sources); before, the
// network layer looked the raw name up again, and kafka-2.3.0, 2.6.1,
// 2.7.2 and 2.8.1 got the 3.x network client.
func TestOneRowDecidesEveryLayer(t *testing.T) {
	for _, v := range acceptedVersions() {
		sc, err := scenario.Parse("f.yaml", []byte("name: t\ntopics:\n  - {name: t, partitions: 4}\ngroups:\n  - id: g\n    members: 1\n    subscribe: [t]\n    client: {profile: "+v+"}\n"))
		require.NoError(t, err, v)
		sclient := sc.Groups[0].Client
		row, ok := lookupBehaviour(sclient.Profile)
		require.True(t, ok, "%s: the client accepts the scenario's profile %s", v, sclient.Profile)

		// The client built as the harness builds it (harness/world.go),
		// from the scenario's values.
		cfg := testConfig(sclient.Profile)
		cfg.SessionTimeout, cfg.RequestTimeout = 0, 0
		cfg.ReconnectBackoff, cfg.ReconnectBackoffMax = sclient.ReconnectBackoff, sclient.ReconnectBackoffMax
		cfg.SocketSetupTimeout, cfg.SocketSetupTimeoutMax = sclient.SocketSetupTimeout, sclient.SocketSetupTimeoutMax
		require.NoError(t, ApplyProfileDefaults(&cfg), v)
		tmpl, err := newTemplate(cfg, stubLookup)
		require.NoError(t, err, v)

		want := netEraOfRelease(releaseOf(t, v))
		require.Same(t, row, tmpl.behaviour, "%s: the consumer's switches come from the resolved row", v)
		require.Equal(t, want, row.net, "%s: the row's network era is the release's", v)
		require.Equal(t, want, tmpl.net.Era, "%s: the network client runs the row's era", v)
		// The scenario's defaults are the same era's.
		require.Equal(t, row.defaults.session, sclient.SessionTimeout, "%s: session.timeout.ms", v)
		require.Equal(t, row.defaults.requestTimeout, sclient.RequestTimeout, "%s: request.timeout.ms", v)
		require.Equal(t, row.defaults.assignors, sclient.Assignors, "%s: partition.assignment.strategy", v)
		if want.SetupTimeout {
			require.Equal(t, want.SetupMax, sclient.SocketSetupTimeoutMax, "%s: the scenario's socket.connection.setup.timeout.max.ms", v)
			require.Equal(t, want.SetupMax, tmpl.net.SocketSetupTimeoutMax, "%s: socket.connection.setup.timeout.max.ms", v)
		} else {
			require.Zero(t, sclient.SocketSetupTimeoutMax, "%s: no socket.connection.setup.timeout.max.ms before 2.7", v)
		}
		if !want.ExponentialReconnect {
			require.Equal(t, tmpl.net.ReconnectBackoff, tmpl.net.ReconnectBackoffMax, "%s: a fixed reconnect.backoff.ms", v)
		}
	}
}
