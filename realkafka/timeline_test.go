package realkafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimelineOnTheWallClock: each action runs within a few ms of t0 + At,
// in order, and the run lasts until t0 + end (docs/real-kafka-testbed.md
// §6.3: "every action is logged … with ts_ms before and after").
func TestTimelineOnTheWallClock(t *testing.T) {
	acts := []Action{
		{At: 20 * time.Millisecond, Kind: "kill", Target: "g-0"},
		{At: 20 * time.Millisecond, Kind: "start", Target: "g-1"},
		{At: 75 * time.Millisecond, Kind: "stop", Target: "g-2"},
		{At: 160 * time.Millisecond, Kind: "cont", Target: "g-2"},
	}
	var got []Record
	var ran []time.Time
	t0 := time.Now().Add(10 * time.Millisecond)
	err := RunTimeline(context.Background(), t0, 250*time.Millisecond, acts,
		func(a Action) (int, string, error) { ran = append(ran, time.Now()); return 7, "", nil },
		func(r Record) { got = append(got, r) })
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(t0), 250*time.Millisecond, "the timeline waits for its end")
	require.Len(t, got, len(acts))
	// Timer wake-up on a loaded 2-core machine: 1–3 ms idle, up to ≈25 ms
	// measured while 16 JVMs start beside it; real runs record their own
	// lateness (timeline_late_ms).
	const slack = 40 * time.Millisecond
	for i, a := range acts {
		late := ran[i].Sub(t0.Add(a.At))
		require.GreaterOrEqual(t, late, time.Duration(0), "action %d ran early", i)
		require.Less(t, late, slack, "action %d (%s) ran %v late", i, a.Kind, late)
		require.Equal(t, a.At.Milliseconds(), got[i].AtMs)
		require.Equal(t, a.Kind, got[i].Kind)
		require.Equal(t, 7, got[i].Pid)
		require.LessOrEqual(t, got[i].TsMs, got[i].DoneMs)
		require.InDelta(t, t0.Add(a.At).UnixMilli(), got[i].TsMs, float64(slack.Milliseconds()))
	}
}

// TestTimelineStopsOnCancel: Ctrl-C (a cancelled context) ends the
// timeline before its next action.
func TestTimelineStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	err := RunTimeline(ctx, time.Now(), 10*time.Second, []Action{{At: 5 * time.Millisecond, Kind: "kill"}, {At: 5 * time.Second, Kind: "kill"}},
		func(Action) (int, string, error) { n++; return 0, "", nil }, func(Record) {})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, n)
}
