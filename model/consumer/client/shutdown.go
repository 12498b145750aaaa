package client

import (
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/vtime"
)

// Shutdown is the application shutting its consumer down (KafkaConsumer
// javadoc @3.9.0-rc3, "Multi-threaded Processing"; the testbed's driver on
// SIGTERM): wakeup() from another thread, then close() on the polling
// thread itself once its poll() throws WakeupException. So the application
// thread finishes what it is doing first: the rebalance callback it runs,
// the stuck step of a slow poll, or the processing step it is in — the rest
// of the current loop iteration when a poll with work is already due at
// its end (pollAt), else the time left of a poll.interval step caught at a
// random instant (vtime.DrawResidual: length-biased, mean E[X²]/2E[X]; the
// idle loop is replayed lazily, so no step is under way to read it from).
// A thread blocked inside poll() (the process owns nothing, so its poll
// waits out poll.timeout) is woken and closes at once. (A real SIGTERM →
// leave heartbeat delay to compare the residual with is not in the
// repository.)
func (p *Process) Shutdown(now protocol.Instant, out *ProcOutput) {
	if p.stopped || p.app.shutdownAt != 0 {
		return
	}
	at := p.stepEnd(now)
	if at <= now {
		p.Close(now, out)
		return
	}
	p.app.shutdownAt = at
}

// stepEnd is when the application thread is next back in poll(), where a
// wakeup() takes effect (Shutdown).
func (p *Process) stepEnd(now protocol.Instant) protocol.Instant {
	switch {
	case !p.started || p.app.lastPoll == protocol.Never:
		return now
	case p.app.cbEnd != protocol.Never:
		return p.app.cbEnd
	case now < p.app.slowUntil:
		return p.app.slowUntil
	case len(p.m.Owned()) == 0:
		return now // blocked in poll(timeout): woken at once
	case p.app.pollAt != protocol.Never:
		return p.app.pollAt
	}
	return now.Add(vtime.DrawResidual(p.cfg.PollInterval, p.rng))
}

// shutdownDue closes the process at the end of Shutdown's step (TickApp).
// A callback that started meanwhile is finished first.
func (p *Process) shutdownDue(now protocol.Instant, out *ProcOutput) bool {
	if p.app.shutdownAt == 0 || now < p.app.shutdownAt {
		return false
	}
	if p.app.cbEnd != protocol.Never {
		if now < p.app.cbEnd {
			p.app.shutdownAt = p.app.cbEnd
			return false
		}
		p.app.cbEnd = protocol.Never
		p.m.CallbackDone(now, &p.mo)
		p.drain(now, out)
	}
	p.Close(now, out)
	return true
}
