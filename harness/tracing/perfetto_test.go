package tracing_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestPerfettoWellFormed: the Perfetto JSON parses; every member-state
// change is a slice (B) on the member's track; B/E nest per track with
// non-decreasing time; every flow start has exactly one finish.
func TestPerfettoWellFormed(t *testing.T) {
	sc := simtest.ParseSmall(t, "400s", 3, simtest.AllFaults)
	res := run(t, sc, 11)
	var buf bytes.Buffer
	require.NoError(t, tracing.WritePerfetto(&buf, res.Trace, res.Observations))
	var doc struct {
		TraceEvents []struct {
			Ph   string  `json:"ph"`
			Pid  int     `json:"pid"`
			Tid  int     `json:"tid"`
			Ts   float64 `json:"ts"`
			Name string  `json:"name"`
			Cat  string  `json:"cat"`
			ID   uint64  `json:"id"`
			Args struct {
				Name string `json:"name"`
			} `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	type track struct{ pid, tid int }
	names := map[track]string{}
	depth := map[track]int{}
	last := map[track]float64{}
	flows := map[uint64][2]int{}
	stateSlices := map[string]int{}
	for _, e := range doc.TraceEvents {
		k := track{e.Pid, e.Tid}
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				names[k] = e.Args.Name
			}
		case "B", "E":
			require.GreaterOrEqual(t, e.Ts, last[k], "time goes forward on track %v", k)
			last[k] = e.Ts
			if e.Ph == "B" {
				depth[k]++
				require.Equal(t, 1, depth[k], "one state slice at a time on %v", k)
				if e.Cat == "member-state" && e.Args.Name == "" {
					stateSlices[names[k]]++
				}
			} else {
				depth[k]--
				require.Zero(t, depth[k], "E without B on %v", k)
			}
		case "s":
			f := flows[e.ID]
			f[0]++
			flows[e.ID] = f
		case "f":
			f := flows[e.ID]
			f[1]++
			flows[e.ID] = f
		}
	}
	for k, d := range depth {
		assert.Zero(t, d, "every B has its E on %v", k)
	}
	for id, f := range flows {
		assert.Equal(t, [2]int{1, 1}, f, "flow %d pairs up", id)
	}
	assert.NotEmpty(t, flows)
	// One slice per member-state change, plus one UNJOINED slice per start.
	for _, n := range []string{"g-0", "g-1", "g-2"} {
		changes := len(simtest.Find(res.Trace, simtest.KindOf(protocol.EvMemberState, n)))
		starts := len(simtest.Find(res.Trace, func(e *tracing.Event) bool { return e.Kind == tracing.EvProcess && e.Node == n && e.State == "started" }))
		require.Positive(t, changes)
		assert.Equal(t, changes+starts, stateSlices[n], "slices on %s", n)
	}
}
