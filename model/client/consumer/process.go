package consumer

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

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
// Deviations (beside Member's):
//   - The network layer is simpler than the classic client's NetworkClient
//     model (netclient.go): one ordinary connection per broker and one
//     coordinator connection, opened on demand; a failed connect is retried
//     after reconnect.backoff.ms doubling (±20 %) up to
//     reconnect.backoff.max.ms; no connection setup timeout (the harness's
//     TCP model fails a connect to a dead host by itself).
//   - A request that gets no answer within request.timeout.ms fails and
//     closes its connection (NetworkClient.handleTimedOutRequests); a
//     heartbeat failure on the coordinator connection also forgets the
//     coordinator (CoordinatorRequestManager.markCoordinatorUnknown).
//   - Polls are replayed lazily: an idle application loop (not in a
//     callback, not stuck in a slow poll) polls continuously, so the poll
//     timer restarts at each network-thread wake-up; a poll that has work
//     (joining, a callback to run) happens at the end of the current loop
//     iteration: a uniform fraction of a poll.interval draw (poll.timeout
//     while the process owns nothing).
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

	app    appThread      // the application thread's poll loop
	lookup coordLookup    // CoordinatorRequestManager
	hb     heartbeatReq   // HeartbeatRequestManager's request in flight
	commit commitReq      // CommitRequestManager: the commit before revocation
	net    processNetwork // the network thread's connections
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
}

// coordLookup is the CoordinatorRequestManager: FindCoordinator to the
// bootstrap brokers in turn, with its backoff, and the coordinator found.
type coordLookup struct {
	coord     int32  // the coordinator's broker id, -1 unknown
	coordUp   bool   // the coordinator connection is READY and the member told
	findCorr  uint64 // FindCoordinator in flight (0: none)
	findAt    protocol.Instant
	findRetry protocol.Instant // no FindCoordinator before
	findTries int32
	findNext  int // bootstrap broker to ask next (round robin from a seeded start)
	findTo    int32
}

// heartbeatReq is the HeartbeatRequestManager's request in flight (the
// membership decisions are Member's).
type heartbeatReq struct {
	corr   uint64
	sentAt protocol.Instant
	leave  bool // the heartbeat in flight is a leave (no answer awaited)
}

// commitReq is the CommitRequestManager's part here: the commit before
// revocation (auto-commit); the revocation callback waits for it.
type commitReq struct {
	corr      uint64
	at        protocol.Instant
	heldCB    Callback
	heldParts []protocol.TopicPartition
	released  bool // commitDone is handing the held callback over
	parts     []protocol.TopicPartition
}

// processNetwork is the network thread's NetworkClient: correlation ids
// and connections.
type processNetwork struct {
	corr  uint64
	conns []pconn
}

// Dist draws a duration from an explicit random stream (vtime.Dist: sim's
// and client's are the same type).
type Dist = vtime.Dist

// Const is a Dist that always returns its value (vtime.Const).
type Const = vtime.Const

// Send is one request the process asks the harness to send (as the
// classic client's client.Send): to broker, with a correlation id unique
// per process, on the coordinator connection or the broker's ordinary one.
type Send struct {
	Broker int32
	Corr   uint64
	Req    protocol.Request
	Coord  bool
}

// ConnOp asks the harness to open or close a connection (as the classic
// client's client.ConnOp); AfterSends is how many of Sends precede it.
type ConnOp struct {
	Broker     int32
	Coord      bool
	Open       bool
	AfterSends int
}

// ProcOutput collects what one call into a Process produced, in order;
// the caller owns it and resets it between calls (Reset).
type ProcOutput struct {
	Sends  []Send
	Events []protocol.Event
	Conns  []ConnOp
}

// Reset empties the buffers, keeping capacity.
func (o *ProcOutput) Reset() {
	o.Sends, o.Events, o.Conns = o.Sends[:0], o.Events[:0], o.Conns[:0]
}

// pconn is one of the process's connections.
type pconn struct {
	broker  int32
	coord   bool
	state   uint8 // 0 closed, 1 connecting, 2 ready
	retryAt protocol.Instant
	fails   int32
}

// ProcessConfig configures a Process.
type ProcessConfig struct {
	Member              Config
	Brokers             []int32
	RequestTimeout      time.Duration // request.timeout.ms
	ReconnectBackoff    time.Duration // reconnect.backoff.ms
	ReconnectBackoffMax time.Duration // reconnect.backoff.max.ms
	PollInterval        Dist
	PollTimeout         Dist
	CallbackTime        Dist
	// AutoCommit is enable.auto.commit: the consumed offsets are committed
	// before partitions are revoked (the commit before revocation).
	AutoCommit bool
}

