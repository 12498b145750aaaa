package client

import (
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Limits on the loops that stand for Java's blocking loops (TIGER_STYLE: a
// limit on everything). A call into the model handles what is due at its
// instant; a loop that would need more passes than these is a model bug,
// and the caller's next tick resumes it.
const (
	maxPollPasses      = 16 // appThread.iterate: KafkaConsumer.poll loop passes per call
	maxJoinPasses      = 16 // joinGroupIfNeeded's loop
	maxHeartbeatPasses = 8  // HeartbeatThread.run iterations per tick
	maxTimersPerTick   = 64 // expired timers handled per tick (TickApp, HandleTimeouts)
	maxStepsPerCall    = 4  // small state machines: onJoinPrepare's commit, the 0.10 delayed-task queue
)

// joinVersionMemberIDRequired is the first JoinGroup version answered
// MEMBER_ID_REQUIRED (v4, KIP-394).
const joinVersionMemberIDRequired = 4

// Member is one Kafka consumer's group membership: AbstractCoordinator,
// ConsumerCoordinator, Heartbeat and HeartbeatThread as one pure state
// machine, held in Kafka's parts, each with its own rules and invariant():
// the coordinator lookup (lookup.go), the join future (join.go), the
// application thread (app.go, lazy.go), the heartbeat timers (heartbeat.go)
// and the heartbeater (the HeartbeatThread, hbthread.go, or the 0.10
// HeartbeatTask, hbtask.go), auto-commit (commit.go), the metadata view
// (metadata.go), the network client (netclient.go) and the generation
// (state.go). The Member's own methods are the coordinator's rules that
// read or change more than one part, its state transitions (become*) and
// the public API. See doc.go for how to drive it.
//
// Member stays within memberSize: hence the profile's behaviour is
// cfg.behaviour, the generation is a pointer to an immutable value (shared
// with the requests in flight), the group.instance.id and onJoinPrepare's
// commit sit behind pointers that are nil for most members most of the
// time, the sub-structs keep their small fields together, and no part holds
// a pointer back to the Member (the application thread's methods take it
// as an argument).
type Member struct {
	cfg         *template // shared by the members built from one Template (all but the two names)
	name        string    // client.id (Config.Name)
	static      *string   // group.instance.id (Config.GroupInstanceID); nil when dynamic (instanceID)
	rng         *rand.Rand
	cooperative bool // the rebalance protocol is COOPERATIVE (KIP-429)

	state            MemberState
	onApp            bool        // the thread handling the current event is the application thread
	frozen           bool        // Pause..Resume: no lazy poll replay (lazy.go)
	gen              *generation // immutable: replaced whole, never changed in place (shared by the requests in flight)
	rejoinNeeded     bool
	rejoinReason     RejoinReason
	needsJoinPrepare bool
	started          bool
	stopped          bool
	fatalErr         protocol.ErrorCode
	owned            []protocol.TopicPartition

	coord      coordinatorLookup
	join       joinFuture
	app        appThread
	hb         heartbeat       // Heartbeat's timers
	hbt        heartbeatSender // the HeartbeatThread or the 0.10 HeartbeatTask
	autoCommit autoCommitState
	net        netClient
	meta       *metadataView // only with Config.Metadata.Cluster (metadata.go); nil otherwise
}

// memberSize is Member's size on 64-bit platforms: the 448-byte allocation
// size class, the per-member budget that keeps a 100,000-member run's live
// heap in bounds (above 512 bytes an object with pointers also carries an
// 8-byte malloc header, Go 1.22+, so 513 bytes would take the 576-byte
// class). Change it deliberately.
const memberSize = 448

var _ [memberSize - unsafe.Sizeof(Member{})]struct{} // fails to compile if Member grows

// NewMember builds a member from a validated configuration (it panics on an
// invalid one, as Kafka's constructors throw). rng is the member's own random
// stream: backoff jitter and workload draws. Many members of one
// configuration are cheaper built from one Template (NewTemplate).
func NewMember(cfg Config, rng *rand.Rand) *Member {
	return newMember(cfg, rng, defaultAssignorLookup)
}

func newMember(cfg Config, rng *rand.Rand, lookup func(string) (assign.Assignor, bool)) *Member {
	if err := cfg.Validate(); err != nil {
		panic("client: NewMember: " + err.Error())
	}
	t, err := newTemplate(cfg, lookup)
	if err != nil {
		panic("client: NewMember: " + err.Error())
	}
	return t.newMember(cfg.Name, cfg.GroupInstanceID, rng)
}

// instanceID is the member's group.instance.id, "" for a dynamic member.
// Kept behind a pointer, nil for the usual dynamic member, so the Member
// stays within memberSize.
func (m *Member) instanceID() string {
	if m.static == nil {
		return ""
	}
	return *m.static
}

// ---- public API ----

// Start is the process starting: the application thread enters its poll
// loop and calls poll() at now.
func (m *Member) Start(now protocol.Instant, out *Output) {
	if m.started || m.stopped {
		return
	}
	m.started = true
	m.autoCommit.start(now, m.cfg)
	m.app.pollStart(m, now, out)
	m.assertInvariants(out)
}

// Step delivers a response that arrived from broker. It is handled at once
// by the application thread if it is inside poll(), else by the heartbeat
// thread at its next wake-up if it is enabled (and not blocked on the
// coordinator monitor), else queued until one of them polls the network
// (doc.go, "Which thread").
func (m *Member) Step(now protocol.Instant, broker int32, corr uint64, resp protocol.Response, out *Output) {
	m.netEvent(now, queued{kind: qResponse, broker: broker, corr: corr, resp: resp}, out)
}

// netEvent hands a network event to whichever thread polls the network
// (doc.go, "Which thread"): the application thread inside poll(), else the
// heartbeat thread if it can take the monitor, else the queue.
func (m *Member) netEvent(now protocol.Instant, q queued, out *Output) {
	if m.stopped || !m.started {
		return
	}
	m.app.fastForward(m, now, false)
	switch {
	case m.app.phase == appPolling:
		m.onApp = true
		m.net.queue = append(m.net.queue, q)
		m.app.iterate(m, now, out)
	case m.hbt.canPoll():
		m.onApp = false
		m.net.queue = append(m.net.queue, q)
		if m.hbt.awake(now) {
			m.net.firePendingCompletions(m, now, out)
			m.hbt.networkPolled(now, out)
		}
	default:
		m.net.queue = append(m.net.queue, q)
	}
	m.assertInvariants(out)
}

// Disconnected tells the member its connections to broker were reset:
// every request in flight to it fails with a DisconnectException, observed by
// the next thread that polls the network.
func (m *Member) Disconnected(now protocol.Instant, broker int32, out *Output) {
	m.netEvent(now, queued{kind: qDisconnect, broker: broker, corr: m.net.LastCorr()}, out)
}

// ConnectionClosed tells the member that one of its connections was torn
// down from below: the peer's FIN/RST (why "peer-closed") or the kernel
// giving up retransmitting, or an RST from a rebooted peer ("reset"). Seen at
// the next network poll.
func (m *Member) ConnectionClosed(now protocol.Instant, broker int32, coord bool, why string, out *Output) {
	i, ok := m.cfg.whyIndex(why)
	if !ok {
		if !m.stopped && m.started {
			m.assertFailed(out, "net", "more distinct connection-close reasons than the table holds")
		}
		return
	}
	m.netEvent(now, queued{kind: qConnDown, broker: broker, coord: coord, why: i}, out)
}

// Connected tells the member that a connection it asked for (Output.Conns)
// is READY.
func (m *Member) Connected(now protocol.Instant, broker int32, coord bool, out *Output) {
	m.netEvent(now, queued{kind: qConnected, broker: broker, coord: coord}, out)
}

// ConnectFailed tells the member that a connection attempt failed (refused,
// or the SYNs went unanswered until the kernel gave up).
func (m *Member) ConnectFailed(now protocol.Instant, broker int32, coord bool, out *Output) {
	m.netEvent(now, queued{kind: qConnectFailed, broker: broker, coord: coord}, out)
}

// TickApp runs the application thread's expired timers: end of processing,
// of a callback, of the assignor or of a backoff sleep; end of a poll()
// block; request timeouts and (kafka-0.10) the heartbeat task while it is
// inside poll(). Safe to call early or late.
func (m *Member) TickApp(now protocol.Instant, out *Output) {
	if m.stopped || !m.started {
		return
	}
	m.app.fastForward(m, now, true)
	m.app.tick(m, now, out)
	m.assertInvariants(out)
}

// tick runs the thread's timers expired up to now (TickApp).
func (a *appThread) tick(m *Member, now protocol.Instant, out *Output) {
	for range maxTimersPerTick {
		switch a.phase {
		case appBusy:
			if now < a.busyUntil {
				return
			}
			a.finishBusy(m, now, out)
		case appPolling:
			if now < a.nextPollingDeadline(m) {
				return
			}
			m.onApp = true
			before := a.nextPollingDeadline(m)
			a.iterate(m, now, out)
			if a.phase == appPolling && a.nextPollingDeadline(m) <= before {
				return // nothing more can happen at now
			}
		case appNotStarted, appStopped:
			return
		}
	}
}

// TickHeartbeat runs the HeartbeatThread loop (§8.2) for everything expired
// up to now (nothing for kafka-0.10, whose heartbeats are an
// application-thread task). Safe to call early or late.
func (m *Member) TickHeartbeat(now protocol.Instant, out *Output) {
	if m.stopped || !m.started {
		return
	}
	m.hbt.tick(now, out)
	m.assertInvariants(out)
}

// NextAppDeadline is the application thread's next timer, or protocol.Never.
// It may lie at or before the last now (call TickApp again then).
func (m *Member) NextAppDeadline() protocol.Instant {
	if m.stopped || !m.started {
		return protocol.Never
	}
	switch m.app.phase {
	case appBusy:
		if m.app.steady(m) {
			// Lazy poll replay (lazy.go): the next poll if it could be
			// eventful, else the instant it could become so.
			if e := m.app.eventfulAt(m); e > m.app.busyUntil {
				return e
			}
		}
		return m.app.busyUntil
	case appPolling:
		return m.app.nextPollingDeadline(m)
	case appNotStarted, appStopped:
	}
	return protocol.Never
}

// NextHeartbeatDeadline is the heartbeat thread's next timer, or
// protocol.Never (always Never for kafka-0.10, whose heartbeats are an
// application-thread task).
func (m *Member) NextHeartbeatDeadline() protocol.Instant {
	if m.stopped || !m.started {
		return protocol.Never
	}
	return m.hbt.nextDeadline()
}

// SlowPoll makes the application thread stuck in processing for d more: a
// busy thread's busy period is extended, a thread inside poll() stops
// handling anything for d. The heartbeat thread keeps running.
func (m *Member) SlowPoll(now protocol.Instant, d time.Duration, out *Output) {
	if m.stopped || !m.started || d <= 0 {
		return
	}
	m.app.fastForward(m, now, false)
	switch m.app.phase {
	case appBusy:
		m.app.busyUntil = max(m.app.busyUntil, now).Add(d)
	case appPolling:
		m.app.startBusy(now, d, contResume)
	case appNotStarted, appStopped:
	}
	m.assertInvariants(out)
}

// Owned returns the partitions the application owns right now (after its
// callbacks ran), sorted. The slice is shared: do not mutate.
func (m *Member) Owned() []protocol.TopicPartition { return m.owned }

// State returns the member state.
func (m *Member) State() MemberState { return m.state }

// Generation returns the current generation id and member id.
func (m *Member) Generation() (generationID int32, memberID string) {
	return m.gen.id(), m.gen.memberID()
}

// Stopped reports whether the member was closed or stopped by a fatal error.
func (m *Member) Stopped() bool { return m.stopped }

// FatalError is the error that stopped the member, or protocol.None.
func (m *Member) FatalError() protocol.ErrorCode { return m.fatalErr }

// invariant is what holds of the Member's own state between calls (its
// parts check theirs):
//   - a started member's application thread runs (NewMember leaves it
//     appNotStarted; only stop() ends it);
//   - a rejoin is requested with a reason and only then (requestRejoin
//     sets both; the SyncGroup success clears both, as
//     AbstractCoordinator's rejoinReason is reset when the join completes);
//   - a STABLE member holds a joined generation (generationIfStable: the
//     generation of a STABLE member is never NO_GENERATION; every reset
//     leaves STABLE first, becomeUnjoined).
func (m *Member) invariant() string {
	switch {
	case m.app.phase == appNotStarted || m.app.phase == appStopped:
		return "a running member whose application thread does not run"
	case m.rejoinNeeded != (m.rejoinReason != RejoinNone):
		return "a rejoin requested without a reason, or a reason without a rejoin"
	case m.state == Stable && m.gen.hasReset():
		return "STABLE with a reset generation"
	}
	return ""
}

// ---- helpers ----

func (m *Member) emit(out *Output, ev protocol.Event) {
	ev.Node = m.name
	ev.Group = m.cfg.GroupID
	out.Events = append(out.Events, ev)
}

func brokerName(id int32) string { return netclient.BrokerName(id) }

func (m *Member) stop() {
	m.stopped = true
	m.app.phase = appStopped
	m.hbt.disable()
	m.net.Clear()
	m.net.queue = m.net.queue[:0]
}

// fatal stops the member: the exception thrown from poll() is assumed to end
// the application (no close(), hence no LeaveGroup). Owned partitions are
// reported lost so the harness's ownership accounting stays right.
func (m *Member) fatal(out *Output, err protocol.ErrorCode, detail string) {
	if m.stopped {
		return
	}
	m.fatalErr = err
	m.emit(out, protocol.Event{Kind: protocol.EvFatal, Err: err, Detail: detail, Gen: m.gen.id()})
	if len(m.owned) > 0 {
		parts := m.owned
		m.owned = nil
		m.emit(out, protocol.Event{Kind: protocol.EvRevoked, Detail: "lost", Reason: "fatal", Partitions: parts, Gen: m.gen.id()})
	}
	m.stop()
}

// ---- state transitions (setState is the only place m.state changes) ----

func (m *Member) setState(to MemberState, out *Output) {
	from := m.state
	m.state = to
	m.emit(out, protocol.Event{Kind: protocol.EvMemberState, State: to.String(), Detail: from.String(), Gen: m.gen.id()})
}

// becomeUnjoined is resetStateAndGeneration's state change. The heartbeat
// thread disables itself at its next iteration (hasNotJoinedGroup); the
// simulator disables it here.
func (m *Member) becomeUnjoined(out *Output) {
	m.hbt.disable()
	if m.state != Unjoined {
		m.setState(Unjoined, out)
	}
}

// becomePreparingRebalance is initiateJoinGroup's state change (REBALANCING
// before 2.6.1, which also disabled the heartbeat thread explicitly).
func (m *Member) becomePreparingRebalance(out *Output) {
	m.hbt.disable()
	if m.state != PreparingRebalance {
		m.setState(PreparingRebalance, out)
	}
}

// becomeCompletingRebalance is the JoinGroup NONE handler (2.6.1+,
// KAFKA-10134): the heartbeat thread is enabled, which resets its timers.
func (m *Member) becomeCompletingRebalance(now protocol.Instant, out *Output) {
	if m.state != PreparingRebalance || !m.cfg.behaviour.fourStates {
		m.assertFailed(out, "join", "becomeCompletingRebalance from "+m.state.String())
		return
	}
	m.setState(CompletingRebalance, out)
	m.hbt.enable(now)
}

// becomeStable is the SyncGroup NONE handler (2.6.1+), or the join future's
// success listener that also enabled the heartbeat thread (≤2.6.0).
func (m *Member) becomeStable(now protocol.Instant, out *Output) {
	want := PreparingRebalance // REBALANCING before 2.6.1
	if m.cfg.behaviour.fourStates {
		want = CompletingRebalance
	}
	if m.state != want {
		m.assertFailed(out, "join", "becomeStable from "+m.state.String())
		return
	}
	m.setState(Stable, out)
	if !m.cfg.behaviour.fourStates {
		m.hbt.enable(now) // the HeartbeatThread; the 0.10 task restarts in onJoinComplete
	}
}

// requestRejoin is AbstractCoordinator.requestRejoin(reason).
func (m *Member) requestRejoin(out *Output, reason RejoinReason) {
	m.rejoinNeeded = true
	m.rejoinReason = reason
	m.emit(out, protocol.Event{Kind: protocol.EvRejoinRequested, Reason: reason.String(), Gen: m.gen.id()})
}

// rejoinNeededOrPending is AbstractCoordinator.rejoinNeededOrPending. The
// ConsumerCoordinator additions: subscriptions are fixed in the simulator;
// a metadata change (add-partitions) is checked by coordinatorPoll
// (metadataChanged), which requests the rejoin this then reports.
func (m *Member) rejoinNeededOrPending() bool { return m.rejoinNeeded || m.join.status != joinIdle }

// resetStateAndGeneration is AbstractCoordinator.resetStateAndGeneration
// with shouldResetMemberId (≤3.1 resetGeneration, resetStateAndRejoin's
// reset): UNJOINED and Generation.NO_GENERATION, the member id dropped.
func (m *Member) resetStateAndGeneration(out *Output, api protocol.APIKey, why string) {
	m.becomeUnjoined(out)
	m.gen = noGeneration
	if m.cfg.behaviour.resetSetsJoinPrepare {
		m.needsJoinPrepare = true
	}
	m.emit(out, protocol.Event{Kind: protocol.EvGenerationReset, Detail: "drop-id", API: api, Reason: why})
}

// resetStateKeepingMemberID is AbstractCoordinator.resetStateAndGeneration
// without shouldResetMemberId (3.2+, KAFKA-13419): UNJOINED and a
// generation of id NO_GENERATION and no protocol that keeps the member id,
// so the rejoin is not a new member.
func (m *Member) resetStateKeepingMemberID(out *Output, api protocol.APIKey, why string) {
	m.becomeUnjoined(out)
	m.gen = m.gen.keepingMemberID()
	if m.cfg.behaviour.resetSetsJoinPrepare {
		m.needsJoinPrepare = true
	}
	m.emit(out, protocol.Event{Kind: protocol.EvGenerationReset, Detail: "keep-id", API: api, Reason: why})
}

// resetStateOnResponseError is AbstractCoordinator.resetStateOnResponseError
// (≤3.1 resetGenerationOnResponseError, resetStateAndRejoin) then
// requestRejoin: the generation is reset and the member id dropped, but for
// ILLEGAL_GENERATION from 3.2 (KAFKA-13419: every 3.2+ caller passes
// shouldResetMemberId = false for ILLEGAL_GENERATION and true for the
// others; the one exception, KAFKA-13891's SyncGroup REBALANCE_IN_PROGRESS,
// calls resetStateKeepingMemberID itself).
func (m *Member) resetStateOnResponseError(out *Output, api protocol.APIKey, err protocol.ErrorCode, reason RejoinReason) {
	if err == protocol.IllegalGeneration && m.cfg.behaviour.illegalGenerationKeepsID {
		m.resetStateKeepingMemberID(out, api, err.String())
	} else {
		m.resetStateAndGeneration(out, api, err.String())
	}
	m.requestRejoin(out, reason)
}
