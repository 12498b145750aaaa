package tracing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/vtime"
)

// Explanation is the causal chain behind one eviction or one
// coordinator-dead mark (`simrun explain`, docs/OBSERVABILITY.md).
type Explanation struct {
	At     vtime.Instant
	Kind   string // "eviction" or "coordinator-dead"
	Member string // the member evicted, or that marked its coordinator dead
	False  bool   // a false eviction / a false dead mark (DESIGN.md)
	Lines  []string
}

// String renders the explanation as indented text.
func (x Explanation) String() string {
	var b strings.Builder
	verdict := "true"
	if x.False {
		verdict = "FALSE"
	}
	fmt.Fprintf(&b, "%s  %s of %s (%s)\n", fmtT(x.At), x.Kind, x.Member, verdict)
	for _, l := range x.Lines {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func fmtT(t vtime.Instant) string { return fmt.Sprintf("%10.3f s", float64(t)/1e9) }

func fmtS(t vtime.Instant) string { return fmt.Sprintf("%.3f s", float64(t)/1e9) }

// Explain takes a run's observations (Result.Observations) and its kept
// trace (Options.KeepTrace) and, for each eviction and each coordinator-dead
// mark the classifier observed, reports the causal chain: the last heartbeat
// that arrived, the very request that got no answer and what became of it,
// the messages lost or late since, the pauses, crashes and faults
// overlapping the deadline, and the timer that fired. Whether a mark or an
// eviction is false is the classifier's verdict, not re-derived here.
// member, when not empty, keeps only that member's.
func Explain(sc *scenario.Scenario, trace []Event, obs []Observation, member string) []Explanation {
	var out []Explanation
	for i := range obs {
		o := &obs[i]
		if member != "" && o.Member != member {
			continue
		}
		if o.Seq < 0 || int(o.Seq) >= len(trace) {
			continue // the trace was not kept
		}
		switch o.Kind {
		case ObsEviction:
			out = append(out, explainEviction(sc, trace, o))
		case ObsDeadMark:
			out = append(out, explainDeadMark(sc, trace, o))
		}
	}
	return out
}

// consumerAt says whether member name ran the consumer protocol at trace
// index at: the group API of its last request before it (a rolling
// restart's `set:` changes a member's protocol mid-run), else its group
// entry's group.protocol.
func consumerAt(sc *scenario.Scenario, trace []Event, at int, name string) bool {
	for j := min(at, len(trace)-1); j >= 0; j-- {
		if t := &trace[j]; t.Kind == EvSend && t.Req && t.Node == name {
			switch t.API {
			case protocol.APIConsumerGroupHeartbeat:
				return true
			case protocol.APIJoinGroup, protocol.APISyncGroup, protocol.APIHeartbeat:
				return false
			}
		}
	}
	gi, _, ok := sc.ResolveMember(name)
	return ok && sc.Groups[gi].Consumer()
}

// sessionKey names the setting the member's session timeout comes from:
// the client's session.timeout.ms under the classic protocol, the broker's
// group.consumer.session.timeout.ms under the consumer protocol (KIP-848:
// the client may not set it).
func sessionKey(consumer bool) string {
	if consumer {
		return "group.consumer.session.timeout.ms"
	}
	return "session.timeout.ms"
}

// groupTimeouts returns the member's session timeout, request timeout and
// rebalance timeout (max.poll.interval.ms, or the session timeout for
// kafka-0.10 which has none).
func groupTimeouts(sc *scenario.Scenario, name string, consumer bool) (session, request, rebalance time.Duration) {
	gi, _, ok := sc.ResolveMember(name)
	if !ok {
		return 0, 0, 0
	}
	c := sc.Groups[gi].Client
	rebalance = c.MaxPollInterval
	if rebalance == 0 {
		rebalance = c.SessionTimeout
	}
	if consumer {
		// The consumer protocol: the broker owns the session timeout.
		return sc.Coordinator.ConsumerSessionTimeout, c.RequestTimeout, rebalance
	}
	return c.SessionTimeout, c.RequestTimeout, rebalance
}

func explainEviction(sc *scenario.Scenario, trace []Event, o *Observation) Explanation {
	at, name := int(o.Seq), o.Member
	e := &trace[at]
	consumer := consumerAt(sc, trace, at, name)
	session, _, rebalance := groupTimeouts(sc, name, consumer)
	x := Explanation{At: e.At, Kind: "eviction", Member: name, False: o.False}
	if name == "" {
		x.Member = o.MemberID
	}
	if o.Removal == protocol.RemovalLeave && o.Leave == protocol.LeavePollTimeout {
		// The member left because its own poll timer expired: the chain is
		// on the client side.
		for j := at - 1; j >= 0; j-- {
			if t := &trace[j]; t.Kind == protocol.EvPollTimeout && t.Node == name {
				x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the client's poll timer (max.poll.interval.ms %s) at %s: poll() was not called in time", durfmt.Human(rebalance), fmtS(t.At)))
				x.Lines = append(x.Lines, windowCauses(trace, t.At-vtime.Instant(rebalance), t.At, name)...)
				break
			}
		}
		x.Lines = append(x.Lines, "the member sent LeaveGroup (consumer poll timeout has expired); the coordinator removed it: the process was alive, a false eviction")
		return x
	}
	if o.Removal == protocol.RemovalMaxSize {
		x.Lines = append(x.Lines, "the group was at group.max.size: the coordinator removed the member (KIP-389), not a liveness judgement")
		return x
	}
	// The last heartbeat (and the last request of any kind) that arrived at
	// the coordinator from this member before the eviction.
	lastHB, lastAny := -1, -1
	for j := at - 1; j >= 0; j-- {
		t := &trace[j]
		if t.Kind == EvDeliver && t.Req && t.Peer == name && t.Node == e.Node {
			if lastAny < 0 {
				lastAny = j
			}
			if t.API == protocol.APIHeartbeat || t.API == protocol.APIConsumerGroupHeartbeat {
				lastHB = j
				break
			}
		}
	}
	from := vtime.Instant(0)
	if lastHB >= 0 {
		t := &trace[lastHB]
		from = t.At
		x.Lines = append(x.Lines, fmt.Sprintf("last heartbeat that arrived: %s (corr %d), %s before the eviction", fmtS(t.At), t.Corr, durfmt.Human(time.Duration(e.At-t.At))))
	} else {
		x.Lines = append(x.Lines, "no heartbeat from this member ever arrived at "+e.Node)
	}
	if lastAny >= 0 && lastAny != lastHB {
		t := &trace[lastAny]
		x.Lines = append(x.Lines, fmt.Sprintf("last request of any kind that arrived: %s at %s", t.API, fmtS(t.At)))
	}
	x.Lines = append(x.Lines, windowCauses(trace, from, e.At, name)...)
	// Heartbeats sent in the window that arrived only after the eviction.
	for j := at + 1; j < len(trace); j++ {
		t := &trace[j]
		if t.Kind == EvDeliver && t.Req && t.Peer == name && (t.API == protocol.APIHeartbeat || t.API == protocol.APIConsumerGroupHeartbeat) {
			if sent := sendTime(trace, j); sent >= from && sent < e.At {
				x.Lines = append(x.Lines, fmt.Sprintf("late: heartbeat sent %s arrived %s, after the eviction", fmtS(sent), fmtS(t.At)))
			}
			break
		}
	}
	if o.Removal == protocol.RemovalSessionExpired && !consumer {
		x.Lines = append(x.Lines, pollGapStory(sc, trace, at, name, from, session)...)
	}
	switch o.Removal {
	case protocol.RemovalSessionExpired:
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the coordinator's session timer (%s %s) at %s", sessionKey(consumer), durfmt.Human(session), fmtS(e.At)))
	case protocol.RemovalRebalanceTimeout:
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the rebalance timer (rebalance timeout %s): the member did not rejoin in time", durfmt.Human(rebalance)))
	case protocol.RemovalSyncTimeout:
		x.Lines = append(x.Lines, "timer fired: the pending-sync timer (KIP-814): no SyncGroup from the member in time")
	case protocol.RemovalNewMemberTimeout:
		x.Lines = append(x.Lines, "timer fired: the new-member join timer: the new member did not rejoin in time")
	}
	if o.False {
		x.Lines = append(x.Lines, "the member's process was alive: a false eviction")
	} else {
		x.Lines = append(x.Lines, "the member's process was dead: a true eviction")
	}
	return x
}

func explainDeadMark(sc *scenario.Scenario, trace []Event, o *Observation) Explanation {
	at := int(o.Seq)
	e := &trace[at]
	name := e.Node
	session, request, _ := groupTimeouts(sc, name, consumerAt(sc, trace, at, name))
	x := Explanation{At: e.At, Kind: "coordinator-dead", Member: name, False: o.False}
	// The last response that reached the member from its coordinator.
	lastResp := -1
	for j := at - 1; j >= 0; j-- {
		t := &trace[j]
		if t.Kind == EvDeliver && !t.Req && t.Node == name {
			lastResp = j
			break
		}
	}
	window := request
	if session > window {
		window = session
	}
	from := e.At - vtime.Instant(window)
	if from < 0 {
		from = 0
	}
	if lastResp >= 0 {
		t := &trace[lastResp]
		x.Lines = append(x.Lines, fmt.Sprintf("last response that arrived: %s from %s at %s, %s before", t.API, t.Peer, fmtS(t.At), durfmt.Human(time.Duration(e.At-t.At))))
		if t.At > from {
			from = t.At
		}
	}
	// Request timeouts at the member just before the mark: the very
	// request that got no answer (by its correlation id) and what became
	// of it; the window opens at its send.
	for j := at - 1; j >= 0 && trace[j].At >= from; j-- {
		t := &trace[j]
		if t.Kind != protocol.EvRequestTimeout || t.Node != name {
			continue
		}
		sent, fate := requestFate(trace, j, name, t.ReqCorr)
		if sent < 0 {
			x.Lines = append(x.Lines, fmt.Sprintf("request timeout: %s at %s", t.API, fmtS(t.At)))
			continue
		}
		x.Lines = append(x.Lines, fmt.Sprintf("request timeout: the %s request sent at %s (corr %d) had no answer at %s (%s later): %s",
			t.API, fmtS(sent), t.ReqCorr, fmtS(t.At), durfmt.Human(time.Duration(t.At-sent)), fate))
		if sent <= from {
			from = sent - 1
		}
	}
	x.Lines = append(x.Lines, windowCauses(trace, from, e.At, name)...)
	switch o.Dead {
	case protocol.DeadSessionTimeout:
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the client's session timer (no successful heartbeat for session.timeout.ms %s), Heartbeat.sessionTimerExpired", durfmt.Human(session)))
	case protocol.DeadRequestTimeout:
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the request's timeout (request.timeout.ms %s, or the client's shorter heartbeat/session bound) marked the coordinator unknown", durfmt.Human(request)))
	case protocol.DeadDisconnect:
		x.Lines = append(x.Lines, "cause: the connection to the coordinator failed (disconnect)")
	case protocol.DeadErrorResponse:
		x.Lines = append(x.Lines, "cause: the coordinator answered "+o.DeadErr.String())
	case protocol.DeadCoordinatorUnavailable:
		x.Lines = append(x.Lines, "cause: the coordinator connection was in reconnect backoff (checkAndGetCoordinator: coordinator unavailable)")
	default:
		x.Lines = append(x.Lines, "cause: "+e.Reason)
	}
	switch {
	case o.False:
		x.Lines = append(x.Lines, "the coordinator was alive and still the coordinator: a false dead mark")
	case brokerDownAt(trace, at, brokerTrack(e.Peer)) != "":
		used := brokerTrack(e.Peer)
		x.Lines = append(x.Lines, fmt.Sprintf("%s was %s: a true dead mark", used, brokerDownAt(trace, at, used)))
	default:
		coord := ""
		for j := at - 1; j >= 0; j-- {
			if t := &trace[j]; t.Kind == EvBrokerRole && t.Group == e.Group {
				coord = t.Node
				break
			}
		}
		x.Lines = append(x.Lines, fmt.Sprintf("the coordinator had moved to %s: a true dead mark", coord))
	}
	return x
}

// brokerTrack names a broker as the trace does ("broker-1"); clients name
// brokers by id ("1").
func brokerTrack(peer string) string {
	if peer != "" && !strings.HasPrefix(peer, "broker-") {
		return "broker-" + peer
	}
	return peer
}

// brokerDownAt returns how broker was down at trace[at] ("crashed",
// "host-down") or "" when it was running.
func brokerDownAt(trace []Event, at int, broker string) string {
	for j := at; j >= 0; j-- {
		if t := &trace[j]; t.Kind == EvBrokerProcess && t.Node == broker {
			if t.Process == protocol.ProcessStarted {
				return ""
			}
			return t.State
		}
	}
	return ""
}

// requestFate finds the send of the member's request corr before trace[j]
// and says what became of it: lost on the way, answered but the answer
// lost, or still unanswered. New network event kinds (retransmissions,
// closed connections) belong in the switch below.
func requestFate(trace []Event, j int, name string, corr uint64) (sent vtime.Instant, fate string) {
	sent = -1
	k := j - 1
	for ; k >= 0; k-- {
		if s := &trace[k]; s.Kind == EvSend && s.Req && s.Node == name && s.Corr == corr {
			sent = s.At
			break
		}
	}
	if sent < 0 {
		return -1, ""
	}
	fate = "no trace of it after the send"
	for m := k + 1; m < j; m++ {
		t := &trace[m]
		if t.Corr != corr || (t.Node != name && t.Peer != name) {
			continue
		}
		switch t.Kind {
		case EvDrop:
			return sent, fmt.Sprintf("%s was dropped at %s (%s)", requestOrResponse(t.Req), fmtS(t.At), t.Reason)
		case EvLost:
			fate = fmt.Sprintf("%s was lost at %s (%s) and TCP was still retransmitting it", requestOrResponse(t.Req), fmtS(t.At), t.Reason)
		case EvRetransmit:
			fate = fmt.Sprintf("%s was lost and retransmitted at %s", requestOrResponse(t.Req), fmtS(t.At))
		case EvDeliver:
			if t.Req {
				fate = fmt.Sprintf("the request arrived at %s, no response came back in time", fmtS(t.At))
			}
		}
	}
	return sent, fate
}

// requestOrResponse names the message of a request's fate.
func requestOrResponse(req bool) string {
	if req {
		return "the request"
	}
	return "its response"
}

// causeWindow is what a cause finder sees: the trace, the member, and the
// window (from, to] being explained; lost counts lost messages (only the
// first maxLostLines are listed).
type causeWindow struct {
	trace    []Event
	from, to vtime.Instant
	name     string
	lost     int
}

const maxLostLines = 20

// causeFinders are the trace event kinds explain knows as causes, each with
// the sentence it contributes (or "" when the event does not concern the
// member or the window). The network model's events (retransmissions,
// closed connections, ...) belong here: one entry per kind. Events before
// the window are shown to the finders of kinds in openBefore (a fault or a
// pause that began earlier and is still open).
var causeFinders = map[protocol.EventKind]func(w *causeWindow, j int) string{
	EvDrop: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from || (t.Node != w.name && t.Peer != w.name) {
			return ""
		}
		if w.lost++; w.lost > maxLostLines {
			return ""
		}
		return fmt.Sprintf("dropped: %s %s %s→%s at %s (%s)", t.API, dirName(t.Req), t.Node, t.Peer, fmtS(t.At), t.Reason)
	},
	// One TCP transmission lost; the kernel retransmits it.
	EvLost: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from || (t.Node != w.name && t.Peer != w.name) {
			return ""
		}
		if w.lost++; w.lost > maxLostLines {
			return ""
		}
		what := "transmission lost"
		switch t.Fate {
		case FateHeld:
			what = "queued behind a lost segment"
		case FateRetransmission:
			what = "retransmission lost"
		}
		return fmt.Sprintf("tcp: %s %s %s→%s (corr %d) at %s: %s (%s)", t.API, dirName(t.Req), t.Node, t.Peer, t.Corr, fmtS(t.At), what, t.Reason)
	},
	EvRetransmit: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from || (t.Node != w.name && t.Peer != w.name) {
			return ""
		}
		return fmt.Sprintf("tcp: %s %s %s→%s (corr %d) retransmitted at %s, got through", t.API, dirName(t.Req), t.Node, t.Peer, t.Corr, fmtS(t.At))
	},
	protocol.EvDisconnected: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from || t.Node != w.name {
			return ""
		}
		return fmt.Sprintf("connection to broker-%s (%s) closed at %s: %s; reconnect backoff %d ms", t.Peer, t.Detail, fmtS(t.At), t.Reason, t.Count)
	},
	protocol.EvConnect: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from || t.Node != w.name {
			return ""
		}
		return fmt.Sprintf("connect to broker-%s (%s) at %s (failed attempts so far: %d)", t.Peer, t.Detail, fmtS(t.At), t.Count)
	},
	protocol.EvConnected: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from || t.Node != w.name {
			return ""
		}
		return fmt.Sprintf("connected to broker-%s (%s) at %s", t.Peer, t.Detail, fmtS(t.At))
	},
	EvBrokerProcess: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if t.At <= w.from {
			return ""
		}
		return fmt.Sprintf("%s %s at %s", t.Node, t.State, fmtS(t.At))
	},
	EvProcess: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		switch {
		case t.Node != w.name:
			return ""
		case t.At > w.from:
			return fmt.Sprintf("process %s at %s", t.State, fmtS(t.At))
		case t.Process == protocol.ProcessPaused && pausedThrough(w.trace, j, w.from):
			return fmt.Sprintf("process paused at %s, still frozen at %s", fmtS(t.At), fmtS(w.from))
		}
		return ""
	},
	EvFault: func(w *causeWindow, j int) string {
		t := &w.trace[j]
		if (t.At > w.from || faultOpenAt(w.trace, j, w.from)) && touches(t, w.name) {
			return fmt.Sprintf("fault %s %s at %s", t.Reason, t.Detail, fmtS(t.At))
		}
		return ""
	},
}

