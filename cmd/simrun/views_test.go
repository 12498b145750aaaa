package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/scenario"
)

// viewCounts is what one view of a run says about its evictions (and how
// many were false), coordinator-dead marks, leaves and fences.
type viewCounts struct {
	Evictions, FalseEvictions, DeadMarks, FalseDeadMarks, Leaves, Fences int
}

// TestViewsAgree: every view gives one account of a run. For every built-in
// scenario and for a swarm scenario over many seeds, the JSON summary, the
// human timeline, simrun explain, Perfetto and the drawn --timeline all give
// the same counts, because they all read the classifier's observations.
func TestViewsAgree(t *testing.T) {
	type runCase struct {
		name string
		sc   *scenario.Scenario
		seed uint64
	}
	var cases []runCase
	for _, name := range scenario.BuiltinNames() {
		data, _ := scenario.Builtin(name)
		sc, err := scenario.Parse("builtin:"+name, data)
		require.NoError(t, err)
		cases = append(cases, runCase{name, sc, sc.Seed})
	}
	swarm, err := scenario.Parse("swarm.yaml", []byte(swarmScenario))
	require.NoError(t, err)
	slow, err := scenario.Parse("slow.yaml", []byte(simtest.SlowPoll))
	require.NoError(t, err)
	cases = append(cases, runCase{"slow-poll", slow, 1})
	for seed := uint64(1); seed <= 12; seed++ {
		cases = append(cases, runCase{fmt.Sprintf("swarm/seed-%d", seed), swarm, seed})
	}
	var total viewCounts
	pollTimeouts := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := harness.Run(c.sc, c.seed, harness.Options{KeepTrace: true})
			require.NoError(t, err)
			want := summaryCounts(&res.Summary)
			obs := tracing.CountObservations(res.Observations, "")
			assert.Equal(t, want, viewCounts{obs.Evictions, obs.FalseEvictions, obs.DeadMarks, obs.FalseDeadMarks, obs.Leaves, obs.Fences}, "observations")
			assert.Equal(t, want, humanCounts(c.sc, res), "human timeline")
			assert.Equal(t, want, perfettoCounts(t, res), "perfetto")
			ex := tracing.Explain(c.sc, res.Trace, res.Observations, "")
			var exv viewCounts
			for _, x := range ex {
				if x.Kind == "eviction" {
					exv.Evictions++
					if x.False {
						exv.FalseEvictions++
					}
				} else {
					exv.DeadMarks++
					if x.False {
						exv.FalseDeadMarks++
					}
				}
			}
			assert.Equal(t, [4]int{want.Evictions, want.FalseEvictions, want.DeadMarks, want.FalseDeadMarks},
				[4]int{exv.Evictions, exv.FalseEvictions, exv.DeadMarks, exv.FalseDeadMarks}, "explain")
			_, _, marks, shown, members := timelineOf(c.sc, res)
			if shown == members { // every member drawn: every mark drawn
				var ev, dead int
				for _, m := range marks {
					switch m.Kind {
					case "eviction":
						ev++
					case "coordinator-dead":
						dead++
					}
				}
				assert.Equal(t, [2]int{want.Evictions, want.DeadMarks}, [2]int{ev, dead}, "--timeline marks")
			}
			for _, o := range res.Observations {
				if o.Kind == tracing.ObsEviction && o.Cause() == "poll-timeout" {
					pollTimeouts++
				}
			}
			total.Evictions += want.Evictions
			total.FalseEvictions += want.FalseEvictions
			total.DeadMarks += want.DeadMarks
			total.Fences += want.Fences
			total.Leaves += want.Leaves
		})
	}
	// The cases cover every kind, so agreement is not agreement on zero.
	assert.Positive(t, total.Evictions)
	assert.Positive(t, total.FalseEvictions)
	assert.Positive(t, total.DeadMarks)
	assert.Positive(t, total.Fences)
	assert.Positive(t, total.Leaves)
	assert.Positive(t, pollTimeouts, "a poll-timeout leave is an eviction in every view")
}

const swarmScenario = `
name: swarm-views
duration: 240s
coordinator: {brokers: 3, profile: kafka-3.x}
network: {latency: {dist: uniform, min: 1ms, max: 5ms}}
topics: [{name: t, partitions: 12}]
groups:
  - id: g
    members: 5
    subscribe: [t]
    client: {profile: kafka-3.x, session.timeout.ms: 10000, heartbeat.interval.ms: 3000}
    workload: {poll.interval: 200ms, poll.timeout: 500ms}
swarm:
  until: 200s
  crash: 0.5
  crash.downtime: 5s
  pause: 1
  pause.for: {dist: uniform, min: 100ms, max: 15s}
  loss: 0.5
  loss.probability: 0.2
  loss.for: 5s
  coordinator-failover: 0.3
`

func summaryCounts(s *harness.Summary) viewCounts {
	var v viewCounts
	for _, g := range s.Groups {
		v.Evictions += g.Evictions
		v.FalseEvictions += g.FalseEvictions
		v.DeadMarks += g.CoordinatorDeadMarks
		v.FalseDeadMarks += g.FalseCoordinatorDeadMarks
		v.Leaves += g.Leaves
		v.Fences += g.Fences
	}
	return v
}

// humanCounts counts the lines of `simrun run`'s timeline by kind, and
// checks the printed summary lines say the same.
func humanCounts(sc *scenario.Scenario, res *harness.Result) viewCounts {
	var v viewCounts
	for _, g := range res.Summary.Groups {
		for _, it := range timelineItems(g.ID, res.Observations, nil) {
			switch it.kind {
			case "eviction":
				v.Evictions++
				if strings.Contains(it.text, "(FALSE,") {
					v.FalseEvictions++
				}
			case "coordinator-dead":
				v.DeadMarks++
				if strings.HasSuffix(it.text, ", FALSE)") {
					v.FalseDeadMarks++
				}
			case "leave":
				v.Leaves++
			case "fence":
				v.Fences++
			}
		}
	}
	return v
}

func perfettoCounts(t *testing.T, res *harness.Result) viewCounts {
	var buf bytes.Buffer
	require.NoError(t, tracing.WritePerfetto(&buf, res.Trace, res.Observations))
	var doc struct {
		TraceEvents []struct {
			Cat  string            `json:"cat"`
			Args map[string]string `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	var v viewCounts
	for _, e := range doc.TraceEvents {
		switch e.Cat {
		case "eviction":
			v.Evictions++
			if e.Args["verdict"] == "false" {
				v.FalseEvictions++
			}
		case "coordinator-dead":
			v.DeadMarks++
			if e.Args["verdict"] == "false" {
				v.FalseDeadMarks++
			}
		case "leave":
			v.Leaves++
		case "fence":
			v.Fences++
		}
	}
	return v
}
