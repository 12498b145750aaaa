package client

import "github.com/rebalsim/rebalsim/model/protocol"

// heartbeatTask is the 0.9/0.10 HeartbeatTask: a delayed task on the
// application thread's DelayedTaskQueue, so heartbeats go out only while the
// application is inside poll() (no max.poll.interval.ms). The queue also
// holds the 0.10 AutoCommitTask (commit.go), so it is polled here.
type heartbeatTask struct {
	m        *Member
	at       protocol.Instant // the task's schedule (Never: unscheduled)
	inFlight bool             // its heartbeat awaits a response
}

func (t *heartbeatTask) enable(protocol.Instant)                 {}
func (t *heartbeatTask) disable()                                {}
func (t *heartbeatTask) polled(protocol.Instant)                 {}
func (t *heartbeatTask) canPoll() bool                           { return false }
func (t *heartbeatTask) awake(protocol.Instant) bool             { return true }
func (t *heartbeatTask) failure() protocol.ErrorCode             { return protocol.None }
func (t *heartbeatTask) tick(protocol.Instant, *Output)          {}
func (t *heartbeatTask) networkPolled(protocol.Instant, *Output) {}
func (t *heartbeatTask) nextDeadline() protocol.Instant          { return protocol.Never }
func (t *heartbeatTask) taskDeadline() protocol.Instant          { return t.at }
func (t *heartbeatTask) requestFailed(now protocol.Instant)      { t.done(now, false) }

// run is the 0.9/0.10 HeartbeatTask.run (seed 003).
func (t *heartbeatTask) run(now protocol.Instant, out *Output) {
	m := t.m
	t.at = protocol.Never
	if m.gen.id() < 0 || m.rejoinNeeded || !m.coord.known {
		return // not rescheduled; the next reset() does
	}
	if m.hb.sessionTimeoutExpired010(now, m.cfg) {
		m.markCoordinatorUnknown(now, out, deadSessionTimeout, protocol.None)
		return
	}
	if d := m.hb.timeToNextHeartbeat010(now, m.cfg); d > 0 {
		t.at = now.Add(d)
		return
	}
	m.hb.sentHeartbeat(now, m.cfg)
	t.inFlight = true
	// sendHeartbeatRequest.
	m.send(now, out, m.coord.node, true, m.gen.heartbeatRequest(m.cfg, m.instanceID()), m.cfg.RequestTimeout)
}

// done is the HeartbeatTask's future listener.
func (t *heartbeatTask) done(now protocol.Instant, ok bool) {
	m := t.m
	t.inFlight = false
	if ok {
		m.hb.lastReceive = now
		t.at = now.Add(m.hb.timeToNextHeartbeat010(now, m.cfg))
		return
	}
	t.at = now.Add(m.cfg.RetryBackoff)
}

// reset is HeartbeatTask.reset: after a join and on coordinator discovery
// with generation > 0.
func (t *heartbeatTask) reset(now protocol.Instant) {
	m := t.m
	m.hb.lastSessionReset = now
	t.at = protocol.Never
	if !t.inFlight {
		t.at = now
	}
}

// pollTasks is the 0.10.0 DelayedTaskQueue.poll(now): every due task in
// deadline order. Deviation: on equal deadlines the HeartbeatTask runs first
// (Java's PriorityQueue leaves the order of equal entries unspecified).
func (t *heartbeatTask) pollTasks(now protocol.Instant, out *Output) {
	m := t.m
	for range maxStepsPerCall {
		hbDue, commitDue := t.at <= now, m.autoCommit.at <= now
		switch {
		case hbDue && (!commitDue || t.at <= m.autoCommit.at):
			t.run(now, out)
		case commitDue:
			// The 0.10.0 AutoCommitTask (autoCommitState.runTask).
			if m.autoCommit.runTask(now, m.cfg, m.coord.known, m.rejoinNeededOrPending()) {
				corr, _ := m.sendOffsetCommit(now, out, commitTask)
				m.autoCommit.taskSent(now, corr, m.cfg)
			}
		default:
			return
		}
		if m.stopped || m.app.phase != appPolling {
			return
		}
	}
}

// handleResponse is the 0.10 HeartbeatCompletionHandler (seed 003) plus
// the HeartbeatTask's listener.
func (t *heartbeatTask) handleResponse(now protocol.Instant, out *Output, _ inflight, err protocol.ErrorCode) {
	m := t.m
	ok := false
	switch err {
	case protocol.None:
		ok = true
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, err)
	case protocol.RebalanceInProgress, protocol.IllegalGeneration:
		m.requestRejoin(out, rejoinReasonFor(err))
	case protocol.UnknownMemberID:
		// memberId = UNKNOWN_MEMBER_ID; rejoinNeeded = true (generation id kept).
		m.gen = newGeneration(m.gen.id(), "", m.gen.protocol, m.gen.hasProtocol) // a new value: generations are never changed in place
		m.emit(out, protocol.Event{Kind: protocol.EvGenerationReset, Detail: "drop-id", API: protocol.APIHeartbeat, Reason: err.String()})
		m.requestRejoin(out, RejoinUnknownMemberID)
	case protocol.GroupAuthorizationFailed:
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.CoordinatorLoadInProgress, protocol.InconsistentGroupProtocol, protocol.InvalidGroupID,
		protocol.InvalidSessionTimeout, protocol.InvalidCommitOffsetSize, protocol.UnsupportedVersion,
		protocol.GroupIDNotFound, protocol.MemberIDRequired, protocol.GroupMaxSizeReached,
		protocol.FencedInstanceID, protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower,
		protocol.UnknownTopicOrPartition, protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
	default:
	}
	t.done(now, ok)
}
