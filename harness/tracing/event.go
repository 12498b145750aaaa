// Package tracing is the vocabulary of a run's trace and the readers of a
// finished one. The engine (package harness) writes a trace: a list of
// Events, each a model's protocol.Event or one of the harness's own kinds
// below, and classifies them into Observations. The readers here take that
// trace and those observations and never the engine's state: Explain (the
// causal chain behind an eviction or a coordinator-dead mark, `simrun
// explain`), WritePerfetto (Chrome trace-event JSON, `simrun run
// --perfetto`), Timeline and Series (the data of `simrun run --timeline`
// and of an experiment's `kind: timeline` plot), and AppendJSON (one JSON
// line of docs/TRACE.md, `simrun run --trace`).
package tracing

import (
	"strconv"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/vtime"
)

// Harness event kinds, beside the models' protocol.EventKind values.
const (
	EvSend    protocol.EventKind = "send"    // a message was put on the wire (Peer = destination)
	EvDeliver protocol.EventKind = "deliver" // a message arrived (Peer = source)
	EvDrop    protocol.EventKind = "drop"    // a message is gone for good (Reason = reset: its connection closed; closed: sent on a closed connection; filter; no-process)
	// EvLost: one TCP transmission of a message was lost (Reason = loss or
	// partition at its first send, held when it waits behind a lost
	// segment, retransmission when a retransmission or an in-flight copy
	// was lost); TCP retransmits it: not a drop.
	EvLost protocol.EventKind = "lost"
	// EvRetransmit: a retransmission of a lost message got through.
	EvRetransmit protocol.EventKind = "retransmit"
	EvFault      protocol.EventKind = "fault" // a fault started (Reason = kind, Detail = target)
	EvFaultEnd   protocol.EventKind = "fault-end"
	EvProcess    protocol.EventKind = "process" // a member process started or ended (State = started, crashed, host-down, closed, fatal, paused, resumed)
	EvBrokerRole protocol.EventKind = "coordinator-moved"
	// EvBrokerProcess: a broker process crashed, its host went down, or it
	// started again (State = crashed, host-down, started).
	EvBrokerProcess protocol.EventKind = "broker-process"
	// EvGroupType: the online migration (KIP-848) converted a group
	// (State = consumer: upgraded from classic; classic: downgraded from
	// consumer; Reason = what triggered it; Gen = the group epoch or
	// generation it continues from). Also a refused upgrade (State =
	// classic, Reason = refused, Detail = Kafka's reason).
	EvGroupType protocol.EventKind = "group-type"
)

// Event is one event of a run's trace: when, and what.
type Event struct {
	At vtime.Instant
	protocol.Event
	// Corr is the correlation id of a message event; Req says whether the
	// message is a request (false: a response).
	Corr uint64
	Req  bool
	// Fate is what happened to a message, typed, for EvLost and EvDrop
	// (Reason is its text).
	Fate Fate
	// Slot is the index of the member slot that emitted the event, plus
	// one; 0 for an event no member emitted (a broker's, the harness's
	// faults). A member's events also name it in Node ("<group>-<n>"), for
	// people; the trace's consumers find the member by Slot (Member), never
	// by parsing Node. Not hashed, not in the JSON trace.
	Slot int32
	// Scope is what a fault event (EvFault, EvFaultEnd) touches, typed;
	// Detail is its text for people. Nil for other kinds.
	Scope *FaultScope
}

// Fate is what happened to a message on the wire (Event.Fate of EvLost
// and EvDrop; Reason carries String()).
type Fate uint8

const (
	FateNone Fate = iota
	// FateLoss: the transmission was lost at its first send; TCP
	// retransmits it.
	FateLoss
	// FatePartition: the transmission was lost to a partition.
	FatePartition
	// FateHeld: the message waits behind a lost segment (head-of-line
	// blocking).
	FateHeld
	// FateRetransmission: a retransmission or an in-flight copy was lost.
	FateRetransmission
	// FateReset: the connection closed with the message in flight.
	FateReset
	// FateFilter: a message filter dropped it.
	FateFilter
	// FateClosed: sent on a connection that is not open.
	FateClosed
	// FateNoProcess: it arrived at a member with no process.
	FateNoProcess
)

var fateText = [...]string{"", "loss", "partition", "held", "retransmission", "reset", "filter", "closed", "no-process"}

// String is the trace text of the fate (Event.Reason).
func (f Fate) String() string {
	if int(f) < len(fateText) {
		return fateText[f]
	}
	return "unknown"
}

// eventSize is Event's size on 64-bit platforms: a kept trace (tests,
// explain, Perfetto, --trace) holds one per event; change it deliberately.
const eventSize = 200

var _ [eventSize - unsafe.Sizeof(Event{})]struct{} // fails to compile if Event grows

// Member is the index of the member slot that emitted e, if a member did.
func (e *Event) Member() (int32, bool) { return e.Slot - 1, e.Slot > 0 }

// FaultScope is the typed target of a fault event: what explain's causes
// read instead of parsing the event's Detail.
type FaultScope struct {
	// Broker: the fault crashes or takes down a broker's process or host
	// (the coordinator, or a broker named "broker-<n>").
	Broker bool
	// Nodes are the nodes the fault names: a crash's or a pause's target,
	// a partition's two sides.
	Nodes []string
	// FilterMember is the member a message filter is limited to ("": every
	// member).
	FilterMember string
}

// AppendJSON appends one JSON line of the trace schema (docs/TRACE.md):
// {"t_ms":..., "node":..., "kind":..., then only the non-empty fields}.
func AppendJSON(b []byte, e *Event) []byte {
	b = append(b, `{"t_ms":`...)
	b = strconv.AppendFloat(b, float64(e.At)/1e6, 'f', -1, 64)
	b = append(b, `,"node":`...)
	b = strconv.AppendQuote(b, e.Node)
	b = append(b, `,"kind":`...)
	b = strconv.AppendQuote(b, string(e.Kind))
	str := func(k, v string) {
		if v != "" {
			b = append(b, ',', '"')
			b = append(b, k...)
			b = append(b, '"', ':')
			b = strconv.AppendQuote(b, v)
		}
	}
	str("group", e.Group)
	str("peer", e.Peer)
	str("state", e.State)
	str("reason", e.Reason)
	str("detail", e.Detail)
	if e.API != 0 || IsMessageEvent(e.Kind) {
		str("api", e.API.String())
	}
	if e.Err != protocol.None {
		str("error", e.Err.String())
	}
	if IsMessageEvent(e.Kind) {
		b = append(b, `,"corr":`...)
		b = strconv.AppendUint(b, e.Corr, 10)
		if e.Req {
			b = append(b, `,"dir":"request"`...)
		} else {
			b = append(b, `,"dir":"response"`...)
		}
	}
	if e.Gen != 0 {
		b = append(b, `,"gen":`...)
		b = strconv.AppendInt(b, int64(e.Gen), 10)
	}
	if e.Count != 0 {
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(e.Count), 10)
	}
	if e.Partitions != nil {
		b = append(b, `,"partitions":[`...)
		for i, tp := range e.Partitions {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
		}
		b = append(b, ']')
	}
	return append(b, '}', '\n')
}

// IsMessageEvent reports whether an event of kind k is about one message
// on the wire.
func IsMessageEvent(k protocol.EventKind) bool {
	return k == EvSend || k == EvDeliver || k == EvDrop || k == EvLost || k == EvRetransmit
}
