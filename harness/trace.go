package harness

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io"
	"strconv"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
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

// TraceEvent is one event of a run's trace: when, and what.
type TraceEvent struct {
	At sim.Instant
	protocol.Event
	// Corr is the correlation id of a message event; Req says whether the
	// message is a request (false: a response).
	Corr uint64
	Req  bool
}

// recorder hashes every event in a canonical binary form (the trace hash in
// the summary), optionally writes JSON lines, and optionally keeps the
// events in memory for checkers and tests.
type recorder struct {
	h hash.Hash
	// hbuf batches the canonical encodings of events for h (one Write per
	// few kilobytes instead of one per event: the same digest, less
	// per-call overhead); buf is scratch for a JSON line.
	hbuf    []byte
	buf     []byte
	count   int64
	jsonl   io.Writer
	keep    bool
	observe func(*TraceEvent)
	events  []TraceEvent
	werr    error
}

func newRecorder(jsonl io.Writer, keep bool, observe func(*TraceEvent)) *recorder {
	return &recorder{h: sha256.New(), hbuf: make([]byte, 0, hashBatch+512), buf: make([]byte, 0, 256), jsonl: jsonl, keep: keep, observe: observe}
}

// hashBatch is how many encoded bytes the recorder gathers before hashing.
const hashBatch = 8 << 10

func (r *recorder) record(e *TraceEvent) {
	r.count++
	b := r.hbuf
	b = binary.LittleEndian.AppendUint64(b, uint64(e.At))
	b = appendStr(b, string(e.Kind))
	b = appendStr(b, e.Node)
	b = appendStr(b, e.Group)
	b = appendStr(b, e.Peer)
	b = appendStr(b, e.State)
	b = appendStr(b, e.Reason)
	b = appendStr(b, e.Detail)
	b = binary.LittleEndian.AppendUint16(b, uint16(e.API))
	b = binary.LittleEndian.AppendUint16(b, uint16(e.Err))
	b = binary.LittleEndian.AppendUint32(b, uint32(e.Gen))
	b = binary.LittleEndian.AppendUint32(b, uint32(e.Count))
	b = binary.LittleEndian.AppendUint64(b, e.Corr)
	if e.Req {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Partitions)))
	for _, tp := range e.Partitions {
		b = appendStr(b, tp.Topic)
		b = binary.LittleEndian.AppendUint32(b, uint32(tp.Partition))
	}
	if len(b) >= hashBatch {
		r.h.Write(b)
		b = b[:0]
	}
	r.hbuf = b
	if r.jsonl != nil && r.werr == nil {
		line := appendJSON(r.buf[:0], e)
		_, r.werr = r.jsonl.Write(line)
		r.buf = line[:0]
	}
	if r.observe != nil {
		r.observe(e)
	}
	if r.keep {
		ev := *e
		if len(e.Partitions) > 0 {
			ev.Partitions = append([]protocol.TopicPartition(nil), e.Partitions...)
		}
		r.events = append(r.events, ev)
	}
}

func (r *recorder) sum() string {
	r.h.Write(r.hbuf)
	r.hbuf = r.hbuf[:0]
	return hex.EncodeToString(r.h.Sum(nil))
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendJSON writes one JSON line of the trace schema (docs/TRACE.md):
// {"t_ms":..., "node":..., "kind":..., then only the non-empty fields}.
func appendJSON(b []byte, e *TraceEvent) []byte {
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
	if e.API != 0 || isMessageEvent(e.Kind) {
		str("api", e.API.String())
	}
	if e.Err != protocol.None {
		str("error", e.Err.String())
	}
	if isMessageEvent(e.Kind) {
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

// isMessageEvent: the event is about one message on the wire.
func isMessageEvent(k protocol.EventKind) bool {
	return k == EvSend || k == EvDeliver || k == EvDrop || k == EvLost || k == EvRetransmit
}
