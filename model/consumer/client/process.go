package client

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/vtime"
)

// Process is one consumer process running the consumer protocol: the
// membership of Member plus what the AsyncKafkaConsumer around it does — the
// application thread's poll loop (where rebalance callbacks run) and the
// network thread's coordinator discovery (CoordinatorRequestManager),
// connections and request timeouts. It has the shape of the classic
// client.Member the harness drives (Start, Step, TickApp, TickHeartbeat,
// Connected, ConnectFailed, ConnectionClosed, SlowPoll, Close, Pause,
// Resume, CatchUp), with ProcOutput as its output, so the harness runs
// either kind of member in a slot.
//
// The network thread's NetworkClient is the classic client's
// (model/netclient, as in Kafka 4.x NetworkClientDelegate sits on
// the same NetworkClient): one ordinary connection per broker and one
// coordinator connection, reconnect.backoff(.max).ms with jitter,
// socket.connection.setup.timeout(.max).ms, FindCoordinator to the
// least-loaded node, requests waiting unsent while their connection is set
// up (request.timeout.ms counting from the enqueue), and a request that
// gets no answer within request.timeout.ms closing its connection and
// failing every request on it (NetworkClient.handleTimedOutRequests). A
// heartbeat or commit that fails with a disconnect forgets the coordinator
// (CoordinatorRequestManager.handleCoordinatorDisconnect); forgetting it
// closes no connection (CoordinatorRequestManager.markCoordinatorUnknown,
// unlike the classic AbstractCoordinator's disconnectAsync).
//
// Deviations (beside Member's):
//   - The member learns of its coordinator when the coordinator connection
//     is READY, not when FindCoordinator answers, so a heartbeat is never
//     queued unsent behind a connection being set up; a closed coordinator
//     connection forgets the coordinator at once, with or without a
//     request on it.
//   - A FindCoordinator with no node to go to (every bootstrap broker in
//     reconnect backoff) waits for the first to leave its backoff, without
//     the unsent request's own timer.
//   - Polls are replayed lazily: an idle application loop (not in a
//     callback, not stuck in a slow poll) polls continuously, so the poll
//     timer restarts at each network-thread wake-up; a poll that has work
//     (joining, a callback to run) happens at the end of the current loop
//     iteration: the time left of a poll.interval step at a random
//     instant (vtime.DrawResidual; poll.timeout while the process owns
//     nothing).
//   - A callback handed over while another just finished runs at once (the
//     application thread is still inside poll(), processing background
//     events).
type Process struct {
	cfg ProcessConfig
	rng *rand.Rand
	m   *Member
	mo  Output

	started, stopped bool
	fatal            protocol.ErrorCode

	app    appThread                  // the application thread's poll loop
	lookup coordLookup                // CoordinatorRequestManager
	hb     heartbeatReq               // HeartbeatRequestManager's request in flight
	commit commitReq                  // CommitRequestManager: the commit before revocation
	net    netclient.Client[struct{}] // the network thread's NetworkClient
	netCfg netclient.Config
	// scratch is the network client's list of requests one close fails.
	scratch []netclient.Request[struct{}]
}

// appThread is the application thread of the AsyncKafkaConsumer: its poll
// loop (AsyncKafkaConsumer.poll) and the rebalance callbacks it runs
// (ConsumerRebalanceListenerInvoker).
type appThread struct {
	lastPoll  protocol.Instant // the last poll() (Never while it never polled)
	pollAt    protocol.Instant // a poll with work to do, or Never
	slowUntil protocol.Instant // a slow-poll fault: no poll before it
	cb        Callback         // the callback the application must run next
	cbParts   []protocol.TopicPartition
	cbEnd     protocol.Instant // the running callback ends (Never: none running)
	inPoll    bool             // the application thread is inside poll() (TickApp)
	// shutdownAt is when Shutdown's close() runs: the end of the step the
	// application was in (0: no shutdown asked).
	shutdownAt protocol.Instant
}

