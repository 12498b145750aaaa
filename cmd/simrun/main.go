// Command simrun runs rebalsim scenarios and experiments.
//
//	simrun run   SCENARIO [--seed N] [--json] [--trace FILE.jsonl]
//	simrun list
//
// Exit status: 0 on success, 1 when an invariant was violated (the seed and
// the violation are printed), 2 on bad input.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand. Each lives in its own file and registers
// itself in init, so subcommands can be added without touching this file.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

// Exit codes (INTERFACE.md).
const (
	exitOK        = 0
	exitViolation = 1
	exitBadInput  = 2
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitBadInput
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "simrun: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitBadInput
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "simrun — deterministic simulator of Kafka consumer-group rebalances")
	fmt.Fprintln(w, "\nUsage: simrun COMMAND [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'simrun COMMAND -h' for the flags of one command.")
}
