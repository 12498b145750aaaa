package client

import (
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// heartbeatSender is the member's heartbeater with the HeartbeatThread's
// state inside it (and so inside the Member): a steady poll's failure check
// reads the Member's memory, not a second object's (the Member still fits
// memberSize). With the 0.10 HeartbeatTask the thread is unused and
// heartbeater points to the task.
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
	// awake: the thread that canPoll polls the network at now; if not, it
	// is asleep in its wait and reads the events queued meanwhile at its
	// next wake-up (hbthread.go awake).
	awake(now protocol.Instant) bool
	// failure is the error the heartbeat thread recorded, thrown from the
	// next poll() (protocol.None: none).
	failure() protocol.ErrorCode
	// networkPolled is the rest of the thread's loop iteration after its
	// network poll handled events that arrived (Member.netEvent).
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
	// padding (so the Member stays within memberSize).
	threadFailed  protocol.ErrorCode
	threadEnabled bool

	// 0.10 form.
	lastSend         protocol.Instant
	lastReceive      protocol.Instant
	lastSessionReset protocol.Instant
}

// invariant is what holds of the timers between calls:
//   - an enabled HeartbeatThread has all three timers running
//     (HeartbeatThread.enable calls heartbeat.resetTimeouts);
//   - a failed thread is disabled (HeartbeatThread.run: the failure ends
//     the loop; it is thrown from the next poll()).
func (h *heartbeat) invariant() string {
	switch {
	case h.threadEnabled && (h.heartbeatDeadline == protocol.Never || h.sessionDeadline == protocol.Never || h.pollDeadline == protocol.Never):
		return "an enabled heartbeat thread without its timers"
	case h.threadFailed != protocol.None && h.threadEnabled:
		return "a failed heartbeat thread still enabled"
	}
	return ""
}

// resetTimeouts is Heartbeat.resetTimeouts: all three timers restart from now.
func (h *heartbeat) resetTimeouts(now protocol.Instant, cfg *template) {
	h.sessionDeadline = now.Add(cfg.SessionTimeout)
	h.pollDeadline = now.Add(cfg.MaxPollInterval)
	h.heartbeatDeadline = now.Add(cfg.HeartbeatInterval)
}

// poll is Heartbeat.poll: the application called poll().
func (h *heartbeat) poll(now protocol.Instant, cfg *template) {
	h.pollDeadline = now.Add(cfg.MaxPollInterval)
}

// sentHeartbeat is Heartbeat.sentHeartbeat.
func (h *heartbeat) sentHeartbeat(now protocol.Instant, cfg *template) {
	h.lastSend = now
	h.heartbeatDeadline = now.Add(cfg.HeartbeatInterval)
}

// failHeartbeat is Heartbeat.failHeartbeat: retry after retry.backoff.ms
// (2.1+), or after the KIP-580 exponential backoff of the consecutive
// failures (3.7+; the jitter from the member's stream rng).
func (h *heartbeat) failHeartbeat(now protocol.Instant, cfg *template, rng *rand.Rand) {
	d := cfg.RetryBackoff
	if cfg.behaviour.exponentialBackoff {
		d = protocol.RetryBackoff(cfg.RetryBackoff, cfg.RetryBackoffMax, h.attempts, rng)
		h.attempts++
	}
	h.heartbeatDeadline = now.Add(d)
}

// receiveHeartbeat is Heartbeat.receiveHeartbeat: the client-side session
// restarts.
func (h *heartbeat) receiveHeartbeat(now protocol.Instant, cfg *template) {
	h.lastReceive = now
	h.sessionDeadline = now.Add(cfg.SessionTimeout)
	h.attempts = 0
}

// resetSessionTimeout is Heartbeat.resetSessionTimeout (FindCoordinator
// success).
func (h *heartbeat) resetSessionTimeout(now protocol.Instant, cfg *template) {
	h.sessionDeadline = now.Add(cfg.SessionTimeout)
	h.lastSessionReset = now
}

// timeToNextHeartbeat010 is the 0.10 Heartbeat.timeToNextHeartbeat.
func (h *heartbeat) timeToNextHeartbeat010(now protocol.Instant, cfg *template) time.Duration {
	last := max(h.lastSend, h.lastSessionReset)
	since := now.Sub(last)
	if since > cfg.HeartbeatInterval {
		return 0
	}
	return cfg.HeartbeatInterval - since
}

// sessionTimeoutExpired010 is the 0.10 Heartbeat.sessionTimeoutExpired
// (strict >).
func (h *heartbeat) sessionTimeoutExpired010(now protocol.Instant, cfg *template) bool {
	return now.Sub(max(h.lastSessionReset, h.lastReceive)) > cfg.SessionTimeout
}
