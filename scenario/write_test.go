package scenario

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithFaultsRoundTrip: every fault kind written by FormatFault (through
// WithFaults) parses back to the same fault, and the rest of the file is
// kept.
func TestWithFaultsRoundTrip(t *testing.T) {
	data, err := readInterfaceExample()
	require.NoError(t, err)
	sc, err := Parse("interface-example.yaml", data)
	require.NoError(t, err)
	extra := []Fault{
		{At: 5e9, Kind: FaultPartition, Peers: [2]string{"coordinator", "payments-1"}, For: 2e9, Direction: DirectionOneWay},
		{At: 6e9, Kind: FaultFilter, For: 3e9, Filter: &MessageFilter{API: "Heartbeat", Member: "payments-2", Direction: FilterRequest, Action: FilterDelay, Delay: 5e8}},
		{At: 7e9, Kind: FaultLatency, For: 1e9, Latency: Dist{Kind: DistLognormal, Median: 2e6, P99: 4e7}},
	}
	want := append(append([]Fault(nil), sc.Faults...), extra...)
	SortFaults(want)
	out, err := WithFaults("interface-example.yaml", data, want)
	require.NoError(t, err)
	back, err := Parse("out.yaml", out)
	require.NoError(t, err, string(out))
	require.Len(t, back.Faults, len(want))
	for i := range want {
		got := back.Faults[i]
		got.Line, want[i].Line = 0, 0
		assert.Equal(t, want[i], got, "fault %d: %s", i, FormatFault(want[i]))
	}
	sc.Faults, back.Faults = nil, nil
	sc.Source, back.Source = "", ""
	sc.Warnings, back.Warnings = nil, nil // they name lines, which moved
	assert.Equal(t, sc, back, "everything but the faults is kept")
}

func readInterfaceExample() ([]byte, error) { return os.ReadFile("testdata/interface-example.yaml") }

// TestOverriddenRoundTrip: the YAML Overridden writes parses to what
// ParseWithOverrides gives.
func TestOverriddenRoundTrip(t *testing.T) {
	data, err := readInterfaceExample()
	require.NoError(t, err)
	ov := []Override{{Path: "groups[0].client.session.timeout.ms", Value: 45000}, {Path: "network.loss", Value: 0.02}}
	want, err := ParseWithOverrides("x.yaml", data, ov)
	require.NoError(t, err)
	out, err := Overridden("x.yaml", data, ov)
	require.NoError(t, err)
	got, err := Parse("x.yaml", out)
	require.NoError(t, err)
	for i := range want.Faults {
		want.Faults[i].Line, got.Faults[i].Line = 0, 0
	}
	require.Len(t, got.Warnings, len(want.Warnings))
	want.Warnings, got.Warnings = nil, nil // they name lines, which moved
	assert.Equal(t, want, got)
}

// TestWithFaultsDropsTheStaleHeader: the header comment of a built-in
// describes its own faults; the scenario written with other faults (a
// finding's scenario.yaml, simrun shrink's output) must not carry it
// (it would describe faults the file no longer has), while the comments
// inside the file stay.
func TestWithFaultsDropsTheStaleHeader(t *testing.T) {
	data := []byte("# rolling-restart-dynamic: a deployment restarts 8 members\n# one by one.\nname: x\nduration: 60s # long enough\ntopics:\n  - {name: orders, partitions: 4}\ngroups:\n  - {id: g, members: 2, subscribe: [orders]}\nfaults:\n  - {at: 30s, rolling-restart: g, interval: 10s, downtime: 2s}\n")
	out, err := WithFaults("x.yaml", data, []Fault{{At: 5e9, Kind: FaultCrash, Target: "g-0"}})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "rolling-restart-dynamic")
	assert.NotContains(t, string(out), "one by one")
	assert.Contains(t, string(out), "# long enough")
	_, err = Parse("out.yaml", out)
	require.NoError(t, err, string(out))
}
