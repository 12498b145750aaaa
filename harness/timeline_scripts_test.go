package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestTimelineScripts runs the end-to-end timelines of testdata/timelines:
// each file holds scenarios (YAML, as a user writes them) and the expected
// timeline of each, read off the trace, for several seeds, so a timeline
// must hold whatever the seed's latency jitter and tie-breaks (go test
// -rewrite regenerates the expected output: review the diff). Commands:
//
//	scenario                  the input is a scenario file; the following commands run it
//	timeline seeds=(1 2) [kinds=(k1 k2)] [nodes=(n1 n2)] [from=D] [to=D]
//	                          the trace's events of those kinds and nodes in [from, to)
//	summary seeds=(1 2)       per seed: rebalance triggers, evictions, false evictions,
//	                          whether the group is Stable at the end
//	_breakpoint               nothing (set a debugger breakpoint here)
func TestTimelineScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/timelines/*.txt", func(t *testing.T) datadriven.Handler {
		var sc *scenario.Scenario
		return func(c *datadriven.Case, b *strings.Builder) error {
			switch c.Cmd {
			case "scenario":
				sc = simtest.Parse(t, c.Input)
				return nil
			case "timeline", "summary":
				if sc == nil {
					return fmt.Errorf("before scenario")
				}
				b.WriteString(scriptRuns(t, sc, c))
				return nil
			}
			return fmt.Errorf("unknown command")
		}
	})
}

func scriptRuns(t *testing.T, sc *scenario.Scenario, c *datadriven.Case) string {
	var seeds []uint64
	var kinds, nodes []string
	from, to := time.Duration(0), time.Duration(1<<62)
	for _, a := range c.Args {
		switch a.Key {
		case "seeds":
			for _, v := range a.Vals {
				n, err := strconv.ParseUint(v, 10, 64)
				require.NoError(t, err, c.Pos)
				seeds = append(seeds, n)
			}
		case "kinds":
			kinds = a.Vals
		case "nodes":
			nodes = a.Vals
		case "from", "to":
			d, err := time.ParseDuration(a.Vals[0])
			require.NoError(t, err, c.Pos)
			if a.Key == "from" {
				from = d
			} else {
				to = d
			}
		default:
			t.Fatalf("%s: unknown argument %q", c.Pos, a.Key)
		}
	}
	require.NotEmpty(t, seeds, "%s: seeds=(...)", c.Pos)
	var b strings.Builder
	for _, seed := range seeds {
		res := run(t, sc, seed, Options{KeepTrace: c.Cmd == "timeline"})
		fmt.Fprintf(&b, "seed %d:\n", seed)
		if c.Cmd == "summary" {
			g := res.Summary.Groups[0]
			var trig []string
			for _, r := range g.Rebalances {
				trig = append(trig, r.Trigger)
			}
			fmt.Fprintf(&b, "  rebalances: %s\n  evictions: %d (false %d)\n  stable at end: %t\n", strings.Join(trig, " "), g.Evictions, g.FalseEvictions, g.StableAtEnd)
			continue
		}
		for i := range res.Trace {
			e := &res.Trace[i]
			at := time.Duration(e.At)
			if at < from || at >= to || (len(kinds) > 0 && !slices.Contains(kinds, string(e.Kind))) ||
				(len(nodes) > 0 && !slices.Contains(nodes, e.Node)) {
				continue
			}
			b.WriteString("  ")
			writeTimelineEvent(&b, e)
		}
	}
	return b.String()
}

// writeTimelineEvent prints one trace event on one line: time, node, kind,
// then the non-empty fields (the JSON trace's, docs/TRACE.md).
func writeTimelineEvent(b *strings.Builder, e *TraceEvent) {
	fmt.Fprintf(b, "%s %s %s", e.At, e.Node, e.Kind)
	for _, kv := range [][2]string{{"peer", e.Peer}, {"state", e.State}, {"reason", e.Reason}, {"detail", e.Detail}} {
		if kv[1] != "" {
			fmt.Fprintf(b, " %s=%q", kv[0], kv[1])
		}
	}
	if e.API != 0 || tracing.IsMessageEvent(e.Kind) {
		fmt.Fprintf(b, " api=%s", e.API)
		if e.Req {
			b.WriteString(" request")
		} else if tracing.IsMessageEvent(e.Kind) {
			b.WriteString(" response")
		}
	}
	if e.Err != protocol.None {
		fmt.Fprintf(b, " err=%s", e.Err)
	}
	if e.Gen != 0 {
		fmt.Fprintf(b, " gen=%d", e.Gen)
	}
	if e.Count != 0 {
		fmt.Fprintf(b, " count=%d", e.Count)
	}
	b.WriteString("\n")
}
