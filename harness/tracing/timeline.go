package tracing

import (
	"slices"
	"strconv"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// Span is a state a track held from Start to End (seconds of virtual time).
type Span struct {
	Track      int
	Start, End float64
	State      string
}

// Mark is an instant on a track: an eviction, a coordinator-dead mark, a
// fault, a group converted to another protocol ("to-consumer",
// "to-classic"); the plot (experiments/report) styles it by Kind.
type Mark struct {
	Track int
	At    float64
	Kind  string
}

// Timeline is the data of a drawn timeline (`simrun run --timeline`): one
// track per group coordinator, each followed by its members' tracks, the
// states they held and the marks on them. Shown of Total members have a
// track.
type Timeline struct {
	Tracks       []string
	Spans        []Span
	Marks        []Mark
	Shown, Total int
}

// TimelineOf steps a run's kept trace into a Timeline: member and
// coordinator states, pauses, faults and group conversions from the trace,
// evictions and dead marks from the run's observations (the classifier's,
// the same ones the summary counts). end is the end of the run in seconds;
// each group shows at most maxMembers members.
func TimelineOf(sc *scenario.Scenario, trace []Event, obs []Observation, end float64, maxMembers int) Timeline {
	var tl Timeline
	track := map[string]int{}
	for _, id := range sc.GroupIDs() { // one coordinator track per group, whatever its cohorts
		track["coordinator/"+id] = len(tl.Tracks)
		tl.Tracks = append(tl.Tracks, "coordinator ("+id+")")
		n := sc.GroupMembers(id)
		for _, f := range sc.Faults {
			if f.Kind == scenario.FaultJoin && f.Target == id {
				n++
			}
		}
		tl.Total += n
		for i := 0; i < n && i < maxMembers; i++ {
			name := id + "-" + strconv.Itoa(i)
			track[name] = len(tl.Tracks)
			tl.Tracks = append(tl.Tracks, name)
			tl.Shown++
		}
	}
	type open struct {
		state string
		since float64
		live  bool
	}
	cur := make([]open, len(tl.Tracks))
	closeSpan := func(t int, at float64) {
		if c := cur[t]; c.live && at > c.since {
			tl.Spans = append(tl.Spans, Span{Track: t, Start: c.since, End: at, State: c.state})
		}
	}
	setState := func(t int, at float64, state string) {
		closeSpan(t, at)
		cur[t] = open{state: state, since: at, live: true}
	}
	memberOf := map[string]string{}
	for _, e := range trace {
		at := float64(e.At) / 1e9
		switch e.Kind {
		case protocol.EvGroupState:
			if t, ok := track["coordinator/"+e.Group]; ok {
				setState(t, at, e.State)
			}
		case protocol.EvMemberState:
			if t, ok := track[e.Node]; ok {
				setState(t, at, e.State)
			}
		case EvProcess:
			t, ok := track[e.Node]
			if !ok {
				continue
			}
			switch e.Process {
			case protocol.ProcessStarted:
				setState(t, at, protocol.MemberUnjoined.String())
			case protocol.ProcessPaused:
				prev := cur[t].state
				setState(t, at, "PAUSED")
				cur[t].state, cur[t].since = "PAUSED", at
				memberOf["paused/"+e.Node] = prev
			case protocol.ProcessResumed:
				setState(t, at, memberOf["paused/"+e.Node])
			default: // crashed, closed, fatal
				closeSpan(t, at)
				cur[t].live = false
			}
		case EvFault:
			target := "" // the first node the fault names
			if e.Scope != nil && len(e.Scope.Nodes) > 0 {
				target = e.Scope.Nodes[0]
			}
			t, ok := track[target]
			if !ok {
				t, ok = track["coordinator/"+target]
			}
			if !ok && len(sc.Groups) > 0 {
				t, ok = track["coordinator/"+sc.Groups[0].ID], true
			}
			if ok {
				tl.Marks = append(tl.Marks, Mark{Track: t, At: at, Kind: "fault"})
			}
		case EvGroupType:
			if t, ok := track["coordinator/"+e.Group]; ok && e.Conversion != protocol.ConversionRefused {
				tl.Marks = append(tl.Marks, Mark{Track: t, At: at, Kind: "to-" + e.State})
			}
		}
	}
	for t := range cur {
		closeSpan(t, end)
	}
	// Evictions and dead marks are the classifier's observations, the same
	// ones the summary counts.
	for _, o := range obs {
		kind := ""
		switch o.Kind {
		case ObsEviction:
			kind = "eviction"
		case ObsDeadMark:
			kind = "coordinator-dead"
		default:
			continue
		}
		if t, ok := track[o.Member]; ok {
			tl.Marks = append(tl.Marks, Mark{Track: t, At: float64(o.At) / 1e9, Kind: kind})
		}
	}
	slices.SortStableFunc(tl.Spans, func(a, b Span) int { return a.Track - b.Track })
	return tl
}

// SeriesFigures are the figures Series draws (an experiment's `kind:
// timeline` plot's y), with what each is and its unit.
var SeriesFigures = []struct{ Name, Doc, Unit string }{
	{"generation", "the group's coordinator generation (classic) or group epoch (consumer protocol), as completed", "generation / epoch"},
	{"owned_partitions", "partitions that have an owner (a live member holding them), time-weighted mean over each second (an instant's dip of an eager rebalance would otherwise fill the plot)", "partitions, 1 s mean"},
	{"unowned_partitions", "partitions of the group's topics without an owner, time-weighted mean over each second", "partitions, 1 s mean"},
}

// Series steps one run's kept trace into (t seconds, value) points of
// figure fig (one of SeriesFigures). end is the end of the run in seconds;
// from, when not negative, is the run's first fault in seconds: the series
// then starts there (its x is 0), the part of the run the experiment is
// about, and the startup join is left out.
func Series(sc *scenario.Scenario, trace []Event, fig string, end, from float64) (xs, ys []float64) {
	step := func(at float64, v float64) {
		if n := len(ys); n > 0 {
			if ys[n-1] == v {
				return
			}
			xs, ys = append(xs, at), append(ys, ys[n-1]) // the step's riser
		}
		xs, ys = append(xs, at), append(ys, v)
	}
	owners := map[protocol.TopicPartition]int{}
	held := map[string][]protocol.TopicPartition{}
	set := func(node string, ps []protocol.TopicPartition) {
		for _, p := range held[node] {
			if owners[p]--; owners[p] == 0 {
				delete(owners, p)
			}
		}
		held[node] = ps
		for _, p := range ps {
			owners[p]++
		}
	}
	total := 0 // the partitions of the topics some group subscribes to
	for _, t := range sc.Topics {
		if slices.ContainsFunc(sc.Groups, func(g scenario.Group) bool { return slices.Contains(g.Subscribe, t.Name) }) {
			total += t.Partitions
		}
	}
	if fig == "unowned_partitions" {
		step(0, float64(total))
	} else {
		step(0, 0)
	}
	for i := range trace {
		e := &trace[i]
		at := float64(e.At) / 1e9
		switch fig {
		case "generation":
			if e.Kind == protocol.EvGenerationComplete {
				step(at, float64(e.Gen))
			}
		case "owned_partitions", "unowned_partitions":
			switch e.Kind {
			case protocol.EvAssigned:
				set(e.Node, slices.Clone(e.Partitions))
			case protocol.EvRevoked:
				set(e.Node, slices.DeleteFunc(slices.Clone(held[e.Node]), func(p protocol.TopicPartition) bool { return slices.Contains(e.Partitions, p) }))
			case EvProcess:
				if e.Process != protocol.ProcessStarted {
					set(e.Node, nil)
				}
			default:
				continue
			}
			if fig == "unowned_partitions" {
				step(at, float64(total-len(owners)))
			} else {
				step(at, float64(len(owners)))
			}
		}
	}
	if n := len(ys); n > 0 {
		xs, ys = append(xs, end), append(ys, ys[n-1])
	}
	if fig != "generation" {
		xs, ys = binMean(xs, ys, end, 1)
	}
	if from >= 0 {
		var cx, cy []float64
		for i := range xs {
			if xs[i] >= from {
				if len(cx) == 0 && i > 0 {
					cx, cy = append(cx, 0), append(cy, ys[i-1])
				}
				cx, cy = append(cx, xs[i]-from), append(cy, ys[i])
			}
		}
		return cx, cy
	}
	return xs, ys
}

// binMean turns a step series (xs ascending, each value holding until the
// next x) into its time-weighted mean over bins of width w, one point at
// each bin's middle.
func binMean(xs, ys []float64, end, w float64) (bx, by []float64) {
	j := 0
	for lo := 0.0; lo < end; lo += w {
		hi := min(lo+w, end)
		sum := 0.0
		for t := lo; t < hi; {
			for j+1 < len(xs) && xs[j+1] <= t {
				j++
			}
			next := hi
			if j+1 < len(xs) && xs[j+1] < hi {
				next = xs[j+1]
			}
			sum += ys[j] * (next - t)
			t = next
		}
		bx, by = append(bx, (lo+hi)/2), append(by, sum/(hi-lo))
	}
	return bx, by
}
