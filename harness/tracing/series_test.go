package tracing_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/vtime"
)

// ev is a trace event at sec seconds.
func ev(sec float64, e protocol.Event) tracing.Event {
	return tracing.Event{At: vtime.Instant(sec * float64(time.Second)), Event: e}
}

// fault is the fault event e with its typed scope: the nodes it names.
func fault(e tracing.Event, nodes ...string) tracing.Event {
	e.Scope = &tracing.FaultScope{Nodes: nodes}
	return e
}

func tps(ps ...int32) []protocol.TopicPartition {
	var out []protocol.TopicPartition
	for _, p := range ps {
		out = append(out, protocol.TopicPartition{Topic: "t", Partition: p})
	}
	return out
}

// TestSeries: the timeline plots' curves, stepped by hand from a short
// trace of simtest.Small's group (4 partitions): g-0 takes t-0 and t-1 at
// 1 s, g-1 t-2 and t-3 at 2 s, g-1 crashes at 3 s, the coordinator
// completes generation 2 at 5 s; the run ends at 6 s.
func TestSeries(t *testing.T) {
	sc := simtest.ParseSmall(t, "6s", 1, "")
	trace := []tracing.Event{
		ev(1, protocol.Event{Kind: protocol.EvAssigned, Node: "g-0", Group: "g", Partitions: tps(0, 1)}),
		ev(2, protocol.Event{Kind: protocol.EvAssigned, Node: "g-1", Group: "g", Partitions: tps(2, 3)}),
		ev(3, protocol.Event{Kind: tracing.EvProcess, Node: "g-1", Group: "g", State: "crashed", Process: protocol.ProcessCrashed}),
		ev(5, protocol.Event{Kind: protocol.EvGenerationComplete, Node: "broker-0", Group: "g", Gen: 2}),
	}
	xs, ys := tracing.Series(sc, trace, "generation", 6, -1)
	assert.Equal(t, []float64{0, 5, 5, 6}, xs)
	assert.Equal(t, []float64{0, 0, 2, 2}, ys)

	// Unowned: 4 until 1 s, 2 until 2 s, 0 until 3 s, then 2; one mean a second.
	xs, ys = tracing.Series(sc, trace, "unowned_partitions", 6, -1)
	assert.Equal(t, []float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, xs)
	assert.Equal(t, []float64{4, 2, 0, 2, 2, 2}, ys)
	xs, ys = tracing.Series(sc, trace, "owned_partitions", 6, -1)
	assert.Equal(t, []float64{0, 2, 4, 2, 2, 2}, ys)

	// From the first fault at 2 s on: x is the time since, starting from
	// the value held at it.
	xs, ys = tracing.Series(sc, trace, "unowned_partitions", 6, 2)
	assert.Equal(t, []float64{0, 0.5, 1.5, 2.5, 3.5}, xs)
	assert.Equal(t, []float64{2, 0, 2, 2, 2}, ys)
}

// TestTimelineOf: the --timeline data of a short trace: member and
// coordinator states as spans (a pause in between, none after the crash),
// the fault and the classifier's eviction as marks, and only the first
// maxMembers members drawn.
func TestTimelineOf(t *testing.T) {
	sc := simtest.ParseSmall(t, "6s", 1, "")
	trace := []tracing.Event{
		ev(0, protocol.Event{Kind: tracing.EvProcess, Node: "g-0", Group: "g", State: "started", Process: protocol.ProcessStarted}),
		ev(1, protocol.Event{Kind: protocol.EvGroupState, Node: "broker-0", Group: "g", State: "Stable"}),
		ev(1, protocol.Event{Kind: protocol.EvMemberState, Node: "g-0", Group: "g", State: "STABLE"}),
		fault(ev(2, protocol.Event{Kind: tracing.EvFault, Node: "harness", Reason: "pause", Detail: "g-0"}), "g-0"),
		ev(2, protocol.Event{Kind: tracing.EvProcess, Node: "g-0", Group: "g", State: "paused", Process: protocol.ProcessPaused}),
		ev(3, protocol.Event{Kind: tracing.EvProcess, Node: "g-0", Group: "g", State: "resumed", Process: protocol.ProcessResumed}),
		ev(4, protocol.Event{Kind: tracing.EvProcess, Node: "g-0", Group: "g", State: "crashed", Process: protocol.ProcessCrashed}),
		ev(5, protocol.Event{Kind: protocol.EvMemberState, Node: "g-1", Group: "g", State: "STABLE"}),
	}
	obs := []tracing.Observation{{Kind: tracing.ObsEviction, At: trace[7].At, Member: "g-0"}, {Kind: tracing.ObsLeave, At: trace[7].At, Member: "g-0"}}
	tl := tracing.TimelineOf(sc, trace, obs, 6, 1)
	assert.Equal(t, []string{"coordinator (g)", "g-0"}, tl.Tracks)
	assert.Equal(t, 1, tl.Shown)
	assert.Equal(t, 2, tl.Total)
	assert.Equal(t, []tracing.Span{
		{Track: 0, Start: 1, End: 6, State: "Stable"},
		{Track: 1, Start: 0, End: 1, State: "UNJOINED"},
		{Track: 1, Start: 1, End: 2, State: "STABLE"},
		{Track: 1, Start: 2, End: 3, State: "PAUSED"},
		{Track: 1, Start: 3, End: 4, State: "STABLE"},
	}, tl.Spans)
	assert.Equal(t, []tracing.Mark{{Track: 1, At: 2, Kind: "fault"}, {Track: 1, At: 5, Kind: "eviction"}}, tl.Marks)
}
