package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// A heartbeat's REBALANCE_IN_PROGRESS that arrives while the application
// thread is processing records waits for the heartbeat thread's next
// wake-up: retry.backoff.ms after the send, where the thread went into its
// wait. While the application thread is blocked inside poll() it is handled
// on arrival.
//
// The heartbeat thread reads the network only in client.pollNoWakeup() at
// the top of each iteration; after sending a heartbeat its next iteration
// finds no heartbeat due and waits retry.backoff.ms. The application
// thread reads the network inside KafkaConsumer.poll. Measured on the
// testbed: the answer read 0.10 s after the send in all five repetitions of
// cal-join-nodelay 4.4.0 (calibrate/explanations.yaml, initial_join_ms).
//
// Kafka: AbstractCoordinator.HeartbeatThread.run @3.9.0-rc3
func TestHeartbeatResponseReadAtWakeUp(t *testing.T) {
	const backoff = 100 * time.Millisecond
	for _, tc := range []struct {
		name    string
		profile string
		busy    bool          // the application thread is processing (else blocked in poll())
		readAt  time.Duration // after the send; the response arrives 1 ms after it
	}{
		{"2.x processing: next wake-up", "kafka-2.x", true, backoff},
		{"3.x processing: next wake-up", "kafka-3.x", true, backoff},
		{"4.x processing: next wake-up (retry.backoff.ms, not .max.ms)", "kafka-4.x", true, backoff},
		{"3.x in poll(): on arrival", "kafka-3.x", false, time.Millisecond},
		{"4.x in poll(): on arrival", "kafka-4.x", false, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t, tc.profile, func(cfg *Config) {
				cfg.Sim.HeartbeatWakeCadence = true
				cfg.RetryBackoff = backoff
				cfg.PollInterval = Const(time.Minute)     // processing a batch
				cfg.PollTimeout = Const(10 * time.Second) // poll() with nothing to return
			})
			if tc.busy {
				d.stable(tp(0)) // poll() returns records: the application processes
			} else {
				d.stable() // no partitions: poll() blocks
			}
			enabled := d.now
			d.advance(3 * time.Second)
			hb := d.pop(protocol.APIHeartbeat)
			sent := enabled.Add(3 * time.Second)
			require.Equal(t, sent, d.now, "heartbeat.interval.ms after enable, on the wake-up grid")
			if tc.busy {
				require.Equal(t, appBusy, d.m.app.phase)
			} else {
				require.Equal(t, appPolling, d.m.app.phase)
			}
			d.advance(time.Millisecond)
			d.respond(hb, &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
			if tc.readAt > time.Millisecond {
				d.advance(tc.readAt - time.Millisecond - 1)
				require.Empty(t, d.eventsOf(protocol.EvRejoinRequested), "read before the wake-up")
				require.False(t, d.m.rejoinNeeded)
				d.advance(1)
			}
			require.Equal(t, sent.Add(tc.readAt), d.now)
			require.Len(t, d.eventsOf(protocol.EvRejoinRequested), 1, "read at %v after the send", tc.readAt)
			require.True(t, d.m.rejoinNeeded)
		})
	}
}

// A process frozen across its heartbeat thread's wait (a GC pause) wakes
// with the wait timed out: the response held during the pause is read at
// the resume, not at a wake-up of the grid from before the pause.
//
// Kafka: AbstractCoordinator.HeartbeatThread.run @3.9.0-rc3
func TestHeartbeatResponseReadAtResume(t *testing.T) {
	d := newDriver(t, "kafka-3.x", func(cfg *Config) {
		cfg.Sim.HeartbeatWakeCadence = true
		cfg.PollInterval = Const(time.Minute)
	})
	d.stable(tp(0))
	d.advance(3 * time.Second)
	hb := d.pop(protocol.APIHeartbeat)
	d.m.Pause(d.now)
	d.now = d.now.Add(1234 * time.Millisecond) // frozen: not called
	d.m.Resume(d.now)
	d.respond(hb, &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
	require.Len(t, d.eventsOf(protocol.EvRejoinRequested), 1, "read at the resume")
}
