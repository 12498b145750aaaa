package client

import "github.com/rebalsim/rebalsim/model/protocol"

// Shutdown is the application shutting its consumer down, as Kafka's
// documentation has it (KafkaConsumer javadoc @3.9.0-rc3, "Multi-threaded
// Processing"): another thread (a SIGTERM handler) calls wakeup(), and the
// polling thread itself calls close() when its poll() throws
// WakeupException; the testbed's driver does the same on SIGTERM
// (realkafka/java). So a thread processing records finishes the processing
// step it is in (or the rebalance callback it is running, or the stuck
// step of a slow poll) and only then closes; a thread blocked inside poll()
// is woken and closes at once. Leaves and rolling restarts use it.
//
// The step in progress was drawn when it started and is replayed lazily
// (lazy.go), so the time left of it is the simulated one, length-biased as
// a real step caught at a random instant is (mean E[X²]/2E[X], 435 ms for
// the default processing time: vtime/residual.go; a real SIGTERM →
// LeaveGroup delay to compare it with is not in the repository).
func (m *Member) Shutdown(now protocol.Instant, out *Output) {
	if m.stopped || m.app.closing != closeNone {
		return
	}
	if m.started && !m.frozen {
		m.app.fastForward(m, now, false)
		if m.app.phase == appBusy && now < m.app.busyUntil {
			// At the end of the step the thread is back in poll(), which
			// throws WakeupException: close() (closeIterate's
			// closeShutdown), without a new poll's draws (contResume
			// keeps the lazy replay from running past the step).
			m.app.closing = closeShutdown
			if m.app.cont == contNextPoll {
				m.app.cont = contResume
			}
			return
		}
	}
	m.Close(now, out)
}
