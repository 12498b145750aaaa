package consumer

import (
	"slices"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Server-side assignor names (group.consumer.assignors; the first is the default).
const (
	Uniform = "uniform"
	Range   = "range"
)

// assignInput is one member as the target assignment sees it, in group order.
type assignInput struct {
	id, instance string
	prev         []protocol.TopicPartition // its previous target, sorted
}

// uniform is UniformHomogeneousAssignmentBuilder (UHAB@4.3 L109-268), every
// member subscribing to every topic: quota ⌊P/M⌋, P mod M members get one
// more; each member keeps its previous target up to its quota (one extra
// while extras remain), then the released and new partitions go, in order,
// to the members below quota. Balanced (sizes differ by at most one) and
// sticky.
func uniform(members []assignInput, topics []assign.Topic) [][]protocol.TopicPartition {
	out := make([][]protocol.TopicPartition, len(members))
	if len(members) == 0 {
		return out
	}
	total := 0
	for _, t := range topics {
		total += int(t.Partitions)
	}
	all := make([]protocol.TopicPartition, 0, total)
	for _, t := range topics {
		for p := int32(0); p < t.Partitions; p++ {
			all = append(all, protocol.TopicPartition{Topic: t.Name, Partition: p})
		}
	}
	quota, extras := len(all)/len(members), len(all)%len(members)
	// Partitions are looked up by index (topic base + partition), not in
	// a map: this runs at every group epoch bump of large groups.
	base := make(map[string]int, len(topics))
	n := 0
	for _, t := range topics {
		base[t.Name] = n
		n += int(t.Partitions)
	}
	indexOf := func(p protocol.TopicPartition) int {
		b, ok := base[p.Topic]
		if !ok || p.Partition < 0 || int(p.Partition) >= n-b {
			return -1
		}
		i := b + int(p.Partition)
		if all[i] != p {
			return -1
		}
		return i
	}
	taken := make([]bool, len(all))
	buf := make([]protocol.TopicPartition, len(all)+len(members))
	for i := range out {
		out[i], buf = buf[:0:quota+1], buf[quota+1:]
	}
	for i, m := range members {
		keep := quota
		if len(m.prev) > quota && extras > 0 {
			keep, extras = quota+1, extras-1
		}
		for _, p := range m.prev {
			if len(out[i]) == keep {
				break
			}
			k := indexOf(p)
			if k < 0 || taken[k] {
				continue
			}
			out[i] = append(out[i], p)
			taken[k] = true
		}
	}
	next := 0
	for i := range members {
		for len(out[i]) < quota {
			for taken[next] {
				next++
			}
			out[i] = append(out[i], all[next])
			taken[next] = true
		}
	}
	for i := range members {
		if extras == 0 {
			break
		}
		if len(out[i]) == quota {
			for next < len(all) && taken[next] {
				next++
			}
			if next == len(all) {
				break
			}
			out[i] = append(out[i], all[next])
			taken[next] = true
			extras--
		}
	}
	for i := range out {
		slices.SortFunc(out[i], cmpTP)
	}
	return out
}

// rangeAssign is the server-side RangeAssignor (RA@4.3): per topic, members
// sorted by instance id when they have one, else by member id, each getting
// a contiguous range; the first P mod M get one more. Not sticky.
func rangeAssign(members []assignInput, topics []assign.Topic) [][]protocol.TopicPartition {
	out := make([][]protocol.TopicPartition, len(members))
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	key := func(i int) string {
		if members[i].instance != "" {
			return members[i].instance
		}
		return members[i].id
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	for _, t := range topics {
		n, m := int(t.Partitions), len(members)
		if m == 0 {
			break
		}
		per, extra := n/m, n%m
		p := 0
		for k, i := range order {
			c := per
			if k < extra {
				c++
			}
			for j := 0; j < c; j++ {
				out[i] = append(out[i], protocol.TopicPartition{Topic: t.Name, Partition: int32(p)})
				p++
			}
		}
	}
	for i := range out {
		slices.SortFunc(out[i], cmpTP)
	}
	return out
}
