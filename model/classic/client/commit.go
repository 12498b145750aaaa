package client

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is offset auto-commit (enable.auto.commit): the 0.10.0
// AutoCommitTask, the 2.x/3.x nextAutoCommitTimer of ConsumerCoordinator.poll,
// onJoinPrepare's commit, close()'s commit, sendOffsetCommitRequest and
// OffsetCommitResponseHandler. Offsets themselves are not modelled: a commit
// names the owned partitions (subscriptions.allConsumed(); every owned
// partition has a position because records are always fetched).

// DefaultAutoCommitInterval is auto.commit.interval.ms's default (5000 ms),
// used when Config.AutoCommitInterval is zero.
const DefaultAutoCommitInterval = 5 * time.Second

// autoCommitState is ConsumerCoordinator's auto-commit state: the 0.10
// AutoCommitTask or the 2.x+ nextAutoCommitTimer, and onJoinPrepare's commit.
type autoCommitState struct {
	at       protocol.Instant // 0.10 AutoCommitTask schedule (Never while its commit is in flight); 2.x+ nextAutoCommitTimer
	runAt    protocol.Instant // 0.10: the run time of the task whose commit is in flight
	taskBusy bool             // 0.10: the task's commit is in flight
	fenced   bool             // asyncCommitFenced: FencedInstanceIdException thrown from the next poll()
	prep     prepPhase        // onJoinPrepare's commit
	req      *protocol.OffsetCommitRequest
	// p is onJoinPrepare's commit while it is under way and until the
	// join reads its generation (prep != prepIdle, or just back to it);
	// nil otherwise. Allocated per rebalance rather than kept in every
	// Member (memberSize).
	p *joinPrepCommit
}

// joinPrepCommit is the state of onJoinPrepare's auto-commit.
type joinPrepCommit struct {
	corr     uint64
	deadline protocol.Instant
	retryAt  protocol.Instant
	gen      *generation // ≤3.1: onJoinPrepare's generation arguments, read before its commit
	attempts int32       // close(): commitOffsetsSync's attempts (its 3.7+ exponential backoff)
}

// commitKind tags an OffsetCommit in flight with the caller whose future
// listener handles its outcome.
type commitKind uint8

const (
	commitNone    commitKind = iota // not an OffsetCommit
	commitTask                      // 0.10 AutoCommitTask.run → commitOffsetsAsync
	commitAuto                      // 2.x/3.x maybeAutoCommitOffsetsAsync (nextAutoCommitTimer)
	commitPrepare                   // onJoinPrepare's auto-commit (sync ≤3.1 and 0.10, async 3.2+)
	commitClose                     // close()'s synchronous auto-commit (close.go)
)

// commitResult is how a commit's RequestFuture completed.
type commitResult uint8

const (
	commitOK        commitResult = iota
	commitRetriable              // a RetriableException (RetriableCommitFailedException for async callers)
	commitFailed                 // not retriable: CommitFailedException, RebalanceInProgressException, authorization, "unexpected"
	commitFenced                 // FencedInstanceIdException (asyncCommitFenced for async callers)
)

// prepPhase is the progress of onJoinPrepare's auto-commit.
type prepPhase uint8

const (
	prepIdle     prepPhase = iota // not started for this onJoinPrepare
	prepInFlight                  // sent, waiting for the response
	prepBackoff                   // failed retriably (or about to send): (re)send at prepRetryAt
	prepDone                      // succeeded or failed for good: onJoinPrepare goes on
)

// autoCommitInterval is auto.commit.interval.ms (DefaultAutoCommitInterval when unset).
func (t *template) autoCommitInterval() time.Duration {
	if t.AutoCommitInterval > 0 {
		return t.AutoCommitInterval
	}
	return DefaultAutoCommitInterval
}

