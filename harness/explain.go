package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// Explanation is the causal chain behind one eviction or one
// coordinator-dead mark (`simrun explain`, docs/OBSERVABILITY.md).
type Explanation struct {
	At     sim.Instant
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

func fmtT(t sim.Instant) string { return fmt.Sprintf("%10.3f s", float64(t)/1e9) }

func fmtS(t sim.Instant) string { return fmt.Sprintf("%.3f s", float64(t)/1e9) }

// Explain walks a kept trace (Options.KeepTrace) and, for each eviction (a
// member removed by the coordinator's session, rebalance or sync timer) and
// each coordinator-dead mark, reports the causal chain: the last heartbeat
// that arrived, the messages lost or late since, the pauses and crashes and
// network faults overlapping the deadline, and the timer that fired. member,
// when not empty, keeps only that member's events.
func Explain(sc *scenario.Scenario, trace []TraceEvent, member string) []Explanation {
	var out []Explanation
	clientOf := map[string]string{} // coordinator member id → member name
	for i := range trace {
		e := &trace[i]
		switch e.Kind {
		case protocol.EvMemberAdded:
			clientOf[e.Peer] = e.Detail
		case protocol.EvMemberRemoved:
			switch e.Reason {
			case "session-expired", "rebalance-timeout", "sync-timeout", "new-member-timeout":
			default:
				continue
			}
			name := clientOf[e.Peer]
			if name == "" || (member != "" && name != member) {
				continue
			}
			out = append(out, explainEviction(sc, trace, i, name))
		case protocol.EvCoordinatorDead:
			if member != "" && e.Node != member {
				continue
			}
			out = append(out, explainDeadMark(sc, trace, i))
		}
	}
	return out
}

// groupTimeouts returns the member's session timeout, request timeout and
// rebalance timeout (max.poll.interval.ms, or the session timeout for
// kafka-0.10 which has none).
func groupTimeouts(sc *scenario.Scenario, name string) (session, request, rebalance time.Duration) {
	gi, _, ok := sc.ResolveMember(name)
	if !ok {
		return 0, 0, 0
	}
	c := sc.Groups[gi].Client
	rebalance = c.MaxPollInterval
	if rebalance == 0 {
		rebalance = c.SessionTimeout
	}
	return c.SessionTimeout, c.RequestTimeout, rebalance
}

func explainEviction(sc *scenario.Scenario, trace []TraceEvent, at int, name string) Explanation {
	e := &trace[at]
	session, _, rebalance := groupTimeouts(sc, name)
	x := Explanation{At: e.At, Kind: "eviction", Member: name}
	// The last heartbeat (and the last request of any kind) that arrived at
	// the coordinator from this member before the eviction.
	lastHB, lastAny := -1, -1
	for j := at - 1; j >= 0; j-- {
		t := &trace[j]
		if t.Kind == EvDeliver && t.Req && t.Peer == name && t.Node == e.Node {
			if lastAny < 0 {
				lastAny = j
			}
			if t.API == protocol.APIHeartbeat {
				lastHB = j
				break
			}
		}
	}
	from := sim.Instant(0)
	if lastHB >= 0 {
		t := &trace[lastHB]
		from = t.At
		x.Lines = append(x.Lines, fmt.Sprintf("last heartbeat that arrived: %s (corr %d), %v before the eviction", fmtS(t.At), t.Corr, time.Duration(e.At-t.At)))
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
		if t.Kind == EvDeliver && t.Req && t.Peer == name && t.API == protocol.APIHeartbeat {
			if sent := sendTime(trace, j); sent >= from && sent < e.At {
				x.Lines = append(x.Lines, fmt.Sprintf("late: heartbeat sent %s arrived %s, after the eviction", fmtS(sent), fmtS(t.At)))
			}
			break
		}
	}
	alive := processAlive(trace, at, name)
	x.False = alive
	switch e.Reason {
	case "session-expired":
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the coordinator's session timer (session.timeout.ms %v) at %s", session, fmtS(e.At)))
	case "rebalance-timeout":
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the rebalance timer (rebalance timeout %v): the member did not rejoin in time", rebalance))
	case "sync-timeout":
		x.Lines = append(x.Lines, "timer fired: the pending-sync timer (KIP-814): no SyncGroup from the member in time")
	case "new-member-timeout":
		x.Lines = append(x.Lines, "timer fired: the new-member join timer: the new member did not rejoin in time")
	}
	if alive {
		x.Lines = append(x.Lines, "the member's process was alive: a false eviction")
	} else {
		x.Lines = append(x.Lines, "the member's process was dead: a true eviction")
	}
	return x
}

func explainDeadMark(sc *scenario.Scenario, trace []TraceEvent, at int) Explanation {
	e := &trace[at]
	name := e.Node
	session, request, _ := groupTimeouts(sc, name)
	x := Explanation{At: e.At, Kind: "coordinator-dead", Member: name}
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
	from := e.At - sim.Instant(window)
	if from < 0 {
		from = 0
	}
	if lastResp >= 0 {
		t := &trace[lastResp]
		x.Lines = append(x.Lines, fmt.Sprintf("last response that arrived: %s from %s at %s, %v before", t.API, t.Peer, fmtS(t.At), time.Duration(e.At-t.At)))
		if t.At > from {
			from = t.At
		}
	}
	// Request timeouts at the member just before the mark, with the send of
	// the request that got no answer; the window opens at that send.
	for j := at - 1; j >= 0 && trace[j].At >= from; j-- {
		t := &trace[j]
		if t.Kind == protocol.EvRequestTimeout && t.Node == name {
			sent := sim.Instant(-1)
			for k := j - 1; k >= 0; k-- {
				if s := &trace[k]; s.Kind == EvSend && s.Req && s.Node == name && s.API == t.API {
					sent = s.At
					break
				}
			}
			if sent >= 0 {
				x.Lines = append(x.Lines, fmt.Sprintf("request timeout: the %s request sent at %s had no answer at %s (%v later)", t.API, fmtS(sent), fmtS(t.At), time.Duration(t.At-sent)))
				if sent < from {
					from = sent - 1
				}
			} else {
				x.Lines = append(x.Lines, fmt.Sprintf("request timeout: %s at %s", t.API, fmtS(t.At)))
			}
		}
	}
	x.Lines = append(x.Lines, windowCauses(trace, from, e.At, name)...)
	switch e.Reason {
	case "session-timeout":
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the client's session timer (no successful heartbeat for session.timeout.ms %v), Heartbeat.sessionTimerExpired", session))
	case "request-timeout":
		x.Lines = append(x.Lines, fmt.Sprintf("timer fired: the request's timeout (request.timeout.ms %v, or the client's shorter heartbeat/session bound) marked the coordinator unknown", request))
	default:
		x.Lines = append(x.Lines, "cause: "+e.Reason)
	}
	// False when the broker the member used was alive and still the
	// coordinator at that instant (brokers never die; only failover moves it).
	coord := ""
	for j := at - 1; j >= 0; j-- {
		t := &trace[j]
		if t.Kind == EvBrokerRole && t.Group == e.Group {
			coord = t.Node
			break
		}
	}
	used := e.Peer // the client names brokers by id ("1")
	if used != "" && !strings.HasPrefix(used, "broker-") {
		used = "broker-" + used
	}
	down := brokerDownAt(trace, at, used)
	x.False = (coord == "" || coord == used || used == "") && down == ""
	switch {
	case x.False:
		x.Lines = append(x.Lines, "the coordinator was alive and still the coordinator: a false dead mark")
	case down != "":
		x.Lines = append(x.Lines, fmt.Sprintf("%s was %s: a true dead mark", used, down))
	default:
		x.Lines = append(x.Lines, fmt.Sprintf("the coordinator had moved to %s: a true dead mark", coord))
	}
	return x
}

// brokerDownAt returns how broker was down at trace[at] ("crashed",
// "host-down") or "" when it was running.
func brokerDownAt(trace []TraceEvent, at int, broker string) string {
	for j := at; j >= 0; j-- {
		if t := &trace[j]; t.Kind == EvBrokerProcess && t.Node == broker {
			if t.State == "started" {
				return ""
			}
			return t.State
		}
	}
	return ""
}

// windowCauses lists what touched the member in (from, to]: its messages
// lost, its process paused, crashed or restarted, and network faults.
func windowCauses(trace []TraceEvent, from, to sim.Instant, name string) []string {
	var lines []string
	lost := 0
	for j := range trace {
		t := &trace[j]
		if t.At <= from && t.Kind != EvFault && t.Kind != EvProcess {
			continue
		}
		if t.At > to {
			break
		}
		switch t.Kind {
		case EvDrop:
			if t.At > from && (t.Node == name || t.Peer == name) {
				lost++
				if lost <= 20 {
					lines = append(lines, fmt.Sprintf("dropped: %s %s %s→%s at %s (%s)", t.API, dirName(t.Req), t.Node, t.Peer, fmtS(t.At), t.Reason))
				}
			}
		case EvLost:
			// One TCP transmission lost; the kernel retransmits it.
			if t.At > from && (t.Node == name || t.Peer == name) {
				lost++
				if lost <= 20 {
					what := "transmission lost"
					switch t.Reason {
					case "held":
						what = "queued behind a lost segment"
					case "retransmission":
						what = "retransmission lost"
					}
					lines = append(lines, fmt.Sprintf("tcp: %s %s %s→%s (corr %d) at %s: %s (%s)", t.API, dirName(t.Req), t.Node, t.Peer, t.Corr, fmtS(t.At), what, t.Reason))
				}
			}
		case EvRetransmit:
			if t.At > from && (t.Node == name || t.Peer == name) {
				lines = append(lines, fmt.Sprintf("tcp: %s %s %s→%s (corr %d) retransmitted at %s, got through", t.API, dirName(t.Req), t.Node, t.Peer, t.Corr, fmtS(t.At)))
			}
		case protocol.EvDisconnected:
			if t.At > from && t.Node == name {
				lines = append(lines, fmt.Sprintf("connection to broker-%s (%s) closed at %s: %s; reconnect backoff %d ms", t.Peer, t.Detail, fmtS(t.At), t.Reason, t.Count))
			}
		case protocol.EvConnect:
			if t.At > from && t.Node == name {
				lines = append(lines, fmt.Sprintf("connect to broker-%s (%s) at %s (failed attempts so far: %d)", t.Peer, t.Detail, fmtS(t.At), t.Count))
			}
		case protocol.EvConnected:
			if t.At > from && t.Node == name {
				lines = append(lines, fmt.Sprintf("connected to broker-%s (%s) at %s", t.Peer, t.Detail, fmtS(t.At)))
			}
		case EvBrokerProcess:
			if t.At > from {
				lines = append(lines, fmt.Sprintf("%s %s at %s", t.Node, t.State, fmtS(t.At)))
			}
		case EvProcess:
			if t.Node == name && t.At > from {
				lines = append(lines, fmt.Sprintf("process %s at %s", t.State, fmtS(t.At)))
			} else if t.Node == name && t.State == "paused" && pausedThrough(trace, j, from) {
				lines = append(lines, fmt.Sprintf("process paused at %s, still frozen at %s", fmtS(t.At), fmtS(from)))
			}
		case EvFault:
			if t.At > from || faultOpenAt(trace, j, from) {
				if touches(t, name) {
					lines = append(lines, fmt.Sprintf("fault %s %s at %s", t.Reason, t.Detail, fmtS(t.At)))
				}
			}
		}
	}
	if lost > 20 {
		lines = append(lines, fmt.Sprintf("… %d transmissions lost in all", lost))
	}
	return lines
}

// touches reports whether a fault event concerns the member: it names it, or
// it is network-wide (loss, latency, coordinator failover).
func touches(f *TraceEvent, name string) bool {
	switch scenario.FaultKind(f.Reason) {
	case scenario.FaultLoss, scenario.FaultLatency, scenario.FaultCoordinatorFailover:
		return true
	case scenario.FaultCrash, scenario.FaultHostDown:
		if f.Detail == scenario.CoordinatorName || strings.HasPrefix(f.Detail, scenario.BrokerPrefix) {
			return true // a broker: every member's coordinator or lookups
		}
	case scenario.FaultFilter:
		return !strings.Contains(f.Detail, "member=") || strings.Contains(f.Detail, "member="+name+" ")
	}
	for _, part := range strings.FieldsFunc(f.Detail, func(r rune) bool { return r == '|' || r == '>' }) {
		if part == name {
			return true
		}
	}
	return false
}

// faultOpenAt reports whether the windowed fault started at trace[j] is
// still open at instant t (its fault-end comes after t).
func faultOpenAt(trace []TraceEvent, j int, t sim.Instant) bool {
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

func pausedThrough(trace []TraceEvent, j int, t sim.Instant) bool {
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
func sendTime(trace []TraceEvent, j int) sim.Instant {
	d := &trace[j]
	for k := j - 1; k >= 0; k-- {
		s := &trace[k]
		if s.Kind == EvSend && s.Corr == d.Corr && s.Req == d.Req && s.Node == d.Peer && s.Peer == d.Node {
			return s.At
		}
	}
	return -1
}

// processAlive reports whether the member's process was alive (started and
// not crashed, closed or fatal) at trace[at].
func processAlive(trace []TraceEvent, at int, name string) bool {
	for j := at; j >= 0; j-- {
		t := &trace[j]
		if t.Kind == EvProcess && t.Node == name {
			switch t.State {
			case "started", "paused", "resumed":
				return true
			default:
				return false
			}
		}
	}
	return false
}

func dirName(req bool) string {
	if req {
		return "request"
	}
	return "response"
}