// coordLookup is the CoordinatorRequestManager: FindCoordinator to the
// bootstrap brokers in turn, with its backoff, and the coordinator found.
type coordLookup struct {
	coord     int32            // the coordinator's broker id, -1 unknown
	coordUp   bool             // the coordinator connection is READY and the member told
	findCorr  uint64           // FindCoordinator in flight (0: none)
	findRetry protocol.Instant // no FindCoordinator before
	findTries int32
}

// heartbeatReq is the HeartbeatRequestManager's request in flight (the
// membership decisions are Member's).
type heartbeatReq struct {
	corr  uint64
	leave bool // the heartbeat in flight is a leave (no answer awaited)
}

// commitReq is the CommitRequestManager's part here: the commit before
// revocation (auto-commit); the revocation callback waits for it.
type commitReq struct {
	corr      uint64
	heldCB    Callback
	heldParts []protocol.TopicPartition
	released  bool // commitDone is handing the held callback over
	parts     []protocol.TopicPartition
}

// Dist draws a duration from an explicit random stream (vtime.Dist: sim's
// and client's are the same type).
type Dist = vtime.Dist

// Const is a Dist that always returns its value (vtime.Const).
type Const = vtime.Const

// Send is one request the process asks the harness to send (netclient.Send,
// as the classic client's client.Send): to broker, with a correlation id
// unique per process, on the coordinator connection or the broker's
// ordinary one.
type Send = netclient.Send

// ConnOp asks the harness to open or close a connection (netclient.ConnOp);
// AfterSends is how many of Sends precede it.
type ConnOp = netclient.ConnOp

// ProcOutput collects what one call into a Process produced, in order
// (netclient.Output); the caller owns it and resets it between calls.
type ProcOutput = netclient.Output

// ProcessConfig configures a Process.
type ProcessConfig struct {
	Member              Config
	Brokers             []int32
	RequestTimeout      time.Duration // request.timeout.ms
	ReconnectBackoff    time.Duration // reconnect.backoff.ms
	ReconnectBackoffMax time.Duration // reconnect.backoff.max.ms
	// socket.connection.setup.timeout.ms and .max.ms (zero: Kafka's defaults).
	SocketSetupTimeout    time.Duration
	SocketSetupTimeoutMax time.Duration
	PollInterval          Dist
	PollTimeout           Dist
	CallbackTime          Dist
	// AutoCommit is enable.auto.commit: the owned partitions' offsets are
	// committed at the start of every reconciliation (Member.Config.AutoCommit).
	AutoCommit bool
}

// NewProcess returns a process that has not started; rng is its own stream.
func NewProcess(cfg ProcessConfig, rng *rand.Rand) *Process {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	cfg.Member.AutoCommit = cfg.AutoCommit
	netCfg := netclient.Config{Era: netclient.AsyncEra(), ReconnectBackoff: cfg.ReconnectBackoff, ReconnectBackoffMax: cfg.ReconnectBackoffMax,
		SocketSetupTimeout: cfg.SocketSetupTimeout, SocketSetupTimeoutMax: cfg.SocketSetupTimeoutMax}
	netCfg.ApplyDefaults()
	for _, d := range []*Dist{&cfg.PollInterval, &cfg.PollTimeout, &cfg.CallbackTime} {
		if *d == nil {
			*d = Const(0)
		}
	}
	p := &Process{cfg: cfg, rng: rng, m: New(cfg.Member, rng), lookup: coordLookup{coord: -1}, netCfg: netCfg,
		app: appThread{lastPoll: protocol.Never, pollAt: protocol.Never, cbEnd: protocol.Never}}
	return p
}

// Member is the process's membership state machine.
func (p *Process) Member() *Member { return p.m }

// Stopped: the process ended (closed, or a fatal error).
func (p *Process) Stopped() bool { return p.stopped }

// FatalError is the error that stopped the process, or protocol.None.
func (p *Process) FatalError() protocol.ErrorCode { return p.fatal }