// autoCommitStart is the ConsumerCoordinator constructor's part: 0.10.0
// autoCommitTask.reschedule() (first run one interval after construction);
// 2.x+ nextAutoCommitTimer = time.timer(autoCommitIntervalMs). The simulator
// constructs the consumer when it starts.
func (a *autoCommitState) start(now protocol.Instant, cfg *template) {
	a.at = protocol.Never
	if cfg.AutoCommit {
		a.at = now.Add(cfg.autoCommitInterval())
	}
}

// reschedule is onJoinComplete's "reschedule the auto commit
// starting from now": 0.10.0 autoCommitTask.reschedule(), 2.x+
// nextAutoCommitTimer.updateAndReset(autoCommitIntervalMs). Deviation
// (0.10): Java's DelayedTaskQueue may then hold the task twice if its commit
// is in flight; the simulator keeps one schedule, the earlier of the two.
func (a *autoCommitState) reschedule(now protocol.Instant, cfg *template) {
	if cfg.AutoCommit {
		a.at = now.Add(cfg.autoCommitInterval())
	}
}

// samePartitions reports whether a and b are the same slice (the owned set is
// replaced, never mutated in place, so identity means equality).
func samePartitions(a, b []protocol.TopicPartition) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sendOffsetCommit is ConsumerCoordinator.sendOffsetCommitRequest for
// subscriptions.allConsumed(). It reports whether a request was sent; if not,
// the future completed locally with the returned result: an unknown
// coordinator fails retriably (RequestFuture.coordinatorNotAvailable), empty
// offsets succeed (RequestFuture.voidSuccess), and from 2.x a member that is
// not STABLE fails with CommitFailedException/RebalanceInProgressException
// (generationIfStable() == null). 0.10 sends its generation and member id
// whatever they are. The request is reused while the generation and the
// owned set are unchanged (no allocation per commit).
func (m *Member) sendOffsetCommit(now protocol.Instant, out *Output, kind commitKind) (uint64, commitResult) {
	if !m.coord.known {
		return 0, commitRetriable
	}
	if len(m.owned) == 0 {
		return 0, commitOK
	}
	if !m.cfg.behaviour.commit010 && m.state != Stable {
		return 0, commitFailed
	}
	req := m.autoCommit.req
	if req == nil || req.GenerationID != m.gen.id() || req.MemberID != m.gen.memberID() || !samePartitions(req.Partitions, m.owned) {
		req = &protocol.OffsetCommitRequest{GroupID: m.cfg.GroupID, GenerationID: m.gen.id(), MemberID: m.gen.memberID(), Partitions: m.owned}
		if m.cfg.behaviour.staticMembership {
			req.GroupInstanceID = m.instanceID()
		}
		m.autoCommit.req = req
	}
	corr := m.net.Send(now, out, m.coord.node, true, req, m.cfg.RequestTimeout, reqData{sentGen: m.gen}, netOwner{m})
	m.net.TagLast(uint8(kind)) // the commit kind (reqData)
	return corr, commitOK
}

// runTask is the 0.10.0 ConsumerCoordinator.AutoCommitTask.run, a delayed
// task run only inside poll() like the HeartbeatTask (the delayed-task queue
// is heartbeatTask.pollTasks): coordinator unknown → retry after
// retry.backoff.ms; rejoin needed → skip (onJoinPrepare commits) and
// reschedule after the interval; else commitOffsetsAsync: it reports true
// and the caller sends the commit (taskSent), whose callback reschedules at
// run time + interval on success and on failure alike (the 0.10.0 code;
// there is no retry.backoff after a failed commit).
func (a *autoCommitState) runTask(now protocol.Instant, cfg *template, coordKnown, rejoinPending bool) bool {
	a.at = protocol.Never
	switch {
	case !coordKnown:
		a.at = now.Add(cfg.RetryBackoff)
	case rejoinPending:
		a.at = now.Add(cfg.autoCommitInterval())
	default:
		return true
	}
	return false
}

// taskSent is the AutoCommitTask's commit sent as corr (0: completed
// locally, the callback runs at once).
func (a *autoCommitState) taskSent(now protocol.Instant, corr uint64, cfg *template) {
	if corr == 0 {
		a.at = now.Add(cfg.autoCommitInterval())
		return
	}
	a.taskBusy = true
	a.runAt = now
}

