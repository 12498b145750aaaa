package tracing

import (
	"bufio"
	"fmt"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"io"
	"strconv"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Perfetto output: the Chrome trace-event JSON format (the "JSON Array
// Format" wrapped in {"traceEvents": [...]}) that ui.perfetto.dev and
// chrome://tracing open. Layout (docs/OBSERVABILITY.md):
//   - process "members <group>" (pid 1+group index): one thread per member
//     slot, with B/E slices for the member's state (UNJOINED,
//     PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE) while its process
//     lives;
//   - process "coordinator" (pid 1000): one thread per (broker, group) with
//     B/E slices for the group state while that broker is its coordinator;
//   - process "harness" (pid 1001): fault windows and instants;
//   - every delivered message is a zero-length slice at its send and at its
//     deliver, bound by a flow (ph "s" → "f", id unique per message);
//   - instants ("i") for drops, request timeouts, coordinator-dead marks,
//     evictions (member-removed), faults and process events.
// Timestamps are microseconds of virtual time.

const (
	pidCoordinator = 1000
	pidHarness     = 1001
)

type pfTrack struct{ pid, tid int }

type pfWriter struct {
	w       *bufio.Writer
	first   bool
	tracks  map[string]pfTrack // node (or broker|group) → track
	names   []string           // track keys in creation order, for metadata
	open    map[pfTrack]string // open B slice per track
	groups  map[string]int     // group id → index
	gnames  []string           // group ids by index
	brokerT map[string]string  // group → broker key currently holding its state slice
	flows   map[pfMsgKey]pfSend
	nextID  uint64
	nextTid map[int]int
}

type pfMsgKey struct {
	from, to string
	corr     uint64
	req      bool
	api      protocol.APIKey
}

type pfSend struct {
	ts  float64
	trk pfTrack
}

// WritePerfetto writes trace (Result.Trace, from Options.KeepTrace) as a
// Chrome trace-event JSON document to out. Evictions, leaves, fences and
// coordinator-dead marks are drawn from the run's observations
// (Result.Observations), so they carry the classifier's cause and verdict.
func WritePerfetto(out io.Writer, trace []Event, obs []Observation) error {
	p := &pfWriter{w: bufio.NewWriterSize(out, 1<<16), first: true,
		tracks: map[string]pfTrack{}, open: map[pfTrack]string{}, groups: map[string]int{},
		brokerT: map[string]string{}, flows: map[pfMsgKey]pfSend{}, nextTid: map[int]int{}}
	p.w.WriteString(`{"displayTimeUnit":"ms","traceEvents":[` + "\n")
	p.meta(pidCoordinator, 0, "process_name", "coordinator")
	p.meta(pidHarness, 0, "process_name", "harness")
	p.meta(pidHarness, 1, "thread_name", "faults")
	var end float64
	k := 0 // obs are in trace order (by Seq)
	for i := range trace {
		p.event(&trace[i])
		for ; k < len(obs) && obs[k].Seq <= int64(i); k++ {
			if obs[k].Seq == int64(i) {
				p.observation(&trace[i], &obs[k])
			}
		}
		end = us(&trace[i])
	}
	// Close every slice still open at the end of the run, in track order.
	for _, k := range p.names {
		t := p.tracks[k]
		if _, ok := p.open[t]; ok {
			p.end(t, end)
		}
	}
	p.w.WriteString("\n]}\n")
	return p.w.Flush()
}

// WritePerfettoFile writes the Perfetto JSON to path atomically (a temporary
// file in the same directory, renamed over path).
func WritePerfettoFile(path string, trace []Event, obs []Observation) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := WritePerfetto(f, trace, obs); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func us(e *Event) float64 { return float64(e.At) / 1e3 }

func (p *pfWriter) sep() {
	if !p.first {
		p.w.WriteString(",\n")
	}
	p.first = false
}

func (p *pfWriter) meta(pid, tid int, name, value string) {
	p.sep()
	fmt.Fprintf(p.w, `{"ph":"M","pid":%d,"tid":%d,"name":%q,"args":{"name":%q}}`, pid, tid, name, value)
}

// track returns the track of a node: a member thread, a (broker, group)
// thread or the harness thread.
func (p *pfWriter) track(e *Event, node string) pfTrack {
	key := node
	if node != "harness" && e.Group != "" && isBroker(node) {
		key = node + "|" + e.Group
	}
	if t, ok := p.tracks[key]; ok {
		return t
	}
	var t pfTrack
	switch {
	case node == "harness":
		t = pfTrack{pidHarness, 1}
	case isBroker(node):
		p.nextTid[pidCoordinator]++
		t = pfTrack{pidCoordinator, p.nextTid[pidCoordinator]}
		p.meta(t.pid, t.tid, "thread_name", key)
	default:
		gi, ok := p.groups[e.Group]
		if !ok {
			gi = len(p.groups)
			p.groups[e.Group] = gi
			p.gnames = append(p.gnames, e.Group)
			p.meta(1+gi, 0, "process_name", "members "+e.Group)
		}
		p.nextTid[1+gi]++
		t = pfTrack{1 + gi, p.nextTid[1+gi]}
		p.meta(t.pid, t.tid, "thread_name", node)
	}
	p.tracks[key] = t
	p.names = append(p.names, key)
	return t
}

func isBroker(node string) bool { return len(node) > 7 && node[:7] == "broker-" }

func (p *pfWriter) begin(t pfTrack, ts float64, name, cat string, args string) {
	if _, ok := p.open[t]; ok {
		p.end(t, ts)
	}
	p.open[t] = name
	p.sep()
	fmt.Fprintf(p.w, `{"ph":"B","pid":%d,"tid":%d,"ts":%s,"name":%q,"cat":%q%s}`, t.pid, t.tid, ftoa(ts), name, cat, args)
}

func (p *pfWriter) end(t pfTrack, ts float64) {
	if _, ok := p.open[t]; !ok {
		return
	}
	delete(p.open, t)
	p.sep()
	fmt.Fprintf(p.w, `{"ph":"E","pid":%d,"tid":%d,"ts":%s}`, t.pid, t.tid, ftoa(ts))
}

func (p *pfWriter) instant(t pfTrack, ts float64, name, cat, args string) {
	p.sep()
	fmt.Fprintf(p.w, `{"ph":"i","s":"t","pid":%d,"tid":%d,"ts":%s,"name":%q,"cat":%q%s}`, t.pid, t.tid, ftoa(ts), name, cat, args)
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func args(kv ...string) string {
	b := []byte(`,"args":{`)
	n := 0
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, kv[i])
		b = append(b, ':')
		b = strconv.AppendQuote(b, kv[i+1])
		n++
	}
	if n == 0 {
		return ""
	}
	return string(append(b, '}'))
}

func (p *pfWriter) event(e *Event) {
	ts := us(e)
	switch e.Kind {
	case protocol.EvMemberState:
		p.begin(p.track(e, e.Node), ts, e.State, "member-state", args("from", e.Detail, "gen", strconv.Itoa(int(e.Gen))))
	case EvProcess:
		t := p.track(e, e.Node)
		switch {
		case e.Process == protocol.ProcessStarted:
			// A fresh process starts UNJOINED (MemberState.UNJOINED).
			p.begin(t, ts, protocol.MemberUnjoined.String(), "member-state", args("process", e.Process.String()))
		case e.Process.Ended():
			p.end(t, ts)
		}
		p.instant(t, ts, "process "+e.State, "process", "")
	case protocol.EvGroupState:
		key := e.Node + "|" + e.Group
		if prev, ok := p.brokerT[e.Group]; ok && prev != key {
			p.end(p.tracks[prev], ts) // the group moved to another coordinator
		}
		p.brokerT[e.Group] = key
		p.begin(p.track(e, e.Node), ts, e.State, "group-state", args("from", e.Detail, "gen", strconv.Itoa(int(e.Gen))))
	case EvBrokerRole:
		if prev, ok := p.brokerT[e.Group]; ok {
			p.end(p.tracks[prev], ts)
			delete(p.brokerT, e.Group)
		}
		p.instant(p.track(e, e.Node), ts, "coordinator moved here", "coordinator", args("from", e.Peer))
	case EvSend:
		p.flows[pfMsgKey{e.Node, e.Peer, e.Corr, e.Req, e.API}] = pfSend{ts, p.trackOf(e, e.Node)}
	case EvDeliver:
		k := pfMsgKey{e.Peer, e.Node, e.Corr, e.Req, e.API}
		s, ok := p.flows[k]
		if !ok {
			return
		}
		delete(p.flows, k)
		p.nextID++
		name := msgName(e)
		to := p.trackOf(e, e.Node)
		p.sep()
		fmt.Fprintf(p.w, `{"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":0,"name":%q,"cat":"send"}`, s.trk.pid, s.trk.tid, ftoa(s.ts), name)
		p.sep()
		fmt.Fprintf(p.w, `{"ph":"s","pid":%d,"tid":%d,"ts":%s,"id":%d,"name":%q,"cat":"msg"}`, s.trk.pid, s.trk.tid, ftoa(s.ts), p.nextID, name)
		p.sep()
		fmt.Fprintf(p.w, `{"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":0,"name":%q,"cat":"deliver"%s}`, to.pid, to.tid, ftoa(ts), name, args("error", errName(e)))
		p.sep()
		fmt.Fprintf(p.w, `{"ph":"f","bp":"e","pid":%d,"tid":%d,"ts":%s,"id":%d,"name":%q,"cat":"msg"}`, to.pid, to.tid, ftoa(ts), p.nextID, name)
	case EvDrop:
		delete(p.flows, pfMsgKey{e.Node, e.Peer, e.Corr, e.Req, e.API})
		p.instant(p.trackOf(e, e.Node), ts, "drop "+msgName(e), "drop", args("reason", e.Reason, "to", e.Peer))
	case protocol.EvRequestTimeout:
		p.instant(p.track(e, e.Node), ts, "request timeout "+e.API.String(), "timeout", "")
	case protocol.EvPollTimeout:
		p.instant(p.track(e, e.Node), ts, "poll timeout", "poll-timeout", "")
	case EvFault:
		p.instant(pfTrack{pidHarness, 1}, ts, "fault "+e.Reason, "fault", args("target", e.Detail))
	case EvFaultEnd:
		p.instant(pfTrack{pidHarness, 1}, ts, "fault end "+e.Reason, "fault", args("target", e.Detail))
	}
}

// observation draws one classified observation at the trace event that
// produced it: evictions, leaves and fences on the coordinator's track,
// dead marks on the member's.
func (p *pfWriter) observation(e *Event, o *Observation) {
	ts := us(e)
	verdict := "true"
	if o.False {
		verdict = "false"
	}
	switch o.Kind {
	case ObsEviction:
		p.instant(p.track(e, e.Node), ts, "eviction ("+o.Cause()+")", "eviction", args("member", o.Member, "member_id", o.MemberID, "verdict", verdict))
	case ObsLeave:
		p.instant(p.track(e, e.Node), ts, "leave", "leave", args("member", o.Member, "member_id", o.MemberID))
	case ObsFence:
		p.instant(p.track(e, e.Node), ts, "fenced (static member replaced)", "fence", args("member", o.Member, "member_id", o.MemberID))
	case ObsDeadMark:
		p.instant(p.track(e, e.Node), ts, "coordinator dead", "coordinator-dead", args("reason", o.Cause(), "verdict", verdict))
	}
}

// trackOf is the track of a message endpoint: a broker's messages go on the
// track of the group they concern (requests carry it; responses use the
// group of the member at the other end, resolved by the sender's track).
func (p *pfWriter) trackOf(e *Event, node string) pfTrack {
	if isBroker(node) && e.Group == "" {
		// Responses carry no group: use the member's group.
		if t, ok := p.tracks[otherEnd(e, node)]; ok && t.pid >= 1 && t.pid <= len(p.gnames) {
			ee := *e
			ee.Group = p.gnames[t.pid-1]
			return p.track(&ee, node)
		}
	}
	return p.track(e, node)
}

func otherEnd(e *Event, node string) string {
	if e.Node == node {
		return e.Peer
	}
	return e.Node
}

func msgName(e *Event) string {
	if e.Req {
		return e.API.String() + " request"
	}
	return e.API.String() + " response"
}

func errName(e *Event) string {
	if e.Err == protocol.None {
		return ""
	}
	return e.Err.String()
}
