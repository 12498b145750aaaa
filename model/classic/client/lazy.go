package client

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is a performance device, not Kafka behaviour: it lets the
// application thread's uneventful poll() calls be replayed lazily.
//
// In a steady group the application thread spends its life in a loop of
// poll() → records → process for cfg.PollInterval → poll() …, and such a poll
// changes nothing but the poll timer (max.poll.interval.ms) and the draws
// from the member's random stream. Firing one simulator event per poll would
// cost ten events per member-second at the 100 ms default. Instead, while the
// member is steady, NextAppDeadline reports only the timers that can make a
// poll eventful (a request timeout, the auto-commit deadline, the 0.10
// delayed tasks, a metadata refresh, a coordinator connection in reconnect
// backoff), and every entry point first replays the polls that fell due
// before now (appThread.fastForward): each one restarts the poll timer at its own
// instant and makes the same draws, in the same order, as the eager loop.
// The harness's CatchUp says whether a poll due at the very instant of
// another event comes first under the seed's tie-break. The run is the same,
// byte for byte, as firing every poll (SimOptions.EagerPolls):
// harness TestLazyPollsMatchEager (built-ins) and
// TestLazyPollsMatchEagerRandomFamily (random scenarios with broker crashes,
// partitions, loss, pauses). Two places where it once was not, now
// handled: a poll while the coordinator connection was in reconnect backoff
// was replayed as uneventful (eventfulAt), and on resume a poll due in the
// pause was replayed before the events held during it (Pause, Resume).

// steady reports whether the next poll() would be uneventful as far as the
// member's state goes (timers are checked separately by eventfulAt).
//
// m.hb.threadFailed is m.hbt.failure() read without the interface call
// (steady runs twice per member event, and the interface call showed in
// the 100,000-member profiles): only the heartbeat thread sets it, and the
// 0.10 heartbeat task, whose failure() is always None, leaves it None
// (TestThreadFailedIsFailure).
func (a *appThread) steady(m *Member) bool {
	return !m.cfg.Sim.EagerPolls && a.phase == appBusy && a.cont == contNextPoll && a.cb == cbNone && !m.stopped &&
		m.hb.threadFailed == protocol.None && !m.autoCommit.fenced && len(m.net.queue) == 0 &&
		m.coord.known && !m.rejoinNeededOrPending() && a.recordsAvailable(m)
}

// eventfulAt is the earliest instant from which a poll() could do more than
// restart the poll timer: a request timeout it would observe, a due
// auto-commit, a due 0.10 delayed task, a due metadata refresh (only with
// a changing Cluster, metadata.go), a coordinator it would mark unknown.
func (a *appThread) eventfulAt(m *Member) protocol.Instant {
	d := m.net.nextDeadline(m.cfg)
	if m.cfg.AutoCommit {
		d = min(d, m.autoCommit.at)
	}
	if m.meta != nil {
		d = min(d, m.meta.nextRefresh)
	} else if m.cfg.Metadata.Cluster != nil {
		d = 0 // not refreshed yet: the first poll refreshes
	}
	if m.coord.unavailable(a.busyUntil, &m.net, m.cfg.behaviour) {
		// The next poll's ConsumerCoordinator.poll would mark the
		// coordinator unknown (checkAndGetCoordinator: its connection is in
		// reconnect backoff; 0.10: it failed): eventful now. (The
		// connection's state cannot change between this member's events,
		// and a backoff only ends, so polls after busyUntil cannot be
		// eventful for this reason unless this one is.)
		d = 0
	}
	if m.cfg.behaviour.heartbeatTask {
		// Only the 0.10 heartbeat task has a delayed task; the thread's
		// taskDeadline is Never (no interface call per member event).
		d = min(d, m.hbt.taskDeadline())
	}
	return d
}