// timerExpired is maybeAutoCommitOffsetsAsync's check (2.x/3.x), called at
// the end of ConsumerCoordinator.poll once the group is joined: when
// nextAutoCommitTimer expired it is reset to the interval and the caller
// sends an async commit (autoCommitOffsetsAsync).
func (a *autoCommitState) timerExpired(now protocol.Instant, cfg *template) bool {
	if !cfg.AutoCommit || now < a.at {
		return false
	}
	a.at = now.Add(cfg.autoCommitInterval())
	return true
}

// nextDeadline is the auto-commit's contribution to the application
// thread's next wake-up inside poll() (with enable.auto.commit): the 0.10
// task's schedule, or (2.x+, ConsumerCoordinator.timeToNextPoll) the timer
// while it can fire, that is while the coordinator is known and the group
// joined (joined).
func (a *autoCommitState) nextDeadline(b *behaviour, joined bool) protocol.Instant {
	if b.commit010 || joined {
		return a.at
	}
	return protocol.Never
}

// joinPrepareCommit is onJoinPrepare's auto-commit. ≤3.1
// (maybeAutoCommitOffsetsSync) and 0.10: a synchronous commit, the
// application thread blocked in poll() until it completes, sleeping
// retry.backoff.ms between retriable failures, bounded by the rebalance
// timeout (2.x–3.1) or not at all (0.10.0 commitOffsetsSync loops until
// success or a non-retriable error). 3.2+: an async commit waited for by
// returning from onJoinPrepare (poll() returns meanwhile), retried after a
// retriable failure, bounded by the join-prepare timer (the rebalance timeout,
// KAFKA-13310, 3.3). Failures are only logged. It reports whether
// onJoinPrepare may revoke and the JoinGroup be sent.
// Deviations: 3.2.x is modelled with the 3.3 timer; 3.2+ retries after
// retry.backoff.ms rather than at the next poll (a zero poll timer sleeps 0).
func (m *Member) joinPrepareCommit(now protocol.Instant, out *Output) bool {
	if !m.cfg.AutoCommit {
		return true
	}
	for range maxStepsPerCall {
		switch m.autoCommit.prep {
		case prepDone:
			m.autoCommit.prep = prepIdle
			return true
		case prepIdle:
			if m.autoCommit.p == nil {
				m.autoCommit.p = new(joinPrepCommit)
			}
			p := m.autoCommit.p
			*p = joinPrepCommit{gen: m.gen, deadline: protocol.Never} // ≤3.1: onJoinPrepare's arguments were read before the commit
			if !m.cfg.behaviour.commit010 {
				p.deadline = now.Add(m.cfg.MaxPollInterval)
			}
			m.autoCommit.prep, p.retryAt = prepBackoff, now
		case prepInFlight:
			if now >= m.autoCommit.p.deadline {
				m.autoCommit.prep, m.autoCommit.p.corr = prepIdle, 0 // timed out: continue to join
				return true
			}
			return false
		case prepBackoff:
			if now >= m.autoCommit.p.deadline {
				m.autoCommit.prep = prepIdle
				return true
			}
			if now < m.autoCommit.p.retryAt {
				if !m.cfg.behaviour.asyncJoinPrepareCommit {
					m.app.startBusy(now, m.autoCommit.p.retryAt.Sub(now), contResume) // Timer.sleep(retry.backoff.ms)
				}
				return false
			}
			corr, res := m.sendOffsetCommit(now, out, commitPrepare)
			if corr != 0 {
				m.autoCommit.prep, m.autoCommit.p.corr = prepInFlight, corr
				return false
			}
			m.autoCommit.prep = prepInFlight
			m.autoCommit.prepCommitDone(now, 0, res, m.cfg)
		}
	}
	return false
}