// openBefore are the kinds whose events before the window still matter.
var openBefore = map[protocol.EventKind]bool{EvFault: true, EvProcess: true}

// windowCauses lists what touched the member in (from, to]: every event of
// a kind in causeFinders that concerns it.
func windowCauses(trace []Event, from, to vtime.Instant, name string) []string {
	w := &causeWindow{trace: trace, from: from, to: to, name: name}
	var lines []string
	for j := range trace {
		t := &trace[j]
		if t.At > to {
			break
		}
		if t.At <= from && !openBefore[t.Kind] {
			continue
		}
		if f := causeFinders[t.Kind]; f != nil {
			if line := f(w, j); line != "" {
				lines = append(lines, line)
			}
		}
	}
	if w.lost > maxLostLines {
		lines = append(lines, fmt.Sprintf("… %d transmissions lost in all", w.lost))
	}
	return lines
}

// touches reports whether a fault event concerns the member: it names it, or
// it is network-wide (loss, latency, coordinator failover) or changes the
// topics (add-partitions).
func touches(f *Event, name string) bool {
	sc := f.Scope
	if sc == nil {
		return false
	}
	switch scenario.FaultKind(f.Reason) {
	case scenario.FaultLoss, scenario.FaultLatency, scenario.FaultCoordinatorFailover, scenario.FaultAddPartitions:
		return true
	case scenario.FaultCrash, scenario.FaultHostDown:
		if sc.Broker {
			return true // a broker: every member's coordinator or lookups
		}
	case scenario.FaultFilter:
		return sc.FilterMember == "" || sc.FilterMember == name
	}
	return slices.Contains(sc.Nodes, name)
}