// Start starts the process: it subscribes and joins at its first poll(),
// which it calls at once; the network thread looks for the coordinator.
func (p *Process) Start(now protocol.Instant, out *ProcOutput) {
	if p.started || p.stopped {
		return
	}
	p.started = true
	p.app.pollAt = now
	p.network(now, out)
}

func (p *Process) busy(now protocol.Instant) bool {
	return p.app.cbEnd != protocol.Never || now < p.app.slowUntil
}

// idlePoll notes that an idle application loop has been polling up to now.
func (p *Process) idlePoll(now protocol.Instant) {
	if p.app.lastPoll != protocol.Never && !p.busy(now) {
		p.app.lastPoll = now
		p.m.PollTimerFrom(now)
	}
}

// residual is when the application loop next calls poll(): the rest of
// the current iteration, caught at a random instant, so a length-biased
// residual draw (vtime.DrawResidual: mean E[X²]/2E[X], 435 ms for the
// default lognormal poll.interval, where a uniform fraction of one fresh
// draw had 163 ms).
func (p *Process) residual(now protocol.Instant) protocol.Instant {
	d := p.cfg.PollInterval
	if len(p.m.Owned()) == 0 {
		d = p.cfg.PollTimeout
	}
	at := now.Add(vtime.DrawResidual(d, p.rng))
	return max(at, p.app.slowUntil)
}

// TickApp runs the application thread at its deadline: a callback ends,
// or a poll() with work to do happens.
func (p *Process) TickApp(now protocol.Instant, out *ProcOutput) {
	if p.stopped || p.shutdownDue(now, out) {
		return
	}
	p.app.inPoll = true
	defer func() { p.app.inPoll = false }()
	if p.app.cbEnd != protocol.Never && now >= p.app.cbEnd {
		p.app.cbEnd = protocol.Never
		p.m.CallbackDone(now, &p.mo)
		p.drain(now, out)
		p.app.lastPoll = now
	}
	if p.app.pollAt != protocol.Never && now >= p.app.pollAt && !p.busy(now) {
		p.app.pollAt = protocol.Never
		p.app.lastPoll = now
		p.m.AppPoll(now, &p.mo)
		p.drain(now, out)
	}
	p.runCallback(now, out)
	p.app.inPoll = false
	if (p.m.State() == Stale || p.m.NeedsPoll()) && p.app.cb == NoCallback && p.app.cbEnd == protocol.Never && p.app.pollAt == protocol.Never {
		p.app.pollAt = p.residual(now) // the next poll() rejoins or reconciles
	}
	p.network(now, out)
}

// runCallback starts the pending callback on an idle application thread
// (ConsumerRebalanceListenerInvoker: it takes callback.time).
func (p *Process) runCallback(now protocol.Instant, out *ProcOutput) {
	for p.app.cb != NoCallback && !p.busy(now) && p.app.pollAt == protocol.Never {
		p.app.cb = NoCallback
		p.app.cbEnd = now.Add(p.cfg.CallbackTime.Draw(p.rng))
		if p.app.cbEnd > now {
			return
		}
		p.app.cbEnd = protocol.Never
		p.m.CallbackDone(now, &p.mo)
		p.drain(now, out)
	}
}

