package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() { register(newRunCmd) }

func newRunCmd(a *app) *cobra.Command {
	var (
		seed                      uint64
		asJSON                    bool
		trace, perfetto, timeline string
		failOnSpec                string
		maxEvents                 int64
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "run one scenario (a file or a built-in name) for one seed",
		Long: `Run one scenario for one seed and print what happened: a table and a
timeline per group, or with --json the summary of INTERFACE.md. SCENARIO is
a scenario file or a built-in name (simrun list).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.Uint64Var(&seed, "seed", 0, "seed `N` (default: the scenario's seed)")
	sets := addSetFlag(fs)
	fs.BoolVar(&asJSON, "json", false, "print the JSON summary (with the effective configuration) on stdout")
	fs.StringVar(&trace, "trace", "", "write the trace as JSON lines to `FILE.jsonl`")
	fs.StringVar(&perfetto, "perfetto", "", "write the trace in Chrome trace-event format to `FILE.json` (opens in ui.perfetto.dev)")
	fs.StringVar(&timeline, "timeline", "", "draw the run's timeline (member and coordinator states, evictions, dead marks, faults) to `FILE.png` or .svg")
	var names []string
	for _, f := range failOnConditions {
		names = append(names, f.name)
	}
	fs.StringVar(&failOnSpec, "fail-on", "", "exit 4 when any of these comma-separated `CONDITIONS` held in the run: "+strings.Join(names, ", "))
	oracleSpec := addOraclesFlag(fs)
	fs.Int64Var(&maxEvents, "max-events", harness.DefaultMaxEvents, "stop (or refuse before it starts) a run of more than `N` events")
	maxMemory := addMaxMemory(fs)
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := distinctOutputs(args[0], map[string]string{"--trace": trace, "--perfetto": perfetto, "--timeline": timeline}); err != nil {
			return fail(exitBadInput, "simrun run: %v", err)
		}
		if maxEvents <= 0 {
			return fail(exitBadInput, "simrun run: --max-events %d: want a positive number of events (the default is %d)", maxEvents, harness.DefaultMaxEvents)
		}
		a.maxMemory = int64(*maxMemory)
		conds, err := parseFailOn(failOnSpec)
		if err != nil {
			return fail(exitBadInput, "simrun run: %v", err)
		}
		return a.run(cmd, args[0], seed, sets, asJSON, trace, perfetto, timeline, conds, *oracleSpec, maxEvents)
	}
	return cmd
}

func (a *app) run(cmd *cobra.Command, path string, seed uint64, sets *setFlags, asJSON bool, trace, perfetto, timeline string, conds []string, oracleSpec string, maxEvents int64) error {
	stdout, stderr := a.stdout, a.stderr
	sc, _, _, err := loadScenario(path, sets)
	if err != nil {
		return fail(exitBadInput, "%v", err)
	}
	oracles, err := resolveOracles(oracleSpec, sc, conds)
	if err != nil {
		return fail(exitBadInput, "simrun run: %v", err)
	}
	printNotes(stderr, sc)
	s := seedOr(cmd, seed, sc.Seed)
	a.running = fmt.Sprintf("simrun run %s --seed %d%s", path, s, setsText(sets))
	opts := harness.Options{MaxEvents: maxEvents, MaxMemory: a.maxMemory}
	var tf *atomicfile.File
	var tw *bufio.Writer
	if trace != "" {
		tf, err = atomicfile.Create(trace)
		if err != nil {
			return fail(exitBadInput, "simrun: %v", err)
		}
		defer tf.Abort() // no-op once committed
		tw = bufio.NewWriterSize(tf, 1<<20)
		opts.TraceJSONL = tw
	}
	opts.KeepTrace = perfetto != "" || timeline != ""
	var tl *timelineCollector
	if !asJSON {
		// The timeline of the human output keeps only the few events it
		// shows, picked from the trace as it is recorded.
		tl = &timelineCollector{}
		opts.Observe = tl.observe
	}
	var res *harness.Result
	var vs []oracleVerdict
	if len(oracles) > 0 {
		var fs []harness.Finding
		res, fs, err = harness.RunOracles(judgedBy(sc, oracles), s, opts)
		vs = verdicts(oracles, fs)
	} else {
		res, err = harness.Run(sc, s, opts)
	}
	if err != nil {
		return fail(exitBadInput, "simrun: %v", err)
	}
	if tf != nil {
		err := tw.Flush()
		if err == nil {
			err = tf.Commit()
		}
		if err != nil {
			return fail(exitBadInput, "simrun: writing trace: %v", err)
		}
	}
	if perfetto != "" {
		if err := tracing.WritePerfettoFile(perfetto, res.Trace, res.Observations); err != nil {
			return fail(exitBadInput, "simrun: writing perfetto trace: %v", err)
		}
	}
	if timeline != "" {
		if err := writeTimeline(timeline, sc, res); err != nil {
			return fail(exitBadInput, "simrun: writing timeline: %v", err)
		}
	}
	if asJSON {
		out := runJSON{Summary: res.Summary, Config: experiments.EffectiveConfig(sc), Oracles: vs}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(exitBadInput, "simrun: writing JSON: %v", err)
		}
	} else {
		printHuman(stdout, &res.Summary, res.Observations, tl)
		printVerdicts(stdout, vs)
	}
	if !res.Summary.Valid {
		fmt.Fprintf(stderr, "warning: this run is INVALID as a measurement: %s\n", res.Summary.InvalidReason)
	}
	held := failOn(conds, &res.Summary, vs)
	if len(res.Summary.InvariantViolations) > 0 {
		for _, h := range held {
			fmt.Fprintln(stderr, "fail-on:", h)
		}
		v := res.Summary.InvariantViolations[0]
		fmt.Fprintf(stderr, "invariant violated (%s) at %d ms, seed %d: %s\n", v.Checker, v.AtMs, s, v.Message)
		if v.Event != "" {
			fmt.Fprintf(stderr, "first violating event: %s\n", v.Event)
		}
		fmt.Fprintf(stderr, "reproduce with: simrun run %s --seed %d%s\n", path, s, setsText(sets))
		return status(exitViolation)
	}
	if fired := firedOracles(vs); len(fired) > 0 {
		fmt.Fprintf(stderr, "oracle fired (%s), seed %d; reproduce with: simrun run %s --seed %d%s --oracles %s\n",
			strings.Join(fired, ", "), s, path, s, setsText(sets), strings.Join(fired, ","))
	}
	if len(held) > 0 {
		for _, h := range held {
			fmt.Fprintln(stderr, "fail-on:", h)
		}
		return status(exitFailOn)
	}
	return nil
}

// runJSON is `simrun run --json`: the summary of INTERFACE.md with the
// effective configuration (every profile default filled in) beside it.
type runJSON struct {
	harness.Summary
	Config experiments.Config `json:"effective_config"`
	// Oracles: each judged oracle's verdict (--oracles, or the scenario's
	// oracles: block); absent when the run was judged by none.
	Oracles []oracleVerdict `json:"oracles,omitempty"`
}

// setsText renders --set overrides for a reproduce line.
func setsText(sets *setFlags) string {
	if sets == nil {
		return ""
	}
	var b strings.Builder
	for _, o := range *sets {
		v, _ := json.Marshal(o.Value)
		fmt.Fprintf(&b, " --set %s", shellQuote(o.Path+"="+strings.Trim(string(v), `"`)))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printNotes prints the scenario's parse notes (a Kafka version resolved
// to its profile era) and warnings (a fault after the end of the run) on
// stderr.
func printNotes(w io.Writer, sc *scenario.Scenario) {
	for _, n := range sc.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, n := range sc.Warnings { // valid input that does nothing
		fmt.Fprintln(w, "warning:", n)
	}
}

func printHuman(w io.Writer, s *harness.Summary, obs []harness.Observation, tl *timelineCollector) {
	fmt.Fprintf(w, "scenario %s, seed %d: %.1f s simulated, %d trace events\n", s.Scenario, s.Seed, float64(s.SimulatedMs)/1000, s.Events)
	if !s.Valid {
		fmt.Fprintf(w, "INVALID RUN: %s\n", s.InvalidReason)
	}
	for _, p := range s.FaultPhaseWindows {
		fmt.Fprintf(w, "fault phases drawn %s\n", p)
	}
	if s.MeasureFromMs > 0 {
		fmt.Fprintf(w, "figures count from %.1f s on (measure.from); the timeline shows the whole run\n", float64(s.MeasureFromMs)/1000)
	}
	for _, g := range s.Groups {
		g.FillRates()
		fmt.Fprintf(w, "\ngroup %s\n", g.ID)
		spanned := 0
		for _, r := range g.Rebalances {
			spanned += r.Generations
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  settle episodes\t%d\t(from leaving Stable to every member Stable; spanning %s; duration p50 %s, p99 %s, max %s)\n",
			g.SettleEpisodes, plural(spanned, "generation"), humanMs(g.RebalanceDurationMs.P50), humanMs(g.RebalanceDurationMs.P99), humanMs(g.RebalanceDurationMs.Max))
		fmt.Fprintf(tw, "  generations\t%d\t(coordinator generation bumps; final generation %d, stable at end: %v)\n", g.Generations, g.FinalGeneration, g.StableAtEnd)
		fmt.Fprintf(tw, "  client rebalances\t%d\t(completed rebalances summed over members: the clients' rebalance-total)\n", g.ClientRebalances)
		fmt.Fprintf(tw, "  coordinator-dead marks\t%d\t(%d false; %.3g false per member-hour)\n", g.CoordinatorDeadMarks, g.FalseCoordinatorDeadMarks, g.FalseCoordinatorDeadMarksPerMemberHour)
		fmt.Fprintf(tw, "  evictions\t%d\t(%d false; %.3g false per member-hour%s)\n", g.Evictions, g.FalseEvictions, g.FalseEvictionsPerMemberHour, causesOf(obs, g.ID))
		fmt.Fprintf(tw, "  leaves, fences\t%d, %d\t(LeaveGroup on close; static members replaced by a new process)\n", g.Leaves, g.Fences)
		fmt.Fprintf(tw, "  unowned partition-seconds\t%.1f\t\n", g.UnownedPartitionSeconds)
		fmt.Fprintf(tw, "  double-owned partition-seconds\t%.1f\t\n", g.DoubleOwnedPartitionSeconds)
		fmt.Fprintf(tw, "  member-hours\t%.3f\t\n", g.MemberHours)
		for _, f := range g.FatalErrors {
			fmt.Fprintf(tw, "  fatal\t%s\t\n", f)
		}
		tw.Flush()
		items := timelineItems(g.ID, obs, tl)
		if len(items) > 0 {
			fmt.Fprintln(w, "\n  timeline")
			for i, it := range items {
				if i == maxTimeline {
					fmt.Fprintf(w, "  … %d more events (see --trace)\n", len(items)-i)
					break
				}
				fmt.Fprintf(w, "  %10.3f s  %s\n", it.atMs/1000, it.text)
			}
		}
	}
	if len(s.InvariantViolations) == 0 {
		fmt.Fprintln(w, "\ninvariants: all held")
	} else {
		fmt.Fprintf(w, "\ninvariants: %d violated\n", len(s.InvariantViolations))
		for _, v := range s.InvariantViolations {
			fmt.Fprintf(w, "  %d ms %s: %s\n", v.AtMs, v.Checker, v.Message)
			if v.Event != "" {
				fmt.Fprintf(w, "      event: %s\n", v.Event)
			}
		}
	}
	if !s.Valid {
		fmt.Fprintf(w, "validity: INVALID (%s)\n", s.InvalidReason)
	}
	fmt.Fprintf(w, "trace sha256 %s\n", s.TraceSHA256)
}

// plural writes "1 generation", "3 generations".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// humanMs writes a duration in milliseconds, in seconds from 1,000 ms on.
func humanMs(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// causesOf lists the group's evictions by cause ("; 2 session-expired, 1
// poll-timeout").
func causesOf(obs []harness.Observation, group string) string {
	var names []string
	n := map[string]int{}
	for i := range obs {
		if o := &obs[i]; o.Kind == tracing.ObsEviction && o.Group == group {
			c := o.Cause()
			if n[c] == 0 {
				names = append(names, c)
			}
			n[c]++
		}
	}
	var b strings.Builder
	for i, c := range names {
		if i == 0 {
			b.WriteString("; ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", n[c], c)
	}
	return b.String()
}

// timelineItems is the human timeline of one group: its settle episodes,
// evictions, leaves, fences and dead marks from the run's observations, and
// the faults, process ends and coordinator moves the collector kept.
func timelineItems(group string, obs []harness.Observation, tl *timelineCollector) []timelineItem {
	var items []timelineItem
	for i := range obs {
		o := &obs[i]
		if o.Group != group {
			continue
		}
		who := o.Member
		if o.MemberID != "" {
			if who == "" {
				who = "member"
			}
			who += " (" + o.MemberID + ")"
		}
		verdict := "true"
		if o.False {
			verdict = "FALSE"
		}
		var text string
		at := float64(o.At) / 1e6
		switch o.Kind {
		case tracing.ObsSettle:
			r := o.Episode
			at = float64(r.StartMs)
			text = fmt.Sprintf("settle episode (%s): generations %d..%d (%d), %d members, %s, ends %.3f s",
				r.Trigger, r.FirstGeneration, r.Generation, r.Generations, r.Members, humanMs(float64(r.DurationMs)), float64(r.EndMs)/1000)
			if r.Incomplete {
				text = fmt.Sprintf("settle episode (%s) still in progress at the end of the run (generations %d..%d, %d members, %s so far)",
					r.Trigger, r.FirstGeneration, r.Generation, r.Members, humanMs(float64(r.DurationMs)))
			}
		case tracing.ObsEviction:
			text = fmt.Sprintf("EVICTION (%s, %s): %s removed", verdict, o.Cause(), who)
		case tracing.ObsLeave:
			text = who + " left the group (LeaveGroup: " + o.Leave.String() + ")"
		case tracing.ObsFence:
			text = who + " fenced: its static member id was replaced by a new process"
		case tracing.ObsDeadMark:
			text = fmt.Sprintf("%s marks coordinator dead (%s, %s)", o.Member, o.Cause(), verdict)
		default:
			continue
		}
		items = append(items, timelineItem{atMs: at, group: group, text: text, kind: o.Kind.String()})
	}
	if tl != nil {
		items = append(items, tl.itemsFor(group)...)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].atMs < items[j].atMs })
	return items
}

// timelineItem is one line of the human timeline.
type timelineItem struct {
	atMs  float64
	group string // "" for faults (shown in every group)
	text  string
	kind  string // the observation kind ("eviction", ...), "" for the collector's items
}

// maxTimeline bounds the events the human timeline keeps.
const maxTimeline = 400

// timelineCollector keeps the faults, process ends and coordinator moves of
// a run for the human timeline (what the run did to the group; what the
// group made of it comes from the observations).
type timelineCollector struct {
	items   []timelineItem
	dropped int
	ended   map[string]bool // members whose process ended
}

func (tl *timelineCollector) observe(e *harness.TraceEvent) {
	var text string
	switch e.Kind {
	case tracing.EvFault:
		text = "fault " + e.Reason + " " + e.Detail
	case tracing.EvFaultEnd:
		text = "fault ends: " + e.Reason + " " + e.Detail
	case tracing.EvBrokerRole:
		text = "coordinator moved " + e.Peer + " → " + e.Node
	case tracing.EvProcess:
		// Initial starts are noise; a start after a crash or close is news.
		if e.Process == protocol.ProcessStarted && !tl.ended[e.Node] {
			return
		}
		if e.Process.Ended() {
			if tl.ended == nil {
				tl.ended = map[string]bool{}
			}
			tl.ended[e.Node] = true
		}
		text = "process " + e.Node + " " + e.State
	case protocol.EvPollTimeout:
		text = e.Node + " poll timeout (max.poll.interval.ms)"
	case protocol.EvFatal:
		text = e.Node + " fatal error"
	default:
		return
	}
	if len(tl.items) >= maxTimeline {
		tl.dropped++
		return
	}
	tl.items = append(tl.items, timelineItem{atMs: float64(e.At) / 1e6, group: e.Group, text: text})
}

// itemsFor returns the kept items of one group, plus the group-less ones
// (faults).
func (tl *timelineCollector) itemsFor(group string) []timelineItem {
	var out []timelineItem
	for _, it := range tl.items {
		if it.group == "" || it.group == group {
			out = append(out, it)
		}
	}
	return out
}
