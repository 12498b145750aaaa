package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// seedOr is --seed when it was given, else the scenario's own seed.
func seedOr(cmd *cobra.Command, seed uint64, scenarioSeed uint64) uint64 {
	if cmd.Flags().Changed("seed") {
		return seed
	}
	return scenarioSeed
}

// setFlags collects repeated --set PATH=VALUE overrides.
type setFlags []scenario.Override

func (s *setFlags) String() string { return "" }
func (s *setFlags) Type() string   { return "set" }

// Set parses PATH=VALUE; VALUE is read as YAML (10000, 0.01, true, 10s,
// kafka-3.x, {dist: uniform, min: 1ms, max: 5ms}).
func (s *setFlags) Set(v string) error {
	o, err := parseSet(v)
	if err != nil {
		return err
	}
	*s = append(*s, o)
	return nil
}

func parseSet(v string) (scenario.Override, error) {
	path, val, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return scenario.Override{}, fmt.Errorf("want PATH=VALUE, e.g. groups[0].client.session.timeout.ms=45000")
	}
	// The value is read as the file's values are (scenario.CheckNodes):
	// 030000 is an error, not octal 12288 ms; a tag or a second document
	// is an error, not dropped.
	var doc yaml.Node
	if err := scenario.UnmarshalOne([]byte(val), &doc); err != nil {
		return scenario.Override{}, fmt.Errorf("%s: value %s: %v", path, quoteArg(val), scenario.YAMLError("", []byte(val), err).Msg)
	}
	if bad, why := scenario.CheckNodes(&doc); bad != nil {
		return scenario.Override{}, fmt.Errorf("%s: value %s: %s", path, quoteArg(val), why)
	}
	var x any
	if err := doc.Decode(&x); err != nil && doc.Kind != 0 {
		return scenario.Override{}, fmt.Errorf("%s: value %s: %v", path, quoteArg(val), err)
	}
	return scenario.Override{Path: path, Value: x}, nil
}

// addSetFlag registers --set on a command's flags.
func addSetFlag(fs *pflag.FlagSet) *setFlags {
	return addSetFlagNamed(fs, "set", "override a scenario setting, `PATH=VALUE` (repeatable), e.g. coordinator.profile=kafka-3.x or groups[0].client.session.timeout.ms=45000")
}

func addSetFlagNamed(fs *pflag.FlagSet, name, usage string) *setFlags {
	s := &setFlags{}
	fs.Var(s, name, usage)
	return s
}

// loadScenario reads SCENARIO (a file or a built-in name) with the --set
// overrides applied, returning its source name and (overridden) bytes too.
func loadScenario(path string, sets *setFlags) (*scenario.Scenario, string, []byte, error) {
	source, data, err := scenario.Read(path)
	if err != nil {
		return nil, "", nil, err
	}
	var overrides []scenario.Override
	if sets != nil {
		overrides = *sets
	}
	if data, err = scenario.Overridden(source, data, overrides); err != nil {
		return nil, "", nil, err
	}
	sc, err := scenario.Parse(source, data)
	return sc, source, data, err
}

// interruptSignals stop a long command the same way: SIGINT (Ctrl-C),
// SIGTERM (kill, a batch scheduler) and SIGHUP (a closed terminal) all
// cancel the context, finished work is kept, and the command says
// "interrupted" and exits 130.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interruptible returns a context cancelled by any of interruptSignals.
func (a *app) interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), interruptSignals...)
	if a.signalsArmed != nil {
		a.signalsArmed()
	}
	return ctx, stop
}

// checkWorkers refuses a negative --workers (0 means one per CPU).
func checkWorkers(n int) error {
	if n < 0 {
		return fail(exitBadInput, "simrun: --workers %d: want 0 (one per CPU) or a positive number", n)
	}
	return nil
}

// completeScenarios offers the built-in scenario names (and files) for a
// command's first positional argument; completeExperiments the built-in
// experiments.
func completeScenarios(max int) cobra.CompletionFunc {
	return completeNames(scenario.BuiltinNames, max)
}

func completeNames(names func() []string, max int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range names() {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveDefault
	}
}

// byteSize is a --max-memory value: bytes, or a number with KiB, MiB, GiB
// (or KB, MB, GB, K, M, G: the same binary units).
type byteSize int64

func (b *byteSize) String() string { return fmt.Sprintf("%dMiB", int64(*b)>>20) }
func (b *byteSize) Type() string   { return "bytes" }
func (b *byteSize) Set(v string) error {
	s := strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f*float64(mult) > 1<<50 || f != f {
		return fmt.Errorf("want a positive size such as 8GiB or 512MiB, got %s", quoteArg(v))
	}
	*b = byteSize(f * float64(mult))
	return nil
}

// addMaxMemory registers --max-memory (harness.Options.MaxMemory).
func addMaxMemory(fs *pflag.FlagSet) *byteSize {
	b := byteSize(harness.DefaultMaxMemory)
	fs.Var(&b, "max-memory", "refuse a run whose estimated memory is over `SIZE` (e.g. 8GiB)")
	return &b
}