// drain moves the member's output into out: events, heartbeats (on the
// coordinator connection), callbacks for the application thread.
func (p *Process) drain(now protocol.Instant, out *ProcOutput) {
	out.Events = append(out.Events, p.mo.Events...)
	for i := range p.mo.Sends {
		r := p.mo.Sends[i]
		leave := r.MemberEpoch == protocol.LeaveEpoch || r.MemberEpoch == protocol.StaticLeaveEpoch
		if p.lookup.coord < 0 || !p.lookup.coordUp {
			if !leave {
				p.m.Failed(now, true)
			}
			continue
		}
		p.hb.corr = p.net.Send(now, out, p.lookup.coord, true, &r, p.cfg.RequestTimeout, struct{}{}, procOwner{p})
		p.hb.leave = leave
	}
	if p.mo.ReconcileStarted && p.cfg.AutoCommit && len(p.m.Owned()) > 0 && p.lookup.coordUp && p.lookup.coord >= 0 && !p.commit.released {
		// With auto-commit on, every reconciliation starts with a
		// synchronous commit of the offsets of every owned partition
		// (signalReconciliationStarted → maybeAutoCommitSyncBeforeRebalance;
		// none when nothing is owned: requestAutoCommit of no offsets),
		// whether it revokes or only assigns (kafka-consumer-protocol.md
		// §3.7 step 3). Its first callback waits for the commit's answer;
		// a failed commit is logged and the reconciliation goes on.
		// Kafka: AbstractMembershipManager.maybeReconcile,
		// ConsumerMembershipManager.signalReconciliationStarted @v8.0.0, @v8.3.0
		p.commit.heldCB, p.commit.heldParts = p.mo.Callback, p.mo.CallbackParts
		p.commit.parts = slices.Clone(p.m.Owned())
		p.mo.Callback = NoCallback
		p.commit.corr = p.net.Send(now, out, p.lookup.coord, true,
			&protocol.OffsetCommitRequest{GroupID: p.cfg.Member.GroupID, GenerationID: p.m.Epoch(), MemberID: p.m.ID(),
				GroupInstanceID: p.cfg.Member.InstanceID, Partitions: p.commit.parts},
			p.cfg.RequestTimeout, struct{}{}, procOwner{p})
	}
	if p.mo.Callback != NoCallback {
		p.app.cb, p.app.cbParts = p.mo.Callback, p.mo.CallbackParts
		if p.app.cbEnd == protocol.Never && p.app.pollAt == protocol.Never && !p.app.inPoll {
			// Handed over while the application thread is inside poll()
			// (it just polled or ran a callback): it runs at once;
			// otherwise at the next poll().
			p.app.pollAt = p.residual(now)
		}
	}
	for _, e := range p.mo.Events {
		if e.Kind == protocol.EvFatal && p.fatal == protocol.None {
			p.fatal = e.Err
		}
	}
	p.mo = Output{Sends: p.mo.Sends[:0], Events: p.mo.Events[:0]}
	if p.fatal != protocol.None {
		p.stopped = true
	}
	if (p.m.State() == Stale || p.m.NeedsPoll()) && p.app.cb == NoCallback && p.app.cbEnd == protocol.Never && p.app.pollAt == protocol.Never && !p.app.inPoll {
		// The next poll() rejoins, or starts the reconciliation
		// (auto-commit: maybeReconcile(true) from its PollEvent).
		p.app.pollAt = p.residual(now)
	}
}

// TickHeartbeat runs the network thread at its deadline.
func (p *Process) TickHeartbeat(now protocol.Instant, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.network(now, out)
}

// network is one network-thread pass: request and connection timeouts
// (NetworkClient.poll), coordinator discovery, the heartbeat request
// manager.
func (p *Process) network(now protocol.Instant, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.idlePoll(now)
	p.net.HandleTimeouts(now, out, procOwner{p})
	if p.stopped {
		return
	}
	if p.lookup.coord < 0 && p.lookup.findCorr == 0 && now >= p.lookup.findRetry {
		p.find(now, out)
	}
	if p.lookup.coord >= 0 && !p.lookup.coordUp {
		if c := p.net.Conn(p.lookup.coord, true); c != nil && c.State() == netclient.Ready {
			p.coordReady(now, out) // still open from before (forgetting closes nothing)
		} else {
			p.net.TryConnect(now, out, p.lookup.coord, true, procOwner{p})
		}
	}
	p.m.Tick(now, &p.mo)
	p.drain(now, out)
	if p.lookup.coordUp && !p.m.CoordinatorKnown() {
		// NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE: look it up again.
		p.coordDead(out, protocol.DeadErrorResponse, protocol.NotCoordinator)
		p.network(now, out)
	}
}