// faultOpenAt reports whether the windowed fault started at trace[j] is
// still open at instant t (its fault-end comes after t).
func faultOpenAt(trace []Event, j int, t vtime.Instant) bool {
	f := &trace[j]
	for k := j + 1; k < len(trace); k++ {
		g := &trace[k]
		if g.Kind == EvFaultEnd && g.Reason == f.Reason && g.Detail == f.Detail {
			return g.At > t
		}
	}
	switch scenario.FaultKind(f.Reason) {
	case scenario.FaultPartition, scenario.FaultLoss, scenario.FaultLatency, scenario.FaultFilter:
		return true // never ended within the run
	}
	return false
}

func pausedThrough(trace []Event, j int, t vtime.Instant) bool {
	name := trace[j].Node
	for k := j + 1; k < len(trace); k++ {
		g := &trace[k]
		if g.Kind == EvProcess && g.Node == name {
			return g.At > t
		}
	}
	return true
}

// sendTime finds the send of the message delivered at trace[j].
func sendTime(trace []Event, j int) vtime.Instant {
	d := &trace[j]
	for k := j - 1; k >= 0; k-- {
		s := &trace[k]
		if s.Kind == EvSend && s.Corr == d.Corr && s.Req == d.Req && s.Node == d.Peer && s.Peer == d.Node {
			return s.At
		}
	}
	return -1
}