// prepActive: onJoinPrepare's commit is under way.
func (a *autoCommitState) prepActive() bool {
	return a.prep == prepInFlight || a.prep == prepBackoff
}

// prepBlocksRecords: while onJoinPrepare's commit is under way poll() returns
// no records: ≤3.1 and 0.10 are blocked in the synchronous commit; 3.3+ EAGER
// marked every owned partition pending revocation (KAFKA-14196). 3.2+
// COOPERATIVE keeps fetching.
func (a *autoCommitState) prepBlocksRecords(b *behaviour, cooperative bool) bool {
	return a.prepActive() && (!b.asyncJoinPrepareCommit || !cooperative)
}

// nextPrepDeadline is when onJoinPrepare's commit has something to do
// (resend or give up); the caller asks only while it can progress (the
// coordinator known, onJoinPrepare pending, no join under way).
func (a *autoCommitState) nextPrepDeadline() protocol.Instant {
	switch a.prep {
	case prepInFlight:
		return a.p.deadline
	case prepBackoff:
		return min(a.p.deadline, a.p.retryAt)
	case prepIdle, prepDone:
	}
	return protocol.Never
}

// prepCommitDone completes onJoinPrepare's commit future (corr 0: completed
// locally).
func (a *autoCommitState) prepCommitDone(now protocol.Instant, corr uint64, res commitResult, cfg *template) {
	if a.prep != prepInFlight || corr != a.p.corr {
		return // a commit onJoinPrepare stopped waiting for
	}
	a.p.corr = 0
	if res == commitRetriable {
		a.prep, a.p.retryAt = prepBackoff, now.Add(cfg.RetryBackoff)
		return
	}
	a.prep = prepDone
}

// commitCompleted runs the listener of a commit's future: close()'s is the
// coordinator's (closeCommitDone), the others auto-commit's own.
func (m *Member) commitCompleted(now protocol.Instant, out *Output, e inflight, res commitResult) {
	if commitKind(e.Tag) == commitClose {
		m.closeCommitDone(now, e.Corr, res)
		return
	}
	m.autoCommit.completed(now, commitKind(e.Tag), e.Corr, res, m.cfg)
}

// completed runs the listener of an auto-commit's future (every kind but
// commitClose).
func (a *autoCommitState) completed(now protocol.Instant, kind commitKind, corr uint64, res commitResult, cfg *template) {
	switch kind {
	case commitTask:
		// AutoCommitTask's callback: reschedule(now + interval), success or not.
		a.taskBusy = false
		a.at = min(a.at, a.runAt.Add(cfg.autoCommitInterval()))
	case commitAuto:
		// autoCommitOffsetsAsync's callback (run by invokeCompletedOffsetCommitCallbacks;
		// deviation: at completion rather than at the next poll()).
		switch res {
		case commitRetriable:
			a.at = now.Add(cfg.RetryBackoff) // nextAutoCommitTimer.updateAndReset(retryBackoffMs)
		case commitFenced:
			a.fenced = true // asyncCommitFenced: thrown from the next poll()
		case commitOK, commitFailed:
			// logged only
		}
	case commitPrepare:
		if res == commitFenced && cfg.behaviour.asyncJoinPrepareCommit {
			a.fenced = true // 3.2+: an async commit; ≤3.1 maybeAutoCommitOffsetsSync only logs
		}
		a.prepCommitDone(now, corr, res, cfg)
	case commitClose, commitNone:
	}
}

// invariant is what holds of auto-commit between calls:
//   - without enable.auto.commit there is no auto-commit timer
//     (ConsumerCoordinator: nextAutoCommitTimer and the 0.10
//     AutoCommitTask exist only when autoCommitEnabled);
//   - onJoinPrepare's (or close()'s) commit under way has its record;
//   - the reused OffsetCommit request names partitions (with none owned the
//     commit completes locally, RequestFuture.voidSuccess, and no request
//     is built).
func (a *autoCommitState) invariant(cfg *template) string {
	switch {
	case !cfg.AutoCommit && a.at != protocol.Never:
		return "an auto-commit timer without enable.auto.commit"
	case a.prep != prepIdle && a.p == nil:
		return "onJoinPrepare's commit under way without its record"
	case a.req != nil && len(a.req.Partitions) == 0:
		return "an OffsetCommit request without partitions"
	}
	return ""
}

