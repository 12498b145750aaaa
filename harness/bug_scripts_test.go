package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestBugScripts runs the bug library's reproductions (scenario/builtin/bug-*.yaml,
// docs/BUGS.md) as the scripts of testdata/bugs: each runs the buggy
// built-in and its fixed variant — the same file with one `profile:` line
// changed, exactly as the file's header tells a user to do — for several
// seeds, and prints the figures and trace counts where the bug shows (the
// oracle that fires, the figure that moves) and where the fix removes it,
// side by side (go test -rewrite regenerates the output: review the diff).
// Commands:
//
//	bug name=N seeds=(1 2 3) fixed=(coordinator|client PROFILE) [control=(KIND ...)]
//	                      the bug's built-in; fixed: the section and profile of the fix;
//	                      control: a third variant, the buggy one without these fault kinds
//	figures variant=V     per seed: the summary's figures, the oracles' findings, violations
//	count variant=V [kinds=(k ...)] [nodes=(n ...)] [api=A] [reason=R] [detail=D] [err=E]
//	      [dir=request|response] [from=D] [to=D]
//	                      per seed: the matching events counted by what they say (node,
//	                      kind, state, reason, detail, api, err; a removed member by its
//	                      process), with the partitions they carry
//	timeline variant=V [kinds=(k ...)] [nodes=(n ...)] [from=D] [to=D]
//	                      per seed: the matching events, one a line
//	owners variant=V      per seed: each member's partitions at the end (its last assignment)
//	handovers variant=V victim=M
//	                      per seed: partitions given to another member while M held them
//	_breakpoint           nothing
//
// Runs are made once per variant and seed and shared by the commands.
func TestBugScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/bugs/*.txt", func(t *testing.T) datadriven.Handler {
		var bs *bugScript
		return func(c *datadriven.Case, b *strings.Builder) error {
			if c.Cmd == "bug" {
				bs = newBugScript(t, c)
				return nil
			}
			if bs == nil {
				return fmt.Errorf("before bug")
			}
			b.WriteString(bs.handle(t, c))
			return nil
		}
	})
}

// bugScript is one bug's variants and their runs.
type bugScript struct {
	seeds    []uint64
	variants map[string]*scenario.Scenario
	runs     map[string]bugRun // variant/seed
}

type bugRun struct {
	res      *Result
	findings []Finding
}

func newBugScript(t *testing.T, c *datadriven.Case) *bugScript {
	b := &bugScript{variants: map[string]*scenario.Scenario{}, runs: map[string]bugRun{}}
	var name string
	var fixed, control []string
	for _, a := range c.Args {
		switch a.Key {
		case "name":
			name = a.Vals[0]
		case "seeds":
			for _, v := range a.Vals {
				n, err := strconv.ParseUint(v, 10, 64)
				require.NoError(t, err, c.Pos)
				b.seeds = append(b.seeds, n)
			}
		case "fixed":
			fixed = a.Vals
		case "control":
			control = a.Vals
		default:
			t.Fatalf("%s: unknown argument %q", c.Pos, a.Key)
		}
	}
	require.NotEmpty(t, name, "%s: name=", c.Pos)
	require.NotEmpty(t, b.seeds, "%s: seeds=(...)", c.Pos)
	require.Len(t, fixed, 2, "%s: fixed=(coordinator|client PROFILE)", c.Pos)
	b.variants["buggy"] = load(t, name)
	b.variants["fixed"] = withProfile(t, name, fixed[0], fixed[1])
	if len(control) > 0 {
		ctl := load(t, name)
		n := len(ctl.Faults)
		ctl.Faults = slices.DeleteFunc(slices.Clone(ctl.Faults), func(f scenario.Fault) bool {
			return slices.Contains(control, string(f.Kind))
		})
		require.Less(t, len(ctl.Faults), n, "%s: control removes no fault", c.Pos)
		b.variants["control"] = ctl
	}
	return b
}

// run is the variant's run for seed, made on first use.
func (b *bugScript) run(t *testing.T, c *datadriven.Case, variant string, seed uint64) bugRun {
	key := variant + "/" + strconv.FormatUint(seed, 10)
	if r, ok := b.runs[key]; ok {
		return r
	}
	sc, ok := b.variants[variant]
	require.True(t, ok, "%s: no variant %q", c.Pos, variant)
	res, fs, err := RunOracles(sc, seed, Options{KeepTrace: true})
	require.NoError(t, err, c.Pos)
	b.runs[key] = bugRun{res: res, findings: fs}
	return b.runs[key]
}

func (b *bugScript) handle(t *testing.T, c *datadriven.Case) string {
	variant, ok := c.Arg("variant")
	require.True(t, ok, "%s: variant=", c.Pos)
	f := bugFilter{to: time.Duration(1 << 62)}
	var victim string
	for _, a := range c.Args {
		switch a.Key {
		case "variant":
		case "kinds":
			f.kinds = a.Vals
		case "nodes":
			f.nodes = a.Vals
		case "api", "reason", "detail", "err", "dir":
			f.fields = append(f.fields, [2]string{a.Key, a.Vals[0]})
		case "from", "to":
			d, err := time.ParseDuration(a.Vals[0])
			require.NoError(t, err, c.Pos)
			if a.Key == "from" {
				f.from = d
			} else {
				f.to = d
			}
		case "victim":
			victim = a.Vals[0]
		default:
			t.Fatalf("%s: unknown argument %q", c.Pos, a.Key)
		}
	}
	var out strings.Builder
	for _, seed := range b.seeds {
		r := b.run(t, c, variant, seed)
		fmt.Fprintf(&out, "seed %d:\n", seed)
		switch c.Cmd {
		case "figures":
			writeBugFigures(&out, r)
		case "count":
			writeCounts(&out, r.res.Trace, &f)
		case "timeline":
			for i := range r.res.Trace {
				if e := &r.res.Trace[i]; f.match(e) {
					out.WriteString("  ")
					writeTimelineEvent(&out, e)
				}
			}
		case "owners":
			own := finalOwnership(r.res.Trace)
			var names []string
			for m := range own {
				names = append(names, m)
			}
			slices.Sort(names)
			total := 0
			for _, m := range names {
				fmt.Fprintf(&out, "  %s (%s)\n", m, partitionList(own[m]))
				total += len(own[m])
			}
			fmt.Fprintf(&out, "  %d partitions owned\n", total)
		case "handovers":
			require.NotEmpty(t, victim, "%s: victim=", c.Pos)
			taken := takenWhileHeld(r.res.Trace, victim)
			if len(taken) == 0 {
				taken = []string{"none"}
			}
			fmt.Fprintf(&out, "  %s\n", strings.Join(taken, " "))
		default:
			t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		}
	}
	return out.String()
}

// writeBugFigures prints the figures of one run a bug moves.
func writeBugFigures(b *strings.Builder, r bugRun) {
	for _, g := range r.res.Summary.Groups {
		fmt.Fprintf(b, "  final generation %d, stable at end %t, rebalances %d\n", g.FinalGeneration, g.StableAtEnd, g.RebalanceCount)
		fmt.Fprintf(b, "  evictions %d (false %d), coordinator-dead marks %d (false %d)\n", g.Evictions, g.FalseEvictions, g.CoordinatorDeadMarks, g.FalseCoordinatorDeadMarks)
		fmt.Fprintf(b, "  unowned %g partition-s, double-owned %g partition-s\n", g.UnownedPartitionSeconds, g.DoubleOwnedPartitionSeconds)
		for _, e := range g.FatalErrors {
			fmt.Fprintf(b, "  fatal %s\n", e)
		}
	}
	for _, f := range r.findings {
		fmt.Fprintf(b, "  oracle %s\n", f)
	}
	for _, v := range r.res.Summary.InvariantViolations {
		fmt.Fprintf(b, "  violation %s at %dms: %s\n", v.Checker, v.AtMs, v.Message)
	}
}

// bugFilter selects trace events for count and timeline.
type bugFilter struct {
	kinds, nodes []string
	fields       [][2]string // api, reason, detail, err, dir
	from, to     time.Duration
}

func (f *bugFilter) match(e *TraceEvent) bool {
	at := e.At.Duration()
	if at < f.from || at >= f.to || (len(f.kinds) > 0 && !slices.Contains(f.kinds, string(e.Kind))) ||
		(len(f.nodes) > 0 && !slices.Contains(f.nodes, e.Node)) {
		return false
	}
	for _, kv := range f.fields {
		if traceField(e, kv[0]) != kv[1] {
			return false
		}
	}
	return true
}

// writeCounts prints the matching events counted by what they say: node,
// kind, state, reason, detail, api, direction and error (a removed member
// named by the process that joined under its id), in order of first
// occurrence, with the partitions they carry.
func writeCounts(b *strings.Builder, trace []TraceEvent, f *bugFilter) {
	owner := memberOwner(trace)
	type tally struct{ n, parts int }
	var keys []string
	counts := map[string]*tally{}
	for i := range trace {
		e := &trace[i]
		if !f.match(e) {
			continue
		}
		var k strings.Builder
		fmt.Fprintf(&k, "%s %s", e.Node, e.Kind)
		if e.Kind == protocol.EvMemberRemoved {
			fmt.Fprintf(&k, " of=%s", owner[e.Peer])
		}
		for _, kv := range [][2]string{{"state", e.State}, {"reason", e.Reason}, {"detail", e.Detail}} {
			if kv[1] != "" {
				fmt.Fprintf(&k, " %s=%q", kv[0], kv[1])
			}
		}
		if e.API != 0 {
			fmt.Fprintf(&k, " api=%s", e.API)
		}
		if e.Req {
			k.WriteString(" request")
		}
		if e.Err != protocol.None {
			fmt.Fprintf(&k, " err=%s", e.Err)
		}
		key := k.String()
		c, ok := counts[key]
		if !ok {
			c = &tally{}
			counts[key] = c
			keys = append(keys, key)
		}
		c.n++
		c.parts += len(e.Partitions)
	}
	if len(keys) == 0 {
		b.WriteString("  none\n")
	}
	for _, k := range keys {
		fmt.Fprintf(b, "  %d × %s", counts[k].n, k)
		if p := counts[k].parts; p > 0 {
			fmt.Fprintf(b, " (%d partitions)", p)
		}
		b.WriteString("\n")
	}
}
