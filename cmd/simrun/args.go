package main

import (
	"flag"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rebalsim/rebalsim/scenario"
)

// scenarioArg parses "SCENARIO [flags]" (the positional argument may come
// before or after the flags) and returns SCENARIO; ok is false (usage
// printed) when the flags are bad or SCENARIO is missing.
func scenarioArg(fs *flag.FlagSet, args []string) (path string, ok bool) {
	path, rest := splitPositional(args)
	if err := fs.Parse(rest); err != nil {
		return "", false
	}
	if path == "" && fs.NArg() > 0 {
		path = fs.Arg(0)
	}
	if path == "" {
		fs.Usage()
		return "", false
	}
	return path, true
}

// splitPositional lets the positional argument come before the flags
// ("simrun run crash-one-member --seed 3"), which the flag package does not.
func splitPositional(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// seedOr is --seed when it was given, else the scenario's own seed.
func seedOr(fs *flag.FlagSet, seed *uint64, scenarioSeed uint64) uint64 {
	s := scenarioSeed
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			s = *seed
		}
	})
	return s
}

// setFlags collects repeated --set PATH=VALUE overrides.
type setFlags []scenario.Override

func (s *setFlags) String() string { return "" }

// Set parses PATH=VALUE; VALUE is read as YAML (10000, 0.01, true, 10s,
// kafka-3.x, {dist: uniform, min: 1ms, max: 5ms}).
func (s *setFlags) Set(v string) error {
	path, val, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return fmt.Errorf("want PATH=VALUE, e.g. groups[0].client.session.timeout.ms=45000")
	}
	var x any
	if err := yaml.Unmarshal([]byte(val), &x); err != nil {
		return fmt.Errorf("%s: value %q: %v", path, val, err)
	}
	*s = append(*s, scenario.Override{Path: path, Value: x})
	return nil
}

// addSetFlag registers --set on a command's flag set.
func addSetFlag(fs *flag.FlagSet) *setFlags {
	s := &setFlags{}
	fs.Var(s, "set", "override a scenario setting, `PATH=VALUE` (repeatable), e.g. coordinator.profile=kafka-3.x or groups[0].client.session.timeout.ms=45000")
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
