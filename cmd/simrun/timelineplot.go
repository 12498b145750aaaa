package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
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

// timelineOf is the data of a drawn timeline (tracing.TimelineOf).
func timelineOf(sc *scenario.Scenario, res *harness.Result) (tracks []string, spans []report.Span, marks []report.Mark, shown, total int) {
	tl := tracing.TimelineOf(sc, res.Trace, res.Observations, float64(res.Summary.SimulatedMs)/1000, maxTimelineMembers)
	return tl.Tracks, tl.Spans, tl.Marks, tl.Shown, tl.Total
}
