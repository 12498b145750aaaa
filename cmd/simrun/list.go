package main

import (
	"fmt"
	"io"

	"github.com/rebalsim/rebalsim/scenario"
)

func init() {
	register("list", command{summary: "list the built-in scenarios and experiments", run: cmdList})
}

// builtinExperiments is filled by the experiments commands when present.
var builtinExperiments func() []string

func cmdList(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "Built-in scenarios (simrun run NAME):")
	for _, n := range scenario.BuiltinNames() {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	if builtinExperiments != nil {
		fmt.Fprintln(stdout, "\nBuilt-in experiments (simrun sweep NAME):")
		for _, n := range builtinExperiments() {
			fmt.Fprintf(stdout, "  %s\n", n)
		}
	}
	return exitOK
}