// handleOffsetCommit is ConsumerCoordinator.OffsetCommitResponseHandler.handle
// (§12.10, §5.10) for the one error the simulator's commit response carries.
// It returns how the commit future completes.
//
//   - 0.10.0: UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION / REBALANCE_IN_PROGRESS →
//     subscriptions.needReassignment() (the rejoin flag; generation and member
//     id kept) and CommitFailedException.
//   - 2.3–2.4: the same three → resetGeneration() (member id dropped) + rejoin.
//   - 2.5+: REBALANCE_IN_PROGRESS → requestRejoin only (2.6+:
//     RebalanceInProgressException); UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION →
//     resetStateOnResponseError + rejoin (3.2+, KAFKA-13419: ILLEGAL_GENERATION
//     keeps the member id), except (2.6+, KAFKA-9823) when the generation
//     changed since the commit was sent and the member is PREPARING_REBALANCE
//     (RebalanceInProgressException, nothing reset). As in Java, a changed
//     generation in any other state still resets.
//   - FENCED_INSTANCE_ID (2.3+): fatal for async commits (2.6+: only if the
//     generation is unchanged).
func (m *Member) handleOffsetCommit(now protocol.Instant, out *Output, e inflight, err protocol.ErrorCode) commitResult {
	switch err {
	case protocol.None:
		return commitOK
	case protocol.CoordinatorLoadInProgress:
		return commitRetriable // "just retry"
	case protocol.UnknownTopicOrPartition:
		if m.cfg.behaviour.commit010 {
			return commitFailed // 0.10.0: "Unexpected error in commit"
		}
		return commitRetriable // 2.x+: "just retry"
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.RequestTimedOut:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, err)
		return commitRetriable
	case protocol.UnknownMemberID, protocol.IllegalGeneration:
		switch {
		case m.cfg.behaviour.commit010:
			m.requestRejoin(out, RejoinCommitFailed)
		case !m.cfg.behaviour.sentGenCheck:
			m.resetStateOnResponseError(out, protocol.APIOffsetCommit, err, RejoinCommitFailed)
		case !m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) && m.state == PreparingRebalance:
			// RebalanceInProgressException: the member already moved on.
		default:
			m.resetStateOnResponseError(out, protocol.APIOffsetCommit, err, RejoinCommitFailed)
		}
		return commitFailed
	case protocol.RebalanceInProgress:
		switch {
		case m.cfg.behaviour.commit010, m.cfg.behaviour.commitRebalanceRejoinOnly:
			m.requestRejoin(out, RejoinCommitFailed)
		default:
			m.resetStateOnResponseError(out, protocol.APIOffsetCommit, err, RejoinCommitFailed)
		}
		return commitFailed
	case protocol.FencedInstanceID:
		if m.cfg.behaviour.commit010 || !m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			return commitFailed // 0.10: unexpected; 2.6+ stale: CommitFailed/RebalanceInProgress
		}
		return commitFenced
	case protocol.GroupAuthorizationFailed, protocol.InvalidCommitOffsetSize:
		return commitFailed // raised to the caller as is
	case protocol.UnknownServerError, protocol.NetworkException, protocol.NotLeaderOrFollower,
		protocol.NotEnoughReplicas, protocol.NotEnoughReplicasAfterAppend, protocol.InconsistentGroupProtocol,
		protocol.InvalidGroupID, protocol.InvalidSessionTimeout, protocol.UnsupportedVersion,
		protocol.KafkaStorageError, protocol.GroupIDNotFound, protocol.MemberIDRequired,
		protocol.GroupMaxSizeReached, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		return commitFailed // KafkaException "Unexpected error in commit"
	default:
		return commitFailed
	}
}