func dirName(req bool) string {
	if req {
		return "request"
	}
	return "response"
}

// pollGapStory tells the eviction of a member whose JoinGroup response
// waited for the application thread: the join phase completed (the
// coordinator re-armed the member's session when it answered the JoinGroup),
// the response arrived, but nothing read it until the application thread's
// next poll(), because the heartbeat thread is disabled while the member has
// not joined (PREPARING_REBALANCE), so no heartbeat went out either; the
// application thread stayed out of poll() longer than the session. It
// returns nil when the eviction at trace[at] is not that story.
//
// Kafka: AbstractCoordinator.HeartbeatThread.run @3.7.0 ("if
// (state.hasNotJoinedGroup() || hasFailed()) { disable(); continue; }": no
// client.pollNoWakeup, no heartbeat while PREPARING_REBALANCE);
// GroupCoordinator.completeAndScheduleNextHeartbeatExpiration @3.7.0 (the
// session restarts when the join phase completes).
func pollGapStory(sc *scenario.Scenario, trace []Event, at int, name string, from vtime.Instant, session time.Duration) []string {
	coord := trace[at].Node
	// The JoinGroup response the coordinator sent the member after the last
	// heartbeat that arrived, without error.
	resp := -1
	for j := at - 1; j >= 0 && trace[j].At >= from; j-- {
		if t := &trace[j]; t.Kind == EvSend && !t.Req && t.Node == coord && t.Peer == name && t.API == protocol.APIJoinGroup {
			if t.Err == protocol.None {
				resp = j
			}
			break
		}
	}
	if resp < 0 {
		return nil
	}
	r := &trace[resp]
	arrived := vtime.Instant(-1)
	for j := resp + 1; j < at; j++ {
		if t := &trace[j]; t.Kind == EvDeliver && !t.Req && t.Node == name && t.Corr == r.Corr {
			arrived = t.At
			break
		}
	}
	if arrived < 0 {
		return nil // lost or late on the network: the window's causes tell it
	}
	// Was the member rejoining (PREPARING_REBALANCE) when it arrived?
	state := ""
	for j := at - 1; j >= 0; j-- {
		if t := &trace[j]; t.Kind == protocol.EvMemberState && t.Node == name {
			state = t.State
			break
		}
	}
	if state != "PREPARING_REBALANCE" {
		return nil
	}
	// The application thread's next poll(): the client handling the
	// response (joined), after the eviction or never.
	read := vtime.Instant(-1)
	for j := at + 1; j < len(trace); j++ {
		t := &trace[j]
		if t.Node != name {
			continue
		}
		if t.Kind == protocol.EvJoined || (t.Kind == protocol.EvMemberState && t.MemberState != protocol.MemberPreparingRebalance) {
			read = t.At
			break
		}
		if t.Kind == EvProcess && t.Process != protocol.ProcessPaused && t.Process != protocol.ProcessResumed {
			break // the process ended before it read the response
		}
	}
	lines := []string{
		fmt.Sprintf("session re-armed: the join phase completed and the coordinator answered the member's JoinGroup at %s; its session timer restarted then", fmtS(r.At)),
		fmt.Sprintf("the JoinGroup response arrived at %s and waited for the application thread's next poll(): the heartbeat thread is disabled while the member rejoins (PREPARING_REBALANCE), so it neither read the response nor sent a heartbeat", fmtS(arrived)),
	}
	gap := "the application thread was out of poll() (processing the records of its last poll) until after the eviction"
	if read >= 0 {
		gap = fmt.Sprintf("the application thread was out of poll() (processing the records of its last poll) until %s: %s after the response arrived, longer than the session (%s)",
			fmtS(read), durfmt.Human(time.Duration(read-arrived)), durfmt.Human(session))
	} else {
		gap += " and the end of the run"
	}
	if gi, _, ok := sc.ResolveMember(name); ok {
		gap += "; poll.interval " + scenario.FormatDist(sc.Groups[gi].Workload.PollInterval)
	}
	return append(lines, gap)
}
