package client_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/consumer/client"
	"github.com/rebalsim/rebalsim/model/protocol"
)

func ms(n int) protocol.Instant { return protocol.Instant(time.Duration(n) * time.Millisecond) }

// newProcess is member id-0 of group g subscribed to t, with one bootstrap
// broker (0) and enable.auto.commit autoCommit.
func newProcess(autoCommit bool) *client.Process {
	return client.NewProcess(client.ProcessConfig{
		Member:     client.Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{"t"}},
		Brokers:    []int32{0},
		AutoCommit: autoCommit,
	}, rand.New(rand.NewPCG(1, 2)))
}

func eventsOf(out *client.ProcOutput, kind protocol.EventKind) []protocol.Event {
	var evs []protocol.Event
	for _, e := range out.Events {
		if e.Kind == kind {
			evs = append(evs, e)
		}
	}
	return evs
}

// NetworkClientTest.testConnectionSetupTimeout @4.0.0 (KIP-601), as the
// AsyncKafkaConsumer lives it: a bootstrap connection not READY after
// socket.connection.setup.timeout.ms (10 s ± 20 %) is closed, the
// FindCoordinator waiting on it fails, and the next attempt comes after
// the reconnect and FindCoordinator backoffs.
func TestProcessConnectionSetupTimeout(t *testing.T) {
	p := newProcess(false)
	var out client.ProcOutput
	p.Start(0, &out)
	require.Len(t, out.Conns, 1)
	out.Reset()
	d := p.NextHeartbeatDeadline()
	assert.GreaterOrEqual(t, d, ms(8000), "the setup timeout: 10 s − 20 %")
	assert.LessOrEqual(t, d, ms(12001), "the setup timeout: 10 s + 20 %")
	p.TickHeartbeat(d, &out)
	disc := eventsOf(&out, protocol.EvDisconnected)
	require.Len(t, disc, 1)
	assert.Equal(t, "setup-timeout", disc[0].Reason)
	require.Len(t, out.Conns, 1)
	assert.False(t, out.Conns[0].Open, "the attempt is closed")
	out.Reset()
	for at := d; at < d.Add(2*time.Second) && len(out.Conns) == 0; at = at.Add(time.Millisecond) {
		p.TickHeartbeat(at, &out)
	}
	require.Len(t, out.Conns, 1, "a new attempt after the backoffs")
	assert.True(t, out.Conns[0].Open)
}
