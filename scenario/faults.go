package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// BrokerPrefix starts a broker's name: broker-0, broker-1, …
const BrokerPrefix = "broker-"

// MemberName is the name of member i of a group: "<group>-<i>".
func MemberName(group string, i int) string { return group + "-" + strconv.Itoa(i) }

// ResolveMember maps a member name to its `groups:` entry (index into
// s.Groups: the cohort the member belongs to) and its member index within
// the group. The index may be beyond the group's members for members that
// join faults add; those belong to the group's last cohort. ok is false when
// no group has that member name form.
func (s *Scenario) ResolveMember(name string) (group, member int, ok bool) {
	return resolveMember(s.Groups, name)
}

func resolveMember(groups []Group, name string) (group, member int, ok bool) {
	// Group ids may contain '-': match the id that is followed by
	// "-<digits>". At most one id can match a name that way, so once one
	// entry matches, only that id's cohorts are candidates.
	group = -1
	for gi, g := range groups {
		if group >= 0 && g.ID != groups[group].ID {
			continue
		}
		rest, found := strings.CutPrefix(name, g.ID+"-")
		if !found || rest == "" || (len(rest) > 1 && rest[0] == '0') {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || strconv.Itoa(n) != rest {
			continue
		}
		group, member = gi, n // the last cohort so far: joined members belong to it
		if n < g.FirstIndex+g.Members {
			return gi, n, true
		}
	}
	if group >= 0 {
		return group, member, true
	}
	return 0, 0, false
}

// CheckMember says whether a member of that name ever exists in a run of
// the scenario: an initial member of a group's cohorts, or one a join fault
// adds. The error names the members that do.
func (s *Scenario) CheckMember(name string) error {
	gi, mi, ok := resolveMember(s.Groups, name)
	if !ok {
		return fmt.Errorf("unknown member %s; members are named <group>-<index> (groups: %s)", quote(name), strings.Join(s.GroupIDs(), ", "))
	}
	id := s.Groups[gi].ID
	limit := groupMembers(s.Groups, id)
	for _, f := range s.Faults {
		if f.Kind == FaultJoin && f.Target == id {
			limit++
		}
	}
	if mi >= limit {
		return fmt.Errorf("member %s never exists: group %s has members %s-0 to %s-%d", quote(name), id, id, id, limit-1)
	}
	return nil
}

func groupIndex(groups []Group, id string) int {
	return slices.IndexFunc(groups, func(g Group) bool { return g.ID == id })
}

// GroupIDs returns the distinct group ids, in order of first appearance:
// one consumer group each, whatever its number of cohorts.
func (s *Scenario) GroupIDs() []string {
	var ids []string
	for _, g := range s.Groups {
		if !slices.Contains(ids, g.ID) {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// Cohorts returns the `groups:` entries of group id, in file order.
func (s *Scenario) Cohorts(id string) []*Group {
	var out []*Group
	for i := range s.Groups {
		if s.Groups[i].ID == id {
			out = append(out, &s.Groups[i])
		}
	}
	return out
}

// GroupMembers is the number of initial members of group id over all its
// cohorts (members that join faults add not counted).
func (s *Scenario) GroupMembers(id string) int { return groupMembers(s.Groups, id) }

func groupMembers(groups []Group, id string) int {
	n := 0
	for _, g := range groups {
		if g.ID == id {
			n += g.Members
		}
	}
	return n
}

// faults decodes the fault timeline and sorts it by At (stable: file order
// among equal instants).
func (d *decoder) faults(n *yaml.Node, groups []Group, topics []Topic, brokers int, duration time.Duration) ([]Fault, error) {
	const path = "faults"
	if n.Kind == yaml.SequenceNode && len(n.Content) > MaxFaults {
		return nil, d.errf(n, path, "%d faults, more than the limit of %d (for many random faults use swarm:)", len(n.Content), MaxFaults)
	}
	elems, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]Fault, 0, len(elems))
	fieldsOf := make([]*fields, 0, len(elems))
	for i, e := range elems {
		p := index(path, i)
		f, err := d.mapping(e, p, faultSchema)
		if err != nil {
			return nil, err
		}
		ft, err := d.fault(f, p)
		if err != nil {
			return nil, err
		}
		if ft.At >= duration {
			// A fault at or after the end does nothing: say so loudly. (Not
			// an error: INTERFACE.md's own example lists faults past its
			// duration, and a shorter --set duration must keep working.)
			d.warnf(f.get("at"), sub(p, "at"), "%v is not before the end of the run (duration %v): this %s fault never happens", ft.At, duration, ft.Kind)
		}
		if ft.Kind == FaultRollingRestart {
			if n := groupMembers(groups, ft.Target); n > 0 && ft.Interval > (MaxTime-ft.At)/time.Duration(n) {
				return nil, d.errf(f.get("interval"), sub(p, "interval"), "%d members × interval %v run past %v, the simulator's limit on any time", n, ft.Interval, MaxTime)
			}
		}
		out = append(out, ft)
		fieldsOf = append(fieldsOf, f)
	}
	// Members that join faults add: member indexes up to members+joins exist.
	// Counted per group id (at its first entry), over all its cohorts.
	joins := make([]int, len(groups))
	for _, ft := range out {
		if ft.Kind == FaultJoin {
			if gi := groupIndex(groups, ft.Target); gi >= 0 {
				joins[gi]++
			}
		}
	}
	// joinAt[gi][k] is when the k-th join of group gi (in time order) adds
	// member <id>-(members+k).
	joinAt := make([][]time.Duration, len(groups))
	for _, ft := range out {
		if ft.Kind == FaultJoin {
			if gi := groupIndex(groups, ft.Target); gi >= 0 {
				joinAt[gi] = append(joinAt[gi], ft.At)
			}
		}
	}
	for _, j := range joinAt {
		slices.Sort(j)
	}
	var at time.Duration // the fault being checked
	checkMember := func(f *fields, p, key, name string, allowCoordinator bool) error {
		if allowCoordinator && name == CoordinatorName {
			return nil
		}
		gi, mi, ok := resolveMember(groups, name)
		if !ok {
			return d.errf(f.get(key), sub(p, key), "unknown member %q; members are named <group>-<index>", name)
		}
		gi = groupIndex(groups, groups[gi].ID)
		if limit := groupMembers(groups, groups[gi].ID) + joins[gi]; mi >= limit {
			return d.errf(f.get(key), sub(p, key), "member %q does not exist: group %s has members %s-0 to %s-%d",
				name, groups[gi].ID, groups[gi].ID, groups[gi].ID, limit-1)
		}
		if k := mi - groupMembers(groups, groups[gi].ID); k >= 0 && joinAt[gi][k] > at {
			return d.errf(f.get(key), sub(p, key), "member %q does not exist yet at %v: the join fault that adds it comes at %v",
				name, at, joinAt[gi][k])
		}
		return nil
	}
	for i := range out {
		ft, f, p := &out[i], fieldsOf[i], index(path, i)
		key := string(ft.Kind)
		at = ft.At
		switch ft.Kind {
		case FaultCrash, FaultHostDown:
			if ft.Target == CoordinatorName {
				continue
			}
			if rest, ok := strings.CutPrefix(ft.Target, BrokerPrefix); ok {
				if n, err := strconv.Atoi(rest); err != nil || n < 0 || n >= brokers || strconv.Itoa(n) != rest {
					return nil, d.errf(f.get(key), sub(p, key), "unknown broker %q; brokers are %s0 to %s%d", ft.Target, BrokerPrefix, BrokerPrefix, brokers-1)
				}
				continue
			}
			if err := checkMember(f, p, key, ft.Target, false); err != nil {
				return nil, err
			}
		case FaultRestart, FaultPause, FaultSlowPoll, FaultLeave:
			if err := checkMember(f, p, key, ft.Target, false); err != nil {
				return nil, err
			}
		case FaultPartition:
			for _, peer := range ft.Peers {
				if err := checkMember(f, p, key, peer, true); err != nil {
					return nil, err
				}
			}
		case FaultCoordinatorFailover, FaultJoin, FaultRollingRestart:
			if groupIndex(groups, ft.Target) < 0 {
				ids := (&Scenario{Groups: groups}).GroupIDs()
				return nil, d.errf(f.get(key), sub(p, key), "unknown group %q; groups: %s", ft.Target, strings.Join(ids, ", "))
			}
		case FaultFilter:
			if ft.Filter.Member != "" {
				if err := checkMember(f, p, key, ft.Filter.Member, false); err != nil {
					return nil, err
				}
			}
		case FaultLoss, FaultLatency, FaultAddPartitions:
		}
	}
	// add-partitions: a known topic, and a count above the topic's count
	// before it (its own or an earlier add-partitions'), in time order.
	count := map[string]int{}
	for _, t := range topics {
		count[t.Name] = t.Partitions
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(out[a].At, out[b].At) })
	for _, i := range order {
		ft, f, p := &out[i], fieldsOf[i], index(path, i)
		if ft.Kind != FaultAddPartitions {
			continue
		}
		key := string(FaultAddPartitions)
		before, ok := count[ft.Target]
		if !ok {
			var names []string
			for _, t := range topics {
				names = append(names, t.Name)
			}
			return nil, d.errf(f.get(key), sub(p, key), "unknown topic %q; topics: %s", ft.Target, strings.Join(names, ", "))
		}
		if ft.Partitions <= before {
			return nil, d.errf(f.get("partitions"), sub(p, "partitions"),
				"topic %s has %d partitions at %v; add-partitions must raise the count (Kafka cannot lower it)", ft.Target, before, ft.At)
		}
		count[ft.Target] = ft.Partitions
	}
	SortFaults(out)
	return out, nil
}

// fault decodes one timeline entry: `at`, exactly one action, and the
// modifiers that action takes.
func (d *decoder) fault(f *fields, path string) (Fault, error) {
	ft := Fault{Line: f.node.Line}
	var err error
	v := f.get("at")
	if v == nil {
		return Fault{}, d.errf(f.node, sub(path, "at"), "missing required key")
	}
	if ft.At, err = d.duration(v, sub(path, "at")); err != nil {
		return Fault{}, err
	}
	var actions []string
	for _, k := range f.order {
		if slices.Contains(faultActions, FaultKind(k)) {
			actions = append(actions, k)
		}
	}
	names := make([]string, len(faultActions))
	for i, a := range faultActions {
		names[i] = string(a)
	}
	switch len(actions) {
	case 0:
		return Fault{}, d.errf(f.node, path, "a fault needs one action: %s", strings.Join(names, ", "))
	case 1:
	default:
		return Fault{}, d.errf(f.line(actions[1]), sub(path, actions[1]), "a fault has exactly one action, got %s", strings.Join(actions, " and "))
	}
	ft.Kind = FaultKind(actions[0])
	key := actions[0]
	v = f.get(key)
	kp := sub(path, key)

	// Which modifiers each action takes (required when listed).
	var allowed []string
	optional := ""
	switch ft.Kind {
	case FaultCrash:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
		allowed, optional = []string{"for"}, "for" // the process restarts after `for`
	case FaultHostDown:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
		allowed = []string{"for"}
	case FaultRestart, FaultLeave:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
	case FaultPause, FaultSlowPoll:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
		allowed = []string{"for"}
	case FaultCoordinatorFailover, FaultJoin:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
	case FaultRollingRestart:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
		allowed = []string{"interval", "downtime"}
	case FaultPartition:
		elems, err := d.sequence(v, kp)
		if err != nil {
			return Fault{}, err
		}
		if len(elems) != 2 {
			return Fault{}, d.errf(v, kp, "expected two endpoints [a, b], got %d", len(elems))
		}
		for i := range 2 {
			if ft.Peers[i], err = d.str(elems[i], index(kp, i)); err != nil {
				return Fault{}, err
			}
		}
		if ft.Peers[0] == ft.Peers[1] {
			return Fault{}, d.errf(v, kp, "the two endpoints must differ, got %q twice", ft.Peers[0])
		}
		allowed = []string{"for"}
	case FaultLoss:
		if ft.Loss, err = d.probability(v, kp); err != nil {
			return Fault{}, err
		}
		allowed = []string{"for"}
	case FaultLatency:
		if ft.Latency, err = d.dist(v, kp); err != nil {
			return Fault{}, err
		}
		allowed = []string{"for"}
	case FaultFilter:
		if ft.Filter, err = d.filter(v, kp); err != nil {
			return Fault{}, err
		}
		allowed = []string{"for"}
	case FaultAddPartitions:
		if ft.Target, err = d.str(v, kp); err != nil {
			return Fault{}, err
		}
		pv := f.get("partitions")
		if pv == nil {
			return Fault{}, d.errf(f.node, sub(path, "partitions"), "missing key: %s needs %q (the topic's new partition count)", key, "partitions")
		}
		np, err := d.integer(pv, sub(path, "partitions"), 1, MaxPartitions)
		if err != nil {
			return Fault{}, err
		}
		ft.Partitions = int(np)
	}
	if v := f.get("partitions"); v != nil && ft.Kind != FaultAddPartitions {
		return Fault{}, d.errf(f.line("partitions"), sub(path, "partitions"), "%s does not take %q", key, "partitions")
	}
	if v := f.get("set"); v != nil {
		if ft.Kind != FaultRollingRestart {
			return Fault{}, d.errf(f.line("set"), sub(path, "set"), "%s does not take %q (only rolling-restart restarts members with new client settings)", key, "set")
		}
		if ft.Set, err = d.rollingSet(v, sub(path, "set")); err != nil {
			return Fault{}, err
		}
	}
	if v := f.get("direction"); v != nil {
		if ft.Kind != FaultPartition {
			return Fault{}, d.errf(f.line("direction"), sub(path, "direction"), "%s does not take %q", key, "direction")
		}
		dir, err := d.str(v, sub(path, "direction"))
		if err != nil {
			return Fault{}, err
		}
		if dir != DirectionBoth && dir != DirectionOneWay {
			return Fault{}, d.errf(v, sub(path, "direction"), "unknown direction %q; one of: both, one-way", dir)
		}
		ft.Direction = dir
	}
	for _, m := range []string{"for", "interval", "downtime"} {
		mv := f.get(m)
		if !slices.Contains(allowed, m) {
			if mv != nil {
				return Fault{}, d.errf(f.line(m), sub(path, m), "%s does not take %q", key, m)
			}
			continue
		}
		if mv == nil {
			if m == optional {
				continue
			}
			return Fault{}, d.errf(f.node, sub(path, m), "missing key: %s needs %q", key, m)
		}
		dv, err := d.duration(mv, sub(path, m))
		if err != nil {
			return Fault{}, err
		}
		switch m {
		case "for":
			ft.For = dv
		case "interval":
			ft.Interval = dv
		case "downtime":
			ft.Downtime = dv
		}
		if dv == 0 && m != "downtime" {
			return Fault{}, d.errf(mv, sub(path, m), "must be positive")
		}
	}
	if jv := f.get("jitter"); jv != nil {
		// Every fault kind takes it: the window its phase is drawn over (a
		// fault at one fixed instant meets the same heartbeat phase every seed).
		if ft.Jitter, err = d.duration(jv, sub(path, "jitter")); err != nil {
			return Fault{}, err
		}
		ft.JitterSet = true
	}
	return ft, nil
}

// filter decodes a filter fault's selection: {api, member, direction,
// action, delay}. direction defaults to both, action to drop; delay is
// required with action delay and refused otherwise.
func (d *decoder) filter(n *yaml.Node, path string) (*MessageFilter, error) {
	f, err := d.mapping(n, path, filterSchema)
	if err != nil {
		return nil, err
	}
	mf := &MessageFilter{Direction: FilterBoth, Action: FilterDrop}
	if v := f.get("api"); v != nil {
		if mf.API, err = d.str(v, sub(path, "api")); err != nil {
			return nil, err
		}
		if !slices.Contains(APINames, mf.API) {
			return nil, d.errf(v, sub(path, "api"), "unknown API %q; one of: %s", mf.API, strings.Join(APINames, ", "))
		}
	}
	if v := f.get("member"); v != nil {
		if mf.Member, err = d.str(v, sub(path, "member")); err != nil {
			return nil, err
		}
	}
	if v := f.get("direction"); v != nil {
		if mf.Direction, err = d.str(v, sub(path, "direction")); err != nil {
			return nil, err
		}
		switch mf.Direction {
		case FilterRequest, FilterResponse, FilterBoth:
		default:
			return nil, d.errf(v, sub(path, "direction"), "unknown direction %q; one of: request, response, both", mf.Direction)
		}
	}
	if v := f.get("action"); v != nil {
		if mf.Action, err = d.str(v, sub(path, "action")); err != nil {
			return nil, err
		}
		if mf.Action != FilterDrop && mf.Action != FilterDelay {
			return nil, d.errf(v, sub(path, "action"), "unknown action %q; one of: drop, delay", mf.Action)
		}
	}
	v := f.get("delay")
	switch {
	case mf.Action == FilterDelay && v == nil:
		return nil, d.errf(f.node, sub(path, "delay"), "missing key: action delay needs \"delay\"")
	case mf.Action == FilterDrop && v != nil:
		return nil, d.errf(f.line("delay"), sub(path, "delay"), "action drop does not take \"delay\"")
	case v != nil:
		if mf.Delay, err = d.duration(v, sub(path, "delay")); err != nil {
			return nil, err
		}
		if mf.Delay == 0 {
			return nil, d.errf(v, sub(path, "delay"), "must be positive")
		}
	}
	return mf, nil
}

// swarm decodes the swarm mapping (docs/OBSERVABILITY.md). Every rate is per
// simulated minute; a kind with rate 0 (or absent) is never drawn. A rate
// needs its duration keys; the window defaults to the whole run.
func (d *decoder) swarm(n *yaml.Node, duration time.Duration) (*Swarm, error) {
	const path = "swarm"
	f, err := d.mapping(n, path, swarmSchema)
	if err != nil {
		return nil, err
	}
	sw := &Swarm{Until: duration}
	durKey := func(key string, dst *time.Duration) error {
		if v := f.get(key); v != nil {
			var err error
			*dst, err = d.duration(v, sub(path, key))
			return err
		}
		return nil
	}
	if err := durKey("from", &sw.From); err != nil {
		return nil, err
	}
	if err := durKey("until", &sw.Until); err != nil {
		return nil, err
	}
	if sw.Until <= sw.From {
		return nil, d.errf(f.line("until"), sub(path, "until"), "the window is empty: until %v is not after from %v", sw.Until, sw.From)
	}
	rate := func(key string, dst *float64) error {
		v := f.get(key)
		if v == nil {
			return nil
		}
		var x float64
		if err := v.Decode(&x); err != nil || v.Kind != yaml.ScalarNode {
			return d.errf(v, sub(path, key), "expected a rate per simulated minute (a number), got %s", kindName(v))
		}
		if x < 0 || x > maxSwarmRate || x != x {
			return d.errf(v, sub(path, key), "rate %v out of range [0, %v] per simulated minute", x, maxSwarmRate)
		}
		*dst = x
		return nil
	}
	dist := func(rateKey string, r float64, key string, dst *Dist) error {
		v := f.get(key)
		if v == nil {
			if r > 0 {
				return d.errf(f.node, sub(path, key), "missing key: %s needs %q", rateKey, key)
			}
			return nil
		}
		var err error
		*dst, err = d.dist(v, sub(path, key))
		return err
	}
	for _, k := range []struct {
		rate  string
		dst   *float64
		dists []string
		dd    []*Dist
	}{
		{"crash", &sw.Crash, []string{"crash.downtime"}, []*Dist{&sw.CrashDowntime}},
		{"pause", &sw.Pause, []string{"pause.for"}, []*Dist{&sw.PauseFor}},
		{"partition", &sw.Partition, []string{"partition.for"}, []*Dist{&sw.PartitionFor}},
		{"loss", &sw.Loss, []string{"loss.for"}, []*Dist{&sw.LossFor}},
		{"latency", &sw.Latency, []string{"latency.value", "latency.for"}, []*Dist{&sw.LatencyValue, &sw.LatencyFor}},
		{"coordinator-failover", &sw.Failover, nil, nil},
	} {
		if err := rate(k.rate, k.dst); err != nil {
			return nil, err
		}
		for i, dk := range k.dists {
			if err := dist(k.rate, *k.dst, dk, k.dd[i]); err != nil {
				return nil, err
			}
		}
	}
	if v := f.get("loss.probability"); v != nil {
		if sw.LossRate, err = d.probability(v, sub(path, "loss.probability")); err != nil {
			return nil, err
		}
	} else if sw.Loss > 0 {
		return nil, d.errf(f.node, sub(path, "loss.probability"), "missing key: loss needs \"loss.probability\"")
	}
	return sw, nil
}

// maxSwarmRate bounds swarm rates (faults per simulated minute per kind).
const maxSwarmRate = 600

// SortFaults orders a timeline by time, keeping file order among faults at
// the same instant.
func SortFaults(fs []Fault) {
	slices.SortStableFunc(fs, func(a, b Fault) int { return cmp.Compare(a.At, b.At) })
}
