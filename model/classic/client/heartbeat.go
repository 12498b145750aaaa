package client

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// heartbeatSender is the member's heartbeater with the HeartbeatThread's
// state inside it (and so inside the Member): a steady poll's failure check
// reads the Member's memory, not a second object's (issue 15; the Member
// still fits its size class, TestMemberSize). With the 0.10
// HeartbeatTask the thread is unused and heartbeater points to the task.
type heartbeatSender struct {
	heartbeater
	thread heartbeatThread
}

// heartbeater is the part of the client that keeps the session alive. Two
// implementations, chosen once in NewMember from the profile: the 2.x+
// HeartbeatThread (hbthread.go; 0.10.1+, KIP-62) and the 0.9/0.10
// HeartbeatTask run from the application thread's delayed-task queue
// (hbtask.go). The member calls it at the points where Kafka's
// AbstractCoordinator calls into either; a hook one of them has no use for
// does nothing there.
type heartbeater interface {
	// enable is HeartbeatThread.enable (timers restart from now); disable is
	// HeartbeatThread.disable.
	enable(now protocol.Instant)
	disable()
	// polled is Heartbeat.poll: the application called poll() (the 0.10
	// Heartbeat has no poll timer).
	polled(now protocol.Instant)
	// canPoll: a thread other than the application thread can handle
	// network events now.
	canPoll() bool
	// failure is the error the heartbeat thread recorded, thrown from the
	// next poll() (protocol.None: none).
	failure() protocol.ErrorCode
	// networkPolled is the rest of the thread's loop iteration after its
	// network poll handled events that arrived (deliver).
	networkPolled(now protocol.Instant, out *Output)
	// tick and nextDeadline are TickHeartbeat and NextHeartbeatDeadline.
	tick(now protocol.Instant, out *Output)
	nextDeadline() protocol.Instant
	// taskDeadline and pollTasks are the application thread's delayed-task
	// queue (0.10): its next due task, and running the due ones.
	taskDeadline() protocol.Instant
	pollTasks(now protocol.Instant, out *Output)
	// reset is HeartbeatTask.reset (0.10): at onJoinComplete's end, and on
	// a FindCoordinator success with a generation. The thread has none.
	reset(now protocol.Instant)
	// handleResponse and requestFailed complete a Heartbeat request.
	handleResponse(now protocol.Instant, out *Output, e inflight, err protocol.ErrorCode)
	requestFailed(now protocol.Instant)
}

// heartbeat is Heartbeat.java in its timer form (2.1+, §6.1) plus the
// timestamps of the 0.9/0.10 form (§6.3) used by the kafka-0.10 profile.
// Deadlines are absolute instants; "expired" is now >= deadline as in
// org.apache.kafka.common.utils.Timer.
type heartbeat struct {
	heartbeatDeadline protocol.Instant // heartbeatTimer
	sessionDeadline   protocol.Instant // sessionTimer
	pollDeadline      protocol.Instant // pollTimer
	attempts          int32            // 3.7+ heartbeatAttempts (KIP-580)
	// The HeartbeatThread's failure (thrown from the next poll()) and
	// enabled flag, here beside attempts rather than in heartbeatThread's
	// padding (issue 15: the Member stays in the 448-byte size class).
	threadFailed  protocol.ErrorCode
	threadEnabled bool

	// 0.10 form.
	lastSend         protocol.Instant
	lastReceive      protocol.Instant
	lastSessionReset protocol.Instant
}

// hbResetTimeouts is Heartbeat.resetTimeouts: all three timers restart from now.
func (m *Member) hbResetTimeouts(now protocol.Instant) {
	m.hb.sessionDeadline = now.Add(m.cfg.SessionTimeout)
	m.hb.pollDeadline = now.Add(m.cfg.MaxPollInterval)
	m.hb.heartbeatDeadline = now.Add(m.cfg.HeartbeatInterval)
}

// hbPoll is Heartbeat.poll: the application called poll().
func (m *Member) hbPoll(now protocol.Instant) { m.hb.pollDeadline = now.Add(m.cfg.MaxPollInterval) }

// hbSent is Heartbeat.sentHeartbeat.
func (m *Member) hbSent(now protocol.Instant) {
	m.hb.lastSend = now
	m.hb.heartbeatDeadline = now.Add(m.cfg.HeartbeatInterval)
}

// hbFail is Heartbeat.failHeartbeat: retry after retry.backoff.ms (2.1+), or
// after the KIP-580 exponential backoff of the consecutive failures (3.7+).
func (m *Member) hbFail(now protocol.Instant) {
	d := m.cfg.RetryBackoff
	if m.cfg.behaviour.exponentialBackoff {
		d = protocol.RetryBackoff(m.cfg.RetryBackoff, m.cfg.RetryBackoffMax, m.hb.attempts, m.rng)
		m.hb.attempts++
	}
	m.hb.heartbeatDeadline = now.Add(d)
}

// hbReceive is Heartbeat.receiveHeartbeat: the client-side session restarts.
func (m *Member) hbReceive(now protocol.Instant) {
	m.hb.lastReceive = now
	m.hb.sessionDeadline = now.Add(m.cfg.SessionTimeout)
	m.hb.attempts = 0
}

// hbResetSession is Heartbeat.resetSessionTimeout (FindCoordinator success).
func (m *Member) hbResetSession(now protocol.Instant) {
	m.hb.sessionDeadline = now.Add(m.cfg.SessionTimeout)
	m.hb.lastSessionReset = now
}

// hbTimeToNext010 is the 0.10 Heartbeat.timeToNextHeartbeat.
func (m *Member) hbTimeToNext010(now protocol.Instant) time.Duration {
	last := max(m.hb.lastSend, m.hb.lastSessionReset)
	since := now.Sub(last)
	if since > m.cfg.HeartbeatInterval {
		return 0
	}
	return m.cfg.HeartbeatInterval - since
}

// hbSessionExpired010 is the 0.10 Heartbeat.sessionTimeoutExpired (strict >).
func (m *Member) hbSessionExpired010(now protocol.Instant) bool {
	return now.Sub(max(m.hb.lastSessionReset, m.hb.lastReceive)) > m.cfg.SessionTimeout
}