// find is CoordinatorRequestManager.makeFindCoordinatorRequest: an
// unsent request with no node, which NetworkClientDelegate.doSend sends to
// the least-loaded node (opening its connection if needed; waiting unsent
// while it is set up).
func (p *Process) find(now protocol.Instant, out *ProcOutput) {
	if len(p.cfg.Brokers) == 0 {
		return
	}
	// NetworkClient.leastLoadedNode's randOffset.nextInt(nodes.size()) on
	// every call (@3.7.0; NetworkClientDelegate.leastLoadedNode calls it),
	// from the process's stream.
	b := p.net.LeastLoadedNode(now, p.netCfg.Era, p.cfg.Brokers, p.rng.IntN(len(p.cfg.Brokers)))
	if b < 0 {
		return // every broker in reconnect backoff: retried when one leaves it
	}
	p.lookup.findCorr = p.net.Send(now, out, b, false, &protocol.FindCoordinatorRequest{Key: p.cfg.Member.GroupID},
		p.cfg.RequestTimeout, struct{}{}, procOwner{p})
}

func (p *Process) findFailed(now protocol.Instant) {
	p.lookup.findTries++
	p.lookup.findRetry = now.Add(protocol.RetryBackoff(p.cfg.Member.RetryBackoff, p.cfg.Member.RetryBackoffMax, p.lookup.findTries-1, p.rng))
}

// coordDead is CoordinatorRequestManager.markCoordinatorUnknown: the
// coordinator is forgotten and looked up again; its connection stays open.
func (p *Process) coordDead(out *ProcOutput, why protocol.DeadReason, err protocol.ErrorCode) {
	if p.lookup.coord < 0 {
		return
	}
	out.Events = append(out.Events, protocol.Event{Kind: protocol.EvCoordinatorDead, Node: p.cfg.Member.Name, Group: p.cfg.Member.GroupID,
		Reason: protocol.DeadReasonText(why, err), Dead: why, DeadErr: err, Peer: netclient.BrokerName(p.lookup.coord), Gen: p.m.Epoch()})
	p.lookup.coord, p.lookup.coordUp = -1, false
	p.m.CoordinatorUnknown()
}

// Step hands the process a response from broker.
func (p *Process) Step(now protocol.Instant, broker int32, corr uint64, resp protocol.Response, out *ProcOutput) {
	if p.stopped {
		return
	}
	if _, ok := p.net.Complete(corr); !ok {
		return // timed out or disconnected: NetworkClient dropped it
	}
	switch r := resp.(type) {
	case *protocol.FindCoordinatorResponse:
		if corr != p.lookup.findCorr {
			return
		}
		p.lookup.findCorr = 0
		if r.Error != protocol.None {
			p.findFailed(now)
			break
		}
		p.lookup.findTries = 0
		p.lookup.coord = r.NodeID
		out.Events = append(out.Events, protocol.Event{Kind: protocol.EvCoordinatorFound, Node: p.cfg.Member.Name, Group: p.cfg.Member.GroupID, Peer: netclient.BrokerName(r.NodeID), Gen: p.m.Epoch()})
	case *protocol.OffsetCommitResponse:
		if corr != p.commit.corr {
			return
		}
		p.commitDone(now, out)
	case *protocol.ConsumerGroupHeartbeatResponse:
		if corr != p.hb.corr || broker != p.lookup.coord {
			return
		}
		p.hb.corr = 0
		p.idlePoll(now)
		p.m.Response(now, r, &p.mo)
		p.drain(now, out)
	}
	p.network(now, out)
}

// Connected: a connection the process asked for is READY; its unsent
// requests leave.
func (p *Process) Connected(now protocol.Instant, broker int32, coord bool, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.net.Connected(now, out, broker, coord, procOwner{p})
	if coord && broker == p.lookup.coord && !p.lookup.coordUp {
		if c := p.net.Conn(broker, true); c != nil && c.State() == netclient.Ready {
			p.coordReady(now, out)
		}
	}
	p.network(now, out)
}

