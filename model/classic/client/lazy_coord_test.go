package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestHeartbeatThreadChecksCoordinatorAfterNetworkPoll follows
// AbstractCoordinator.HeartbeatThread.run @3.7.0 (1490-1493; the same loop
// from 0.10.1.0): every iteration runs client.pollNoWakeup() and then
// coordinatorUnknown() → checkAndGetCoordinator, whose isUnavailable marks
// the coordinator unknown when its connection is in reconnect backoff. The
// coordinator's connection is closed (its broker crashed) while the
// application thread is busy processing: the heartbeat thread handles the
// close and marks the coordinator dead at that instant, in either replay
// mode. Without the check after the network poll (networkPolled), the mark
// waited for the next poll() (eager) or the next heartbeat (lazy), by which
// time the backoff could be over and the dead coordinator was never marked.
func TestHeartbeatThreadChecksCoordinatorAfterNetworkPoll(t *testing.T) {
	for _, profile := range []string{"kafka-2.3", "kafka-2.8", "kafka-3.7"} {
		for _, eager := range []bool{false, true} {
			d := newDriver(t, profile, func(cfg *Config) {
				cfg.PollInterval = Const(2 * time.Second)
				cfg.Sim.EagerPolls = eager
			})
			d.stable(tp(0))
			d.advance(500 * time.Millisecond)
			require.Equal(t, appBusy, d.m.app.phase, "%s: the application thread is processing", profile)
			require.True(t, d.m.hbt.canPoll())
			c := d.m.net.Conn(0, true)
			require.NotNil(t, c)
			d.call(func(o *Output) { d.m.ConnectionClosed(d.now, 0, true, "peer-closed", o) })
			require.True(t, c.InBackoff(d.now), "ClusterConnectionStates.disconnected: lastConnectAttemptMs = now")
			dead := d.eventsOf(protocol.EvCoordinatorDead)
			require.Len(t, dead, 1, "%s eager=%v: marked by the heartbeat thread's iteration", profile, eager)
			assert.Equal(t, deadUnavailable, dead[0].Dead)
			assert.False(t, d.m.coord.known)
		}
	}
}

// TestLazyReplayStopsAtUnavailableCoordinator: a poll() while the known
// coordinator's connection is in reconnect backoff is not uneventful: its
// ConsumerCoordinator.poll marks the coordinator unknown
// (AbstractCoordinator.checkAndGetCoordinator @3.7.0 976-981; 0.10's
// coordinator() on connectionFailed). The lazy replay must fire that poll as
// the eager loop does, and not skip it as uneventful (steady/eventfulAt:
// skipped, the two replay modes disagreed).
// The connection is put in backoff under the member (no network event
// reaches it, so the heartbeat thread does not look), so only the
// application thread's next poll can see it.
func TestLazyReplayStopsAtUnavailableCoordinator(t *testing.T) {
	for _, profile := range []string{"kafka-0.10", "kafka-2.3", "kafka-3.7"} {
		var marks [2][]time.Duration // each mark's instant after the disconnect
		for i, eager := range []bool{false, true} {
			d := newDriver(t, profile, func(cfg *Config) {
				cfg.PollInterval = Const(10 * time.Millisecond)
				cfg.Sim.EagerPolls = eager
			})
			d.stable(tp(0))
			d.advance(time.Second + 3*time.Millisecond)
			d.ackHeartbeats()
			c := d.m.net.Conn(0, true)
			require.NotNil(t, c)
			d.m.CatchUp(d.now, false) // as the harness does before any event
			d.m.net.Disconnect(d.now, c, netOwner{d.m})
			require.True(t, d.m.coord.unavailable(d.now, &d.m.net, d.m.cfg.behaviour))
			at, seen := d.now, 0
			for range 200 {
				d.advance(time.Millisecond)
				for range len(d.eventsOf(protocol.EvCoordinatorDead)) - seen {
					marks[i] = append(marks[i], d.now.Sub(at))
					seen++
				}
			}
		}
		require.NotEmpty(t, marks[1], "%s: the eager loop's next poll marks it", profile)
		assert.Equal(t, marks[1], marks[0], "%s: lazy replay marks it as the eager loop does", profile)
	}
}

// TestHeartbeatThreadChecksFoundCoordinatorAtWakeUp: after a lookup pass the
// Java heartbeat thread sleeps retry.backoff.ms
// (AbstractCoordinator.HeartbeatThread.run @3.7.0 1502) and reads the
// FindCoordinator answer at its next iteration, whose coordinatorUnknown()
// then checks the connection (1490-1493). The model hands the answer to the
// thread at once, and checks at the wake-up: the coordinator is marked
// unknown again only if the reconnect backoff still runs then.
func TestHeartbeatThreadChecksFoundCoordinatorAtWakeUp(t *testing.T) {
	for _, tc := range []struct {
		backoff time.Duration
		marked  bool
	}{{300 * time.Millisecond, true}, {50 * time.Millisecond, false}} {
		d := newDriver(t, "kafka-3.7", func(cfg *Config) { cfg.PollInterval = Const(5 * time.Second) })
		d.stable(tp(0))
		d.advance(500 * time.Millisecond)
		require.Equal(t, appBusy, d.m.app.phase)
		d.call(func(o *Output) { d.m.ConnectionClosed(d.now, 0, true, "peer-closed", o) })
		require.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 1)
		d.advance(0) // the thread's lookup pass
		find := d.pop(protocol.APIFindCoordinator)
		d.m.net.Conn(0, true).ForceBackoff(d.now, tc.backoff)
		d.advance(2 * time.Millisecond)
		d.respond(find, &protocol.FindCoordinatorResponse{NodeID: 0})
		require.True(t, d.m.coord.known, "found")
		assert.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 1, "backoff %v: not checked inside the thread's wait", tc.backoff)
		d.advance(97 * time.Millisecond)
		assert.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 1, "backoff %v: still waiting", tc.backoff)
		d.advance(time.Millisecond) // retry.backoff.ms after the lookup pass
		if tc.marked {
			assert.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 2, "backoff %v: checked at the wake-up", tc.backoff)
			assert.False(t, d.m.coord.known)
		} else {
			assert.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 1, "backoff %v: over at the wake-up", tc.backoff)
			assert.True(t, d.m.coord.known)
		}
	}
}
