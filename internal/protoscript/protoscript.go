// Package protoscript is the vocabulary the models' script environments
// share (internal/datadriven runs them): partition lists written
// a:0-2,5 b:1 in both directions, and one line per trace event, so a
// coordinator script and a client script read alike.
package protoscript

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// DefaultTopic is the topic of a partition written without one ("3" is t:3).
const DefaultTopic = "t"

// Parts parses partition words: "a:0-2,5" (topic a, partitions 0, 1, 2
// and 5) or a bare "3" (DefaultTopic). The result is sorted by topic, then
// partition; never nil (an empty list is a list).
func Parts(words []string) ([]protocol.TopicPartition, error) {
	out := []protocol.TopicPartition{}
	for _, w := range words {
		topic, nums := DefaultTopic, w
		if i := strings.IndexByte(w, ':'); i >= 0 {
			topic, nums = w[:i], w[i+1:]
		}
		for _, r := range strings.Split(nums, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			a, err := strconv.Atoi(lo)
			if err != nil {
				return nil, fmt.Errorf("partition %q: %v", w, err)
			}
			b := a
			if isRange {
				if b, err = strconv.Atoi(hi); err != nil || b < a {
					return nil, fmt.Errorf("partition range %q", w)
				}
			}
			for p := a; p <= b; p++ {
				out = append(out, protocol.TopicPartition{Topic: topic, Partition: int32(p)})
			}
		}
	}
	slices.SortFunc(out, func(x, y protocol.TopicPartition) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return int(x.Partition) - int(y.Partition)
	})
	return slices.Compact(out), nil
}

// FormatParts writes a partition list as Parts reads it, in brackets:
// [a:0-2,5 b:1]; runs of three or more are ranges. It keeps the list's
// order (a model's lists are sorted), so an unsorted list shows as one.
func FormatParts(ps []protocol.TopicPartition) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(ps); {
		if i > 0 {
			b.WriteByte(' ')
		}
		topic := ps[i].Topic
		b.WriteString(topic)
		b.WriteByte(':')
		first := true
		for i < len(ps) && ps[i].Topic == topic {
			j := i
			for j+1 < len(ps) && ps[j+1].Topic == topic && ps[j+1].Partition == ps[j].Partition+1 {
				j++
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch {
			case j-i >= 2:
				fmt.Fprintf(&b, "%d-%d", ps[i].Partition, ps[j].Partition)
			case j == i+1:
				fmt.Fprintf(&b, "%d,%d", ps[i].Partition, ps[j].Partition)
			default:
				fmt.Fprintf(&b, "%d", ps[i].Partition)
			}
			i = j + 1
		}
	}
	b.WriteByte(']')
	return b.String()
}

// WriteEvent writes one trace event as a line at now: its kind, then the
// fields that are set (peer, state, detail, reason, api, err, gen, count,
// partitions). The node is left out: an environment drives one model.
func WriteEvent(b *strings.Builder, now protocol.Instant, e protocol.Event) {
	fmt.Fprintf(b, "%s %s", now, e.Kind)
	for _, kv := range [][2]string{{"peer", e.Peer}, {"state", e.State}, {"detail", e.Detail}, {"reason", e.Reason}} {
		if kv[1] != "" {
			fmt.Fprintf(b, " %s=%s", kv[0], kv[1])
		}
	}
	if e.API != 0 {
		fmt.Fprintf(b, " api=%s", e.API)
	}
	if e.Err != protocol.None {
		fmt.Fprintf(b, " err=%s", e.Err)
	}
	fmt.Fprintf(b, " gen=%d", e.Gen)
	if e.Count != 0 {
		fmt.Fprintf(b, " count=%d", e.Count)
	}
	if e.Partitions != nil {
		fmt.Fprintf(b, " parts=%s", FormatParts(e.Partitions))
	}
	b.WriteByte('\n')
}

// ErrorNamed is the error code whose name is name (NONE, FENCED_MEMBER_EPOCH, ...).
func ErrorNamed(name string) (protocol.ErrorCode, error) {
	for _, e := range slices.Concat(protocol.AllErrorCodes, protocol.ConsumerErrorCodes) {
		if e.String() == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown error code %q", name)
}
