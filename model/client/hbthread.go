package client

import "github.com/rebalsim/rebalsim/model/protocol"

// hbRunOnce is one iteration of HeartbeatThread.run (3.6.1, §8.2, with the
// profile's lookup pacing). It reports whether the loop should go round again
// at once (Java: no wait in that branch).
func (m *Member) hbRunOnce(now protocol.Instant, out *Output) bool {
	if !m.hbEnabled || m.stopped {
		return false
	}
	if (m.b.fourStates && m.state.hasNotJoinedGroup()) || (!m.b.fourStates && m.state != Stable) || m.hbFailed != protocol.None {
		m.hbEnabled = false
		return false
	}
	if !m.checkCoordinator(now, out) {
		if now < m.hbWaitUntil {
			return false
		}
		switch m.b.pacing {
		case pacing23:
			if m.coord.findCorr == 0 {
				m.lookupCoordinator(now, out)
			}
		case pacing28:
			if m.coord.findCorr == 0 && m.coord.stale == findStaleNone {
				m.lookupCoordinator(now, out)
				return true // loop without waiting: the next pass forgets it and waits
			}
			// clearFindCoordinatorFuture; its response is still handled.
			m.coord.findCorr, m.coord.stale = 0, findStaleNone
		case pacing33:
			// AbstractCoordinator 3.7.0 1493-1502: a referenced future (in
			// flight, or completed: the response handler no longer clears
			// it) is cleared and waited on; the next pass sends. So with
			// responses faster than retry.backoff.ms a lookup goes out every
			// 2 x retry.backoff.ms.
			if m.coord.findCorr != 0 || m.coord.stale != findStaleNone {
				m.coord.findCorr, m.coord.stale = 0, findStaleNone
			} else {
				m.lookupCoordinator(now, out)
			}
		}
		m.hbWaitUntil = now.Add(m.cfg.RetryBackoff)
		return false
	}
	if m.cfg.HeartbeatWakeCadence {
		// The thread acts at its first wake-up at or after the earliest
		// deadline (after a pause: at once, its wait timed out).
		d := min(m.hb.sessionDeadline, m.hb.heartbeatDeadline)
		if m.app.phase != appPolling {
			d = min(d, m.hb.pollDeadline)
		}
		if now < m.hbWake(d) {
			return false
		}
	}
	if now >= m.hb.sessionDeadline {
		// The client-side session expired without a successful heartbeat
		// response: the "false coordinator dead" path (generation kept).
		m.markCoordinatorUnknown(now, out, deadSessionTimeout, protocol.None, false)
		return true
	}
	if m.app.phase != appPolling && now >= m.hb.pollDeadline {
		// handlePollTimeoutExpiry: max.poll.interval.ms since the last poll().
		m.emit(out, protocol.Event{Kind: protocol.EvPollTimeout, Gen: m.gen.id})
		m.maybeLeaveGroup(now, out, protocol.LeavePollTimeout)
		return true
	}
	if now < m.hb.heartbeatDeadline {
		return false
	}
	m.hbSent(now)
	m.sendHeartbeat(now, out)
	return false
}

// hbWake is the first wake-up of the heartbeat thread at or after d with
// HeartbeatWakeCadence (a grid of retry.backoff.ms through hbWakeBase), else
// d itself.
func (m *Member) hbWake(d protocol.Instant) protocol.Instant {
	step := protocol.Instant(m.cfg.RetryBackoff)
	if !m.cfg.HeartbeatWakeCadence || d == protocol.Never || step <= 0 {
		return d
	}
	off := (d - m.hbWakeBase) % step
	if off < 0 {
		off += step
	}
	if off == 0 {
		return d
	}
	return d + step - off
}

// sendHeartbeat is AbstractCoordinator.sendHeartbeatRequest. The request value
// is immutable once sent, so one is shared by every heartbeat of a generation
// (no allocation per heartbeat).
func (m *Member) sendHeartbeat(now protocol.Instant, out *Output) {
	if m.hb.req == nil || m.hb.req.GenerationID != m.gen.id || m.hb.req.MemberID != m.gen.memberID {
		m.hb.req = &protocol.HeartbeatRequest{GroupID: m.cfg.GroupID, GenerationID: m.gen.id, MemberID: m.gen.memberID}
		if m.b.staticMembership {
			m.hb.req.GroupInstanceID = m.cfg.GroupInstanceID
		}
	}
	m.send(now, out, m.coord.node, true, m.hb.req, m.cfg.RequestTimeout)
}

// runHeartbeatTask is the 0.9/0.10 HeartbeatTask.run (seed 003): a delayed
// task that only runs while the application thread is inside poll().
func (m *Member) runHeartbeatTask(now protocol.Instant, out *Output) {
	m.taskAt = protocol.Never
	if m.gen.id < 0 || m.rejoinNeeded || !m.coord.known {
		return // not rescheduled; the next reset() does
	}
	if m.hbSessionExpired010(now) {
		m.markCoordinatorUnknown(now, out, deadSessionTimeout, protocol.None, false)
		return
	}
	if d := m.hbTimeToNext010(now); d > 0 {
		m.taskAt = now.Add(d)
		return
	}
	m.hbSent(now)
	m.taskInFlight = true
	m.sendHeartbeat(now, out)
}

// taskHeartbeatDone is the HeartbeatTask's future listener.
func (m *Member) taskHeartbeatDone(now protocol.Instant, ok bool) {
	m.taskInFlight = false
	if ok {
		m.hb.lastReceive = now
		m.taskAt = now.Add(m.hbTimeToNext010(now))
		return
	}
	m.taskAt = now.Add(m.cfg.RetryBackoff)
}

// taskReset is HeartbeatTask.reset: after a join and on coordinator
// discovery with generation > 0.
func (m *Member) taskReset(now protocol.Instant) {
	m.hb.lastSessionReset = now
	m.taskAt = protocol.Never
	if !m.taskInFlight {
		m.taskAt = now
	}
}