// coordReady: the coordinator connection is READY; the member may
// heartbeat.
func (p *Process) coordReady(now protocol.Instant, out *ProcOutput) {
	p.lookup.coordUp = true
	p.m.CoordinatorFound(now, &p.mo)
	p.drain(now, out)
}

// ConnectFailed: a connect attempt failed (refused, or the SYNs went
// unanswered): its requests fail as disconnects; the connection is in
// reconnect backoff.
func (p *Process) ConnectFailed(now protocol.Instant, broker int32, coord bool, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.net.ConnectFailed(now, out, broker, coord, procOwner{p})
	p.down(out, broker, coord)
	p.network(now, out)
}

// ConnectionClosed: the peer closed or reset a connection, or the kernel
// gave up retransmitting: its requests fail as disconnects.
func (p *Process) ConnectionClosed(now protocol.Instant, broker int32, coord bool, why string, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.net.RemoteDisconnect(now, out, broker, coord, why, procOwner{p})
	p.down(out, broker, coord)
	p.network(now, out)
}

// down: the coordinator connection is gone, so the coordinator is
// forgotten even with no request on it (a deviation: see Process).
func (p *Process) down(out *ProcOutput, broker int32, coord bool) {
	if coord && broker == p.lookup.coord {
		p.coordDead(out, protocol.DeadDisconnect, protocol.None)
	}
}

// SlowPoll: the application is stuck processing for d (no poll()); the
// network thread goes on heartbeating until max.poll.interval.ms expires.
func (p *Process) SlowPoll(now protocol.Instant, d time.Duration, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.idlePoll(now)
	p.app.slowUntil = now.Add(d)
	// The loop comes round again after the stuck iteration.
	p.app.pollAt = p.app.slowUntil
	p.network(now, out)
}

// Close is KafkaConsumer.close(): the member leaves and the process ends.
func (p *Process) Close(now protocol.Instant, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.m.Close(now, &p.mo)
	p.drain(now, out)
	p.stopped = true
}

// CatchUp, Pause and Resume: the process replays nothing lazily beyond
// idlePoll, so a pause only stops the harness from calling it; deadlines
// that passed while paused fire at the resume.
func (p *Process) CatchUp(protocol.Instant, bool) {}
func (p *Process) Pause(protocol.Instant)         {}
func (p *Process) Resume(now protocol.Instant) {
	// The frozen application thread did not poll while paused.
}

// NextAppDeadline is the application thread's next deadline.
func (p *Process) NextAppDeadline() protocol.Instant {
	if p.stopped {
		return protocol.Never
	}
	d := p.app.cbEnd
	if p.app.pollAt != protocol.Never {
		d = min(d, max(p.app.pollAt, p.app.slowUntil))
	}
	if p.app.shutdownAt != 0 {
		d = min(d, p.app.shutdownAt)
	}
	return d
}

// NextHeartbeatDeadline is the network thread's next deadline.
func (p *Process) NextHeartbeatDeadline() protocol.Instant {
	if p.stopped {
		return protocol.Never
	}
	d := min(p.m.NextDeadline(), p.net.NextDeadline(&p.netCfg))
	if p.lookup.coord < 0 && p.lookup.findCorr == 0 && len(p.cfg.Brokers) > 0 {
		// The next FindCoordinator: after its backoff, when a broker is
		// out of reconnect backoff.
		at := p.lookup.findRetry
		if p.net.LeastLoadedNode(at, p.netCfg.Era, p.cfg.Brokers, 0) < 0 { // any offset: only whether one exists
			at = max(at, p.net.NextReconnect(at, p.cfg.Brokers))
		}
		d = min(d, at)
	}
	if p.lookup.coord >= 0 && !p.lookup.coordUp {
		// The coordinator connection: open it when out of backoff (a
		// connecting one reports back).
		if c := p.net.Conn(p.lookup.coord, true); c == nil {
			d = 0
		} else if c.State() != netclient.Connecting {
			d = min(d, c.ReconnectAt())
		}
	}
	return d
}

