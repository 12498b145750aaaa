package client

import (
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Limits on the loops that stand for Java's blocking loops (TIGER_STYLE: a
// limit on everything). A call into the model handles what is due at its
// instant; a loop that would need more passes than these is a model bug,
// and the caller's next tick resumes it.
const (
	maxPollPasses      = 16 // appIterate: KafkaConsumer.poll loop passes per call
	maxJoinPasses      = 16 // joinGroupIfNeeded's loop
	maxHeartbeatPasses = 8  // HeartbeatThread.run iterations per tick
	maxTimersPerTick   = 64 // expired timers handled per tick (TickApp, handleTimeouts)
	maxStepsPerCall    = 4  // small state machines: onJoinPrepare's commit, the 0.10 delayed-task queue
)

// joinVersionMemberIDRequired is the first JoinGroup version answered
// MEMBER_ID_REQUIRED (v4, KIP-394).
const joinVersionMemberIDRequired = 4

// Member is one Kafka consumer's group membership: AbstractCoordinator,
// ConsumerCoordinator, Heartbeat and HeartbeatThread as one pure state
// machine, held in Kafka's parts: the coordinator lookup (lookup.go), the
// join future (join.go), the application thread (app.go), the heartbeat
// (heartbeat.go: the HeartbeatThread or the 0.10 HeartbeatTask), auto-commit
// (commit.go) and the network client (netclient.go). See doc.go for how to
// drive it.
//
// Member is 480 bytes, a size class (TestMemberSize; above 512 bytes an
// object with pointers also carries an 8-byte malloc header): keep it so when
// adding fields (issue 15, memory per member at 100,000 members). Hence the
// profile's behaviour is cfg.behaviour, the generation is a pointer to an
// immutable value (shared with the requests in flight), the
// group.instance.id and onJoinPrepare's commit sit behind pointers that are
// nil for most members most of the time, and the sub-structs keep their
// small fields together.
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
// stays in its size class (TestMemberSize).
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
	m.autoCommitStart(now)
	m.pollStart(now, out)
}

// Step delivers a response that arrived from broker. It is handled at once
// by the application thread if it is inside poll(), else by the heartbeat
// thread if it is enabled (and not blocked on the coordinator monitor), else
// queued until one of them polls the network (doc.go, "Which thread").
func (m *Member) Step(now protocol.Instant, broker int32, corr uint64, resp protocol.Response, out *Output) {
	m.netEvent(now, queued{kind: qResponse, broker: broker, corr: corr, resp: resp}, out)
}

// netEvent hands a network event to whichever thread polls the network.
func (m *Member) netEvent(now protocol.Instant, q queued, out *Output) {
	if m.stopped || !m.started {
		return
	}
	m.fastForward(now, false)
	m.deliver(now, q, out)
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

func (m *Member) deliver(now protocol.Instant, q queued, out *Output) {
	switch {
	case m.app.phase == appPolling:
		m.onApp = true
		m.net.queue = append(m.net.queue, q)
		m.appIterate(now, out)
	case m.hbt.canPoll():
		m.onApp = false
		m.net.queue = append(m.net.queue, q)
		m.flushQueue(now, out)
		m.hbt.networkPolled(now, out)
	default:
		m.net.queue = append(m.net.queue, q)
	}
}

// TickApp runs the application thread's expired timers: end of processing,
// of a callback, of the assignor or of a backoff sleep; end of a poll()
// block; request timeouts and (kafka-0.10) the heartbeat task while it is
// inside poll(). Safe to call early or late.
func (m *Member) TickApp(now protocol.Instant, out *Output) {
	if m.stopped || !m.started {
		return
	}
	m.fastForward(now, true)
	for range maxTimersPerTick {
		switch m.app.phase {
		case appBusy:
			if now < m.app.busyUntil {
				return
			}
			m.finishBusy(now, out)
		case appPolling:
			if now < m.nextPollingDeadline() {
				return
			}
			m.onApp = true
			before := m.nextPollingDeadline()
			m.appIterate(now, out)
			if m.app.phase == appPolling && m.nextPollingDeadline() <= before {
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
}

// NextAppDeadline is the application thread's next timer, or protocol.Never.
// It may lie at or before the last now (call TickApp again then).
func (m *Member) NextAppDeadline() protocol.Instant {
	if m.stopped || !m.started {
		return protocol.Never
	}
	switch m.app.phase {
	case appBusy:
		if m.steady() {
			return m.lazyAppDeadline()
		}
		return m.app.busyUntil
	case appPolling:
		return m.nextPollingDeadline()
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
	m.fastForward(now, false)
	switch m.app.phase {
	case appBusy:
		m.app.busyUntil = max(m.app.busyUntil, now).Add(d)
	case appPolling:
		m.startBusy(now, d, contResume)
	case appNotStarted, appStopped:
	}
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

// ---- state transitions (the only places m.state changes) ----

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
// (keepID: the 3.2+ ILLEGAL_GENERATION form, KAFKA-13419).
func (m *Member) resetStateAndGeneration(out *Output, api protocol.APIKey, why string, keepID bool) {
	m.becomeUnjoined(out)
	detail := "drop-id"
	if keepID {
		m.gen = newGeneration(protocol.NoGeneration, m.gen.memberID(), "", false)
		detail = "keep-id"
	} else {
		m.gen = noGeneration
	}
	if m.cfg.behaviour.resetSetsJoinPrepare {
		m.needsJoinPrepare = true
	}
	m.emit(out, protocol.Event{Kind: protocol.EvGenerationReset, Detail: detail, API: api, Reason: why})
}

// resetStateAndRejoin is resetStateOnResponseError / resetStateAndRejoin.
func (m *Member) resetStateAndRejoin(out *Output, api protocol.APIKey, err protocol.ErrorCode, keepID bool, reason RejoinReason) {
	m.resetStateAndGeneration(out, api, err.String(), keepID)
	m.requestRejoin(out, reason)
}
