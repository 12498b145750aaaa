package harness

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
)

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
	// hashOnly: nothing but the hash reads the trace (no JSON lines, no
	// kept events, no Observe hook), so a message event can be hashed
	// straight from its fields (recordMsg) without building a TraceEvent.
	hashOnly bool
}

func newRecorder(jsonl io.Writer, keep bool, observe func(*TraceEvent)) *recorder {
	return &recorder{h: sha256.New(), hbuf: make([]byte, 0, hashBatch+512), buf: make([]byte, 0, 256), jsonl: jsonl, keep: keep, observe: observe,
		hashOnly: jsonl == nil && !keep && observe == nil}
}

// hashBatch is how many encoded bytes the recorder gathers before hashing.
const hashBatch = 8 << 10

func (r *recorder) record(e *TraceEvent) {
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
	r.hashed(b)
	if r.jsonl != nil && r.werr == nil {
		line := tracing.AppendJSON(r.buf[:0], e)
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

// recordMsg hashes one message event (world.msgEvent) exactly as record
// hashes a TraceEvent with these fields and every other field empty
// (TestRecordMsgEncoding holds the two to the same bytes). Only for a
// hashOnly recorder: it writes no JSON and keeps nothing. Message events
// are most of a run's trace, and filling a TraceEvent (tracing's
// eventSize) to encode it cost about 2 % of the 100-member benchmark. It spells the
// encoding out again, constants for the empty fields, rather than sharing
// one encoder with record: an encoder taking every field as an argument
// ran 75 M more instructions in the 100-member hour (2.3 %; the arguments
// spill to the stack).
func (r *recorder) recordMsg(at sim.Instant, kind protocol.EventKind, node, group, peer, reason string, api protocol.APIKey, err protocol.ErrorCode, corr uint64, req bool) {
	b := r.hbuf
	b = binary.LittleEndian.AppendUint64(b, uint64(at))
	b = appendStr(b, string(kind))
	b = appendStr(b, node)
	b = appendStr(b, group)
	b = appendStr(b, peer)
	b = append(b, 0, 0, 0, 0) // State ""
	b = appendStr(b, reason)
	b = append(b, 0, 0, 0, 0) // Detail ""
	b = binary.LittleEndian.AppendUint16(b, uint16(api))
	b = binary.LittleEndian.AppendUint16(b, uint16(err))
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0) // Gen 0, Count 0
	b = binary.LittleEndian.AppendUint64(b, corr)
	if req {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	r.hashed(append(b, 0, 0, 0, 0)) // no partitions
}

// hashed counts one event whose encoding ends b, the recorder's batch,
// and hashes the batch once it is full.
func (r *recorder) hashed(b []byte) {
	r.count++
	if len(b) >= hashBatch {
		r.h.Write(b)
		b = b[:0]
	}
	r.hbuf = b
}

func (r *recorder) sum() string {
	r.h.Write(r.hbuf)
	r.hbuf = r.hbuf[:0]
	return hex.EncodeToString(r.h.Sum(nil))
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	if len(s) == 0 {
		return b
	}
	return append(b, s...)
}
