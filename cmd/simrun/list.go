package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() { register(newListCmd) }

// builtinExperiments is filled by the experiments commands when present.
var builtinExperiments func() []string

func newListCmd(a *app) *cobra.Command {
	var long bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list the built-in scenarios and experiments, each with its one-line description",
		Long: `List the built-in scenarios (simrun run NAME) and experiments (simrun sweep
NAME), each with its one-line description; --long adds each one's question
and its knobs (the settings worth changing with --set or sweeping).`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&long, "long", false, "print each built-in's question and knobs too")
	synopsis(cmd, "")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		listBuiltins(a.stdout, long)
		return nil
	}
	return cmd
}

func listBuiltins(w io.Writer, long bool) {
	fmt.Fprintln(w, "Built-in scenarios (simrun run NAME):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range scenario.BuiltinNames() {
		data, _ := scenario.Builtin(n)
		text := leadingComment(data, n)
		if !long {
			fmt.Fprintf(tw, "  %s\t%s\n", n, firstSentence(text))
			continue
		}
		tw.Flush()
		fmt.Fprintf(w, "\n  %s\n", n)
		fmt.Fprint(w, indent(wrap(text, 76), "    "))
		if sc, err := scenario.Parse("builtin:"+n, data); err == nil {
			fmt.Fprintf(w, "    knobs:\n%s", indent(scenarioKnobs(sc), "      "))
		}
	}
	tw.Flush()
	if builtinExperiments == nil {
		return
	}
	fmt.Fprintln(w, "\nBuilt-in experiments (simrun sweep NAME):")
	for _, n := range builtinExperiments() {
		e, err := experiments.Load(n)
		if err != nil {
			fmt.Fprintf(tw, "  %s\t(does not load: %v)\n", n, err)
			continue
		}
		if !long {
			fmt.Fprintf(tw, "  %s\t%s\n", n, e.Title)
			continue
		}
		tw.Flush()
		fmt.Fprintf(w, "\n  %s — %s\n", n, e.Title)
		if e.Question != "" {
			fmt.Fprintf(w, "    question:\n%s", indent(wrap(e.Question, 72), "      "))
		}
		fmt.Fprintf(w, "    knobs (swept, %d seeds each):\n", e.Seeds)
		for _, p := range e.Params {
			var vals []string
			for _, v := range p.Values {
				vals = append(vals, v.Text)
			}
			fmt.Fprintf(w, "      %s: %s\n", p.Path, strings.Join(vals, ", "))
		}
	}
	tw.Flush()
}

// leadingComment returns a built-in file's leading comment block as one
// paragraph, without its "name:" prefix.
func leadingComment(data []byte, name string) string {
	var parts []string
	for _, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") {
			break
		}
		parts = append(parts, strings.TrimSpace(strings.TrimPrefix(t, "#")))
	}
	s := strings.Join(parts, " ")
	s = strings.TrimPrefix(s, name+":")
	return strings.TrimSpace(s)
}

// firstSentence is the text up to the first ". " that ends a sentence
// (the second, when the first is a short heading like "why KIP-62 exists.").
func firstSentence(s string) string {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' && s[i+2] >= 'A' && s[i+2] <= 'Z' && i >= 30 {
			return s[:i+1]
		}
	}
	return s
}

func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		} else if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	b.WriteString("\n")
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// scenarioKnobs lists the settings of a scenario one would tune, with
// their effective values (profile defaults filled in), as --set paths.
func scenarioKnobs(sc *scenario.Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "duration=%s coordinator.profile=%s\n", sc.Duration, sc.Coordinator.Profile)
	for i, g := range sc.Groups {
		c := g.Client
		fmt.Fprintf(&b, "groups[%d] (%s): members=%d client.profile=%s client.session.timeout.ms=%d client.heartbeat.interval.ms=%d client.max.poll.interval.ms=%d\n",
			i, g.ID, g.Members, c.Profile, c.SessionTimeout.Milliseconds(), c.HeartbeatInterval.Milliseconds(), c.MaxPollInterval.Milliseconds())
	}
	for i, f := range sc.Faults {
		fmt.Fprintf(&b, "faults[%d]: %s\n", i, scenario.FormatFault(f))
	}
	return b.String()
}
