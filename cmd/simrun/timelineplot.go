package main

import (
	"fmt"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// maxTimelineMembers bounds the tracks of a drawn timeline; larger groups
// show their first members.
const maxTimelineMembers = 40

// writeTimeline draws the run as one band per member and one per group
// coordinator, coloured by state, with evictions, coordinator-dead marks and
// faults on top; PNG or SVG by the file's extension, written atomically.
func writeTimeline(path string, sc *scenario.Scenario, res *harness.Result) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("%s: the timeline is drawn as .png or .svg", path)
	}
	tracks, spans, marks, shown, total := timelineOf(sc, res)
	title := fmt.Sprintf("%s, seed %d", sc.Name, res.Summary.Seed)
	if shown < total {
		title += fmt.Sprintf(" (first %d of %d members)", shown, total)
	}
	fig, err := report.Timeline(title, tracks, spans, marks)
	if err != nil {
		return err
	}
	b, err := report.Render(fig, format)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}

func timelineOf(sc *scenario.Scenario, res *harness.Result) (tracks []string, spans []report.Span, marks []report.Mark, shown, total int) {
	track := map[string]int{}
	for _, id := range sc.GroupIDs() { // one coordinator track per group, whatever its cohorts
		track["coordinator/"+id] = len(tracks)
		tracks = append(tracks, "coordinator ("+id+")")
		n := sc.GroupMembers(id)
		for _, f := range sc.Faults {
			if f.Kind == scenario.FaultJoin && f.Target == id {
				n++
			}
		}
		total += n
		for i := 0; i < n && i < maxTimelineMembers; i++ {
			name := id + "-" + strconv.Itoa(i)
			track[name] = len(tracks)
			tracks = append(tracks, name)
			shown++
		}
	}
	end := float64(res.Summary.SimulatedMs) / 1000
	type open struct {
		state string
		since float64
		live  bool
	}
	cur := make([]open, len(tracks))
	closeSpan := func(t int, at float64) {
		if c := cur[t]; c.live && at > c.since {
			spans = append(spans, report.Span{Track: t, Start: c.since, End: at, State: c.state})
		}
	}
	setState := func(t int, at float64, state string) {
		closeSpan(t, at)
		cur[t] = open{state: state, since: at, live: true}
	}
	memberOf := map[string]string{}
	for _, e := range res.Trace {
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
		case harness.EvProcess:
			t, ok := track[e.Node]
			if !ok {
				continue
			}
			switch e.State {
			case "started":
				setState(t, at, "UNJOINED")
			case "paused":
				prev := cur[t].state
				setState(t, at, "PAUSED")
				cur[t].state, cur[t].since = "PAUSED", at
				memberOf["paused/"+e.Node] = prev
			case "resumed":
				setState(t, at, memberOf["paused/"+e.Node])
			default: // crashed, closed, fatal
				closeSpan(t, at)
				cur[t].live = false
			}
		case harness.EvFault:
			target := e.Detail
			if i := strings.IndexAny(target, "|>"); i >= 0 {
				target = target[:i]
			}
			t, ok := track[target]
			if !ok {
				t, ok = track["coordinator/"+target]
			}
			if !ok && len(sc.Groups) > 0 {
				t, ok = track["coordinator/"+sc.Groups[0].ID], true
			}
			if ok {
				marks = append(marks, report.Mark{Track: t, At: at, Kind: "fault"})
			}
		case harness.EvGroupType:
			if t, ok := track["coordinator/"+e.Group]; ok && e.Reason != "refused" {
				marks = append(marks, report.Mark{Track: t, At: at, Kind: "to-" + e.State})
			}
		}
	}
	for t := range cur {
		closeSpan(t, end)
	}
	// Evictions and dead marks are the classifier's observations, the same
	// ones the summary counts.
	for _, o := range res.Observations {
		kind := ""
		switch o.Kind {
		case harness.ObsEviction:
			kind = "eviction"
		case harness.ObsDeadMark:
			kind = "coordinator-dead"
		default:
			continue
		}
		if t, ok := track[o.Member]; ok {
			marks = append(marks, report.Mark{Track: t, At: float64(o.At) / 1e9, Kind: kind})
		}
	}
	slices.SortStableFunc(spans, func(a, b report.Span) int { return a.Track - b.Track })
	return tracks, spans, marks, shown, total
}