// fastForward replays every uneventful poll() due before now, and the one
// due exactly at now when the caller is the application thread itself
// (TickApp). Another event at now (a response, the heartbeat thread) leaves
// a poll due at now to its own simulator event, so the seed's tie-break
// orders the two as it would without lazy replay.
func (a *appThread) fastForward(m *Member, now protocol.Instant, onApp bool) {
	if a.busyUntil > now || (a.busyUntil == now && !onApp) {
		// No poll is due: the loop below would not run, whatever the
		// state. Checked first because it is the common case (a response
		// a millisecond after its request, the heartbeat thread's own
		// replay after the harness's CatchUp).
		return
	}
	if !m.started || m.frozen || !a.steady(m) {
		return
	}
	limit := a.eventfulAt(m)
	if d := m.cfg.replay.fixed; d > 0 {
		// The loop below in one step (about ten polls a member between
		// two of its events): polls at t, t+d, t+2d, ... while
		// before end; the draws take nothing from the stream, and a poll
		// only moves the poll timer, so the last one's is what remains.
		end := now
		if onApp {
			end++ // the poll due exactly at now too
		}
		end = min(end, limit)
		if t := a.busyUntil; t < end {
			last := t.Add(time.Duration((int64(end-t)-1)/int64(d)) * d)
			m.hbt.polled(last)
			a.busyUntil = last.Add(d)
		}
		return
	}
	// A poll only moves the poll timer (hbt.polled), so only the last one's
	// is kept; a poll.timeout that is fixed takes nothing from the stream,
	// so its draw is skipped; a lognormal poll.interval is drawn inline
	// (pollReplay). The same draws, in the same order, as one Draw call
	// each (TestInlineLognormalDrawsAsDist; the lazy-vs-eager family).
	r := &m.cfg.replay
	last, polled := protocol.Instant(0), false
	for (a.busyUntil < now || (onApp && a.busyUntil == now)) && a.busyUntil < limit {
		t := a.busyUntil
		// pollStart + one iterate pass that finds records at once.
		last, polled = t, true
		if !r.fixedTimeout {
			m.cfg.PollTimeout.Draw(m.rng)
		}
		var d time.Duration
		if r.lognormal {
			d = max(LognormalDraw(r.median, r.sigma, r.least, m.rng), 0)
		} else {
			d = max(m.cfg.PollInterval.Draw(m.rng), 0)
		}
		a.busyUntil = t.Add(d)
		if d == 0 {
			break // a zero processing time: let the eager loop handle it
		}
	}
	if polled {
		m.hbt.polled(last)
	}
}

// LognormalDraw is the draw of a lognormalDist: max(median·exp(sigma·z),
// least), z from r.NormFloat64, clamped at MaxInt64/2; the harness's poll
// distribution draws exactly this (TestInlineLognormalDrawsAsDist).
func LognormalDraw(median, sigma float64, least time.Duration, r *rand.Rand) time.Duration {
	x := median * math.Exp(sigma*r.NormFloat64())
	if x > float64(math.MaxInt64/2) {
		x = float64(math.MaxInt64 / 2)
	}
	return max(time.Duration(x), least)
}

// CatchUp replays the uneventful polls due before now, and the one due
// exactly at now if includeNow. The harness calls it before delivering any
// other event to the member, with includeNow telling whether the poll at now
// would have been ordered before that event by the seed's tie-break, so lazy
// replay interleaves exactly as firing every poll would.
func (m *Member) CatchUp(now protocol.Instant, includeNow bool) {
	if m.stopped {
		return
	}
	m.app.fastForward(m, now, includeNow)
}

// Pause freezes the whole process at now (a GC pause: neither thread runs).
// The harness calls it so that polls are not replayed inside the pause; while
// frozen the member is simply not called.
func (m *Member) Pause(now protocol.Instant) {
	m.app.fastForward(m, now, false)
	m.frozen = true
}

// Resume thaws the process at now. A processing period that ended during the
// pause ends now, as the frozen thread would observe on waking; the harness
// then delivers the events held during the pause (without CatchUp: they
// come before that poll, as when every poll is its own event) and ticks both
// threads.
func (m *Member) Resume(now protocol.Instant) {
	if !m.frozen {
		return
	}
	m.frozen = false
	if m.app.phase == appBusy && m.app.busyUntil < now {
		m.app.busyUntil = now
	}
	if m.hb.threadEnabled {
		// The heartbeat thread's wait(retry.backoff.ms) timed out during
		// the pause: it wakes now, reads the events held meanwhile in its
		// pollNoWakeup and goes into a fresh wait (hbthread.go awake).
		// Deviation: a pause shorter than the rest of its wait would not
		// wake it; the modelled pauses are seconds long.
		m.hbt.thread.restartGrid(now)
	}
}