// procOwner is the process as its network client's netclient.Owner.
type procOwner struct{ p *Process }

func (o procOwner) Net() *netclient.Config                  { return &o.p.netCfg }
func (o procOwner) Rand() *rand.Rand                        { return o.p.rng }
func (o procOwner) Stopped() bool                           { return o.p.stopped }
func (o procOwner) Scratch() *[]netclient.Request[struct{}] { return &o.p.scratch }

// Invariant reports a broken invariant as the classic client's
// assertFailed does (the harness turns it into a violation) and stops the
// process.
func (o procOwner) Invariant(out *ProcOutput, msg string) {
	out.Events = append(out.Events, protocol.Event{Kind: protocol.EvAssertFailed, Node: o.p.cfg.Member.Name, Detail: "net: " + msg})
	o.p.fatal, o.p.stopped = protocol.UnknownServerError, true
}
func (o procOwner) Emit(out *ProcOutput, ev protocol.Event) {
	ev.Node = o.p.cfg.Member.Name
	out.Events = append(out.Events, ev)
}

// TimedOut: a heartbeat or commit that timed out on the coordinator
// connection forgets the coordinator with cause request-timeout (the
// DisconnectException that follows would say disconnect).
func (o procOwner) TimedOut(_ protocol.Instant, out *ProcOutput, e netclient.Request[struct{}]) {
	if e.Coord() && e.Broker == o.p.lookup.coord {
		o.p.coordDead(out, protocol.DeadRequestTimeout, protocol.None)
	}
}

// Failed is the request managers' onFailure: FindCoordinator backs off
// (CoordinatorRequestManager.onFailedResponse); a heartbeat retries after
// its backoff and a commit before revocation ends (the reconciliation goes
// on); a disconnect of either forgets the coordinator
// (handleCoordinatorDisconnect).
func (o procOwner) Failed(now protocol.Instant, out *ProcOutput, e netclient.Request[struct{}], disconnect bool) {
	p := o.p
	switch e.API {
	case protocol.APIFindCoordinator:
		if e.Corr == p.lookup.findCorr {
			p.lookup.findCorr = 0
			p.findFailed(now)
		}
	case protocol.APIConsumerGroupHeartbeat:
		if e.Corr != p.hb.corr {
			return
		}
		p.hb.corr = 0
		if disconnect && e.Broker == p.lookup.coord {
			p.coordDead(out, protocol.DeadDisconnect, protocol.None)
		}
		if !p.hb.leave {
			p.m.Failed(now, true)
		}
	case protocol.APIOffsetCommit:
		if e.Corr != p.commit.corr {
			return
		}
		if disconnect && e.Broker == p.lookup.coord {
			p.coordDead(out, protocol.DeadDisconnect, protocol.None)
		}
		p.commitDone(now, out)
	case protocol.APIJoinGroup, protocol.APIHeartbeat, protocol.APILeaveGroup, protocol.APISyncGroup:
		// classic requests: a consumer-protocol process sends none
	}
}

// commitDone ends the commit before revocation (answered, failed or timed
// out): the revocation callback it held goes to the application thread.
func (p *Process) commitDone(now protocol.Instant, out *ProcOutput) {
	p.commit.corr = 0
	if p.commit.heldCB == NoCallback {
		return
	}
	held, parts := p.commit.heldCB, p.commit.heldParts
	p.commit.heldCB, p.commit.heldParts = NoCallback, nil
	if p.app.cb != NoCallback || p.app.cbEnd != protocol.Never {
		return // a newer callback (onPartitionsLost after a fence) replaced it
	}
	p.mo.Callback, p.mo.CallbackParts = held, parts
	p.commit.released = true
	p.drain(now, out)
	p.commit.released = false
}

// Committing reports whether a commit before revocation is in flight.
func (p *Process) Committing() bool { return p.commit.corr != 0 }
