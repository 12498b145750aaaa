package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FormatFault writes a fault as the one-line YAML flow mapping a scenario
// file uses (`{at: 60s, crash: payments-3}`); Parse reads it back to the
// same Fault (but for Line).
func FormatFault(f Fault) string {
	parts := []string{"at: " + dur(f.At)}
	switch f.Kind {
	case FaultPartition:
		parts = append(parts, fmt.Sprintf("partition: [%s, %s]", f.Peers[0], f.Peers[1]), "for: "+dur(f.For))
		if f.Direction != "" && f.Direction != DirectionBoth {
			parts = append(parts, "direction: "+f.Direction)
		}
	case FaultLoss:
		parts = append(parts, "loss: "+strconv.FormatFloat(f.Loss, 'g', -1, 64), "for: "+dur(f.For))
	case FaultLatency:
		parts = append(parts, "latency: "+FormatDist(f.Latency), "for: "+dur(f.For))
	case FaultPause, FaultSlowPoll:
		parts = append(parts, string(f.Kind)+": "+f.Target, "for: "+dur(f.For))
	case FaultRollingRestart:
		parts = append(parts, "rolling-restart: "+f.Target, "interval: "+dur(f.Interval), "downtime: "+dur(f.Downtime))
		if c := f.Set; c != nil {
			var set []string
			if c.GroupProtocol != "" {
				set = append(set, "group.protocol: "+c.GroupProtocol)
			}
			if c.RemoteAssignor != "" {
				set = append(set, "group.remote.assignor: "+c.RemoteAssignor)
			}
			parts = append(parts, "set: {"+strings.Join(set, ", ")+"}")
		}
	case FaultFilter:
		var sel []string
		if m := f.Filter; m != nil {
			if m.API != "" {
				sel = append(sel, "api: "+m.API)
			}
			if m.Member != "" {
				sel = append(sel, "member: "+m.Member)
			}
			if m.Direction != "" {
				sel = append(sel, "direction: "+m.Direction)
			}
			if m.Action != "" {
				sel = append(sel, "action: "+m.Action)
			}
			if m.Delay > 0 {
				sel = append(sel, "delay: "+dur(m.Delay))
			}
		}
		parts = append(parts, "filter: {"+strings.Join(sel, ", ")+"}", "for: "+dur(f.For))
	case FaultCrash, FaultHostDown:
		parts = append(parts, string(f.Kind)+": "+f.Target)
		if f.For > 0 {
			parts = append(parts, "for: "+dur(f.For))
		}
	case FaultRestart, FaultLeave, FaultJoin, FaultCoordinatorFailover:
		parts = append(parts, string(f.Kind)+": "+f.Target)
	case FaultAddPartitions:
		parts = append(parts, string(f.Kind)+": "+f.Target, "partitions: "+strconv.Itoa(f.Partitions))
	}
	if f.JitterSet {
		parts = append(parts, "jitter: "+dur(f.Jitter))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// FormatDist writes a distribution as the scenario file does.
func FormatDist(d Dist) string {
	switch d.Kind {
	case DistUniform:
		return fmt.Sprintf("{dist: uniform, min: %s, max: %s}", dur(d.Min), dur(d.Max))
	case DistExponential:
		return fmt.Sprintf("{dist: exponential, min: %s, mean: %s}", dur(d.Min), dur(d.Mean))
	case DistLognormal:
		return fmt.Sprintf("{dist: lognormal, median: %s, p99: %s}", dur(d.Median), dur(d.P99))
	case DistConstant, "":
	}
	return dur(d.Value)
}

func dur(d time.Duration) string { return d.String() }

// WithFaults returns the scenario file data with its fault timeline
// replaced by faults and its swarm block removed: the explicit, replayable
// form of a run (what simrun shrink writes). Every other key and its
// comments are kept; the file's header comment (which describes the
// original faults) is not: the caller writes its own.
func WithFaults(source string, data []byte, faults []Fault) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a scenario mapping", source)
	}
	top := doc.Content[0]
	// The file's header comment describes its own faults, not these: a
	// shrunk or explored scenario carries the caller's header instead
	// (else a finding's scenario.yaml keeps the sweep's stale header).
	doc.HeadComment, top.HeadComment = "", ""
	if len(top.Content) > 0 {
		top.Content[0].HeadComment = ""
	}
	var kept []*yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch top.Content[i].Value {
		case "faults", "swarm":
			continue
		}
		kept = append(kept, top.Content[i], top.Content[i+1])
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, f := range faults {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(FormatFault(f)), &n); err != nil {
			return nil, fmt.Errorf("formatting fault %s: %w", FormatFault(f), err)
		}
		item := n.Content[0]
		item.Style = yaml.FlowStyle
		seq.Content = append(seq.Content, item)
	}
	top.Content = append(kept, &yaml.Node{Kind: yaml.ScalarNode, Value: "faults"}, seq)
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return out, nil
}