// NewProcess returns a process that has not started; rng is its own stream.
func NewProcess(cfg ProcessConfig, rng *rand.Rand) *Process {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.ReconnectBackoff == 0 {
		cfg.ReconnectBackoff = 50 * time.Millisecond
	}
	if cfg.ReconnectBackoffMax == 0 {
		cfg.ReconnectBackoffMax = time.Second
	}
	for _, d := range []*Dist{&cfg.PollInterval, &cfg.PollTimeout, &cfg.CallbackTime} {
		if *d == nil {
			*d = Const(0)
		}
	}
	p := &Process{cfg: cfg, rng: rng, m: New(cfg.Member, rng), lookup: coordLookup{coord: -1},
		app: appThread{lastPoll: protocol.Never, pollAt: protocol.Never, cbEnd: protocol.Never}}
	if n := len(cfg.Brokers); n > 0 {
		p.lookup.findNext = rng.IntN(n)
	}
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
// the current iteration.
func (p *Process) residual(now protocol.Instant) protocol.Instant {
	d := p.cfg.PollInterval
	if len(p.m.Owned()) == 0 {
		d = p.cfg.PollTimeout
	}
	at := now.Add(time.Duration(p.rng.Float64() * float64(d.Draw(p.rng))))
	return max(at, p.app.slowUntil)
}

// TickApp runs the application thread at its deadline: a callback ends,
// or a poll() with work to do happens.
func (p *Process) TickApp(now protocol.Instant, out *ProcOutput) {
	if p.stopped {
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
	if p.m.State() == Stale && p.app.cb == NoCallback && p.app.cbEnd == protocol.Never && p.app.pollAt == protocol.Never {
		p.app.pollAt = p.residual(now) // the next poll() rejoins
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
		p.net.corr++
		out.Sends = append(out.Sends, Send{Broker: p.lookup.coord, Corr: p.net.corr, Req: &r, Coord: true})
		p.hb.corr, p.hb.sentAt, p.hb.leave = p.net.corr, now, leave
	}
	if p.mo.Callback == CallbackRevoked && p.cfg.AutoCommit && p.lookup.coordUp && p.lookup.coord >= 0 && !p.commit.released {
		// AbstractMembershipManager.revokeAndAssign: with auto-commit on,
		// the offsets of every owned partition are committed
		// synchronously before onPartitionsRevoked runs
		// (kafka-consumer-protocol.md §3.7 step 3). The callback waits for
		// the commit's answer; a failed commit is logged and the
		// reconciliation goes on.
		p.net.corr++
		p.commit.corr, p.commit.at = p.net.corr, now
		p.commit.heldCB, p.commit.heldParts = p.mo.Callback, p.mo.CallbackParts
		p.commit.parts = slices.Clone(p.m.Owned())
		out.Sends = append(out.Sends, Send{Broker: p.lookup.coord, Corr: p.net.corr, Coord: true,
			Req: &protocol.OffsetCommitRequest{GroupID: p.cfg.Member.GroupID, GenerationID: p.m.Epoch(), MemberID: p.m.ID(),
				GroupInstanceID: p.cfg.Member.InstanceID, Partitions: p.commit.parts}})
		p.mo.Callback = NoCallback
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
	if p.m.State() == Stale && p.app.cb == NoCallback && p.app.cbEnd == protocol.Never && p.app.pollAt == protocol.Never && !p.app.inPoll {
		p.app.pollAt = p.residual(now) // the next poll() rejoins
	}
}

// TickHeartbeat runs the network thread at its deadline.
func (p *Process) TickHeartbeat(now protocol.Instant, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.network(now, out)
}

// network is one network-thread pass: request timeouts, coordinator
// discovery, the heartbeat request manager.
func (p *Process) network(now protocol.Instant, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.idlePoll(now)
	if p.hb.corr != 0 && !p.hb.leave && now >= p.hb.sentAt.Add(p.cfg.RequestTimeout) {
		out.Events = append(out.Events, protocol.Event{Kind: protocol.EvRequestTimeout, Node: p.cfg.Member.Name, API: protocol.APIConsumerGroupHeartbeat, ReqCorr: p.hb.corr})
		p.hb.corr = 0
		p.closeConn(now, out, p.lookup.coord, true)
		p.coordDead(now, out, protocol.DeadRequestTimeout, protocol.None)
		p.m.Failed(now, true)
	}
	if p.commit.corr != 0 && now >= p.commit.at.Add(p.cfg.RequestTimeout) {
		out.Events = append(out.Events, protocol.Event{Kind: protocol.EvRequestTimeout, Node: p.cfg.Member.Name, API: protocol.APIOffsetCommit, ReqCorr: p.commit.corr})
		p.commitDone(now, out)
	}
	if p.lookup.findCorr != 0 && now >= p.lookup.findAt.Add(p.cfg.RequestTimeout) {
		out.Events = append(out.Events, protocol.Event{Kind: protocol.EvRequestTimeout, Node: p.cfg.Member.Name, API: protocol.APIFindCoordinator, ReqCorr: p.lookup.findCorr})
		p.lookup.findCorr = 0
		p.findFailed(now)
	}
	if p.lookup.coord < 0 && p.lookup.findCorr == 0 && now >= p.lookup.findRetry {
		p.find(now, out)
	}
	if p.lookup.coord >= 0 && !p.lookup.coordUp {
		p.connect(now, out, p.lookup.coord, true)
	}
	p.m.Tick(now, &p.mo)
	p.drain(now, out)
	if p.lookup.coordUp && !p.m.CoordinatorKnown() {
		// NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE: look it up again.
		p.coordDead(now, out, protocol.DeadErrorResponse, protocol.NotCoordinator)
		p.network(now, out)
	}
}

func (p *Process) peek(broker int32, coord bool) *pconn {
	for i := range p.net.conns {
		if p.net.conns[i].broker == broker && p.net.conns[i].coord == coord {
			return &p.net.conns[i]
		}
	}
	return nil
}

func (p *Process) conn(broker int32, coord bool) *pconn {
	for i := range p.net.conns {
		if p.net.conns[i].broker == broker && p.net.conns[i].coord == coord {
			return &p.net.conns[i]
		}
	}
	p.net.conns = append(p.net.conns, pconn{broker: broker, coord: coord})
	return &p.net.conns[len(p.net.conns)-1]
}

// connect opens a connection unless it is open, opening or backing off.
func (p *Process) connect(now protocol.Instant, out *ProcOutput, broker int32, coord bool) bool {
	c := p.conn(broker, coord)
	if c.state == 2 {
		return true
	}
	if c.state == 0 && now >= c.retryAt {
		c.state = 1
		out.Conns = append(out.Conns, ConnOp{Broker: broker, Coord: coord, Open: true, AfterSends: len(out.Sends)})
		out.Events = append(out.Events, protocol.Event{Kind: protocol.EvConnect, Node: p.cfg.Member.Name, Peer: brokerName(broker), Detail: connDetail(coord), Count: c.fails})
	}
	return false
}

func (p *Process) closeConn(now protocol.Instant, out *ProcOutput, broker int32, coord bool) {
	c := p.conn(broker, coord)
	if c.state == 0 {
		return
	}
	c.state = 0
	out.Conns = append(out.Conns, ConnOp{Broker: broker, Coord: coord, Open: false, AfterSends: len(out.Sends)})
}

// find sends FindCoordinator to the next bootstrap broker with a ready
// connection, or opens one.
func (p *Process) find(now protocol.Instant, out *ProcOutput) {
	if len(p.cfg.Brokers) == 0 {
		return
	}
	b := p.cfg.Brokers[p.lookup.findNext%len(p.cfg.Brokers)]
	if !p.connect(now, out, b, false) {
		return
	}
	p.net.corr++
	p.lookup.findCorr, p.lookup.findAt, p.lookup.findTo = p.net.corr, now, b
	out.Sends = append(out.Sends, Send{Broker: b, Corr: p.net.corr, Req: &protocol.FindCoordinatorRequest{Key: p.cfg.Member.GroupID}})
}

func (p *Process) findFailed(now protocol.Instant) {
	p.lookup.findTries++
	p.lookup.findNext++
	p.lookup.findRetry = now.Add(protocol.RetryBackoff(p.cfg.Member.RetryBackoff, p.cfg.Member.RetryBackoffMax, p.lookup.findTries-1, p.rng))
}

// coordDead is markCoordinatorUnknown: the coordinator is forgotten and
// looked up again.
func (p *Process) coordDead(now protocol.Instant, out *ProcOutput, why protocol.DeadReason, err protocol.ErrorCode) {
	if p.lookup.coord < 0 {
		return
	}
	out.Events = append(out.Events, protocol.Event{Kind: protocol.EvCoordinatorDead, Node: p.cfg.Member.Name, Group: p.cfg.Member.GroupID,
		Reason: protocol.DeadReasonText(why, err), Dead: why, DeadErr: err, Peer: brokerName(p.lookup.coord), Gen: p.m.Epoch()})
	if why != protocol.DeadDisconnect && why != protocol.DeadRequestTimeout {
		p.closeConn(now, out, p.lookup.coord, true)
	}
	p.lookup.coord, p.lookup.coordUp = -1, false
	p.hb.corr = 0
	p.m.CoordinatorUnknown()
}

// Step hands the process a response from broker.
func (p *Process) Step(now protocol.Instant, broker int32, corr uint64, resp protocol.Response, out *ProcOutput) {
	if p.stopped {
		return
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
		out.Events = append(out.Events, protocol.Event{Kind: protocol.EvCoordinatorFound, Node: p.cfg.Member.Name, Group: p.cfg.Member.GroupID, Peer: brokerName(r.NodeID), Gen: p.m.Epoch()})
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

// Connected: a connection the process asked for is READY.
func (p *Process) Connected(now protocol.Instant, broker int32, coord bool, out *ProcOutput) {
	if p.stopped {
		return
	}
	c := p.conn(broker, coord)
	c.state, c.fails = 2, 0
	out.Events = append(out.Events, protocol.Event{Kind: protocol.EvConnected, Node: p.cfg.Member.Name, Peer: brokerName(broker), Detail: connDetail(coord)})
	if coord && broker == p.lookup.coord {
		p.lookup.coordUp = true
		p.m.CoordinatorFound(now, &p.mo)
		p.drain(now, out)
	}
	p.network(now, out)
}

// ConnectFailed: a connect attempt failed; retry after the reconnect backoff.
func (p *Process) ConnectFailed(now protocol.Instant, broker int32, coord bool, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.down(now, out, broker, coord, "refused")
	p.network(now, out)
}

// ConnectionClosed: the peer closed or reset a connection.
func (p *Process) ConnectionClosed(now protocol.Instant, broker int32, coord bool, why string, out *ProcOutput) {
	if p.stopped {
		return
	}
	p.down(now, out, broker, coord, why)
	p.network(now, out)
}

func (p *Process) down(now protocol.Instant, out *ProcOutput, broker int32, coord bool, why string) {
	c := p.conn(broker, coord)
	c.fails++
	bo := protocol.ExponentialBackoff(p.cfg.ReconnectBackoff, p.cfg.ReconnectBackoffMax, c.fails-1, p.rng, true)
	c.state, c.retryAt = 0, now.Add(bo)
	out.Events = append(out.Events, protocol.Event{Kind: protocol.EvDisconnected, Node: p.cfg.Member.Name, Peer: brokerName(broker), Reason: why, Detail: connDetail(coord), Count: int32(bo.Milliseconds())})
	if !coord && p.lookup.findCorr != 0 && broker == p.lookup.findTo {
		p.lookup.findCorr = 0
		p.findFailed(now)
	}
	if coord && broker == p.lookup.coord && p.commit.corr != 0 {
		p.commitDone(now, out)
	}
	if coord && broker == p.lookup.coord {
		inflight := p.hb.corr != 0 && !p.hb.leave
		p.coordDead(now, out, protocol.DeadDisconnect, protocol.None)
		if inflight {
			p.m.Failed(now, true)
		}
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
	return d
}

// NextHeartbeatDeadline is the network thread's next deadline.
func (p *Process) NextHeartbeatDeadline() protocol.Instant {
	if p.stopped {
		return protocol.Never
	}
	d := p.m.NextDeadline()
	if p.hb.corr != 0 && !p.hb.leave {
		d = min(d, p.hb.sentAt.Add(p.cfg.RequestTimeout))
	}
	if p.lookup.findCorr != 0 {
		d = min(d, p.lookup.findAt.Add(p.cfg.RequestTimeout))
	}
	if p.commit.corr != 0 {
		d = min(d, p.commit.at.Add(p.cfg.RequestTimeout))
	}
	if p.lookup.coord < 0 && p.lookup.findCorr == 0 && len(p.cfg.Brokers) > 0 {
		// The next FindCoordinator: after its backoff, on a connection
		// that is ready or may be opened (a connecting one reports back).
		if c := p.peek(p.cfg.Brokers[p.lookup.findNext%len(p.cfg.Brokers)], false); c == nil || c.state != 1 {
			at := p.lookup.findRetry
			if c != nil && c.state == 0 {
				at = max(at, c.retryAt)
			}
			d = min(d, at)
		}
	}
	if p.lookup.coord >= 0 && !p.lookup.coordUp {
		if c := p.peek(p.lookup.coord, true); c == nil || c.state == 0 {
			at := protocol.Instant(0)
			if c != nil {
				at = c.retryAt
			}
			d = min(d, at)
		}
	}
	return d
}

// brokerName is a broker's id as the classic client's events carry it.
func brokerName(id int32) string { return strconv.Itoa(int(id)) }

func connDetail(coord bool) string {
	if coord {
		return "coordinator"
	}
	return "node"
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
