// Command simrun runs rebalsim scenarios and experiments.
//
//	simrun run        SCENARIO [--seed N] [--json] [--set PATH=VALUE]... [--fail-on CONDITIONS]
//	simrun explain    SCENARIO --seed N [--member M]
//	simrun shrink     SCENARIO --seed N [--until PROPERTY]
//	simrun explore    SCENARIO --seeds N [--swarm default]
//	simrun tune       SCENARIO --param PATH=LO..HI --require 'FIGURE <= BOUND' [--minimize|--maximize]
//	simrun compare    A B [--seeds N]
//	simrun sweep      EXPERIMENT [--workers K] [--shard i/n]
//	simrun merge      DIR... --out DIR
//	simrun report     EXPERIMENT [--out DIR]
//	simrun bugs       [--bug KAFKA-N,...] [--campaigns N]   (the bug library's rediscovery table)
//	simrun real       SCENARIO [--kafka VERSION] [--reps N]  (the same scenario on a real Kafka)
//	simrun calibrate  [SUITE] [--reps N] [--kafka 3.9,4.4] [--report-only]  (the simulator against real Kafka)
//	simrun list       [--long]
//	simrun version
//	simrun completion bash|zsh|fish|powershell
//
// The command line is spf13/cobra with spf13/pflag (the library of kubectl,
// docker, hugo and gh): flags may come before or after the positional
// arguments, `-h/--help` works on every command and prints to stdout,
// extra positional arguments are an error, and shell completion comes for
// free. Exit status (exitCodesHelp, docs/INTERFACE.md): 0 success, 1 an
// invariant was violated, no value meets tune's requirements or explore
// found something, 2 bad input (or an output that cannot be written), 3 an
// internal error (a bug: please report), 4 a `run --fail-on` condition
// held, 130 interrupted. TestCLIDocumented checks this list, DESIGN.md and
// INTERFACE.md against the registered commands and the exit* constants.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes (INTERFACE.md).
const (
	exitOK          = 0
	exitViolation   = 1 // an invariant was violated; tune: no value meets the requirements
	exitBadInput    = 2 // bad input, or an output that cannot be written
	exitInternal    = 3 // a bug in simrun: please report it
	exitInterrupted = 130
)

// exitCodesHelp closes every command's -h output.
const exitCodesHelp = `
Exit status:
  0    success
  1    an invariant was violated (run, explain: the seed is printed);
       tune: no value in the range meets every requirement;
       explore: a finding (an oracle or an invariant fired in some run)
  2    bad input (unknown flag, extra argument, bad scenario) or an output
       that cannot be written
  3    internal error: a bug in simrun; please report it with the command
  4    run --fail-on: a listed condition held (invalid, false-evictions, ...)
  130  interrupted (SIGINT, SIGTERM or SIGHUP); finished points are kept
`

// exitError carries an exit status out of a command; msg (if any) has
// already been printed or is printed by dispatch.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// fail returns an exitError whose message dispatch prints on stderr.
func fail(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// status returns a silent exitError (the command printed its own message).
func status(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// app is one invocation: its output streams and what a crash report names.
type app struct {
	stdout *checkedWriter
	stderr io.Writer
	// running names the run in progress ("simrun run X --seed 3") for an
	// internal-error report.
	running string
	// signalsArmed, when set (tests), is called once the command listens
	// for SIGINT/SIGTERM/SIGHUP.
	signalsArmed func()
	// maxMemory is --max-memory (0: harness.DefaultMaxMemory).
	maxMemory int64
	// locked holds the output directories' locks (lockOut).
	locked map[string]func()
}

// checkedWriter remembers the first write error on stdout, so that
// `simrun run --json > /dev/full` fails instead of exiting 0.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// constructor builds one subcommand for an invocation. Each command lives
// in its own file and registers itself in init.
type constructor func(a *app) *cobra.Command

var constructors []constructor

func register(c constructor) { constructors = append(constructors, c) }

// signalsHook is app.signalsArmed for the next dispatch (tests).
var signalsHook func()

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs one command line and returns its exit status. A panic
// anywhere below is an internal error (exit 3) with a request to report it.
func dispatch(args []string, stdout, stderr io.Writer) (code int) {
	// Everything printed goes through cleanWriter: no escape sequence
	// from an input reaches the terminal.
	stdout, stderr = cleanWriter{stdout}, cleanWriter{stderr}
	a := &app{stdout: &checkedWriter{w: stdout}, stderr: stderr, signalsArmed: signalsHook}
	defer a.unlockAll()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "simrun: internal error: %v\n", p)
			if a.running != "" {
				fmt.Fprintf(stderr, "while running: %s\n", a.running)
			}
			fmt.Fprintf(stderr, "command: simrun %s\n", strings.Join(args, " "))
			fmt.Fprintln(stderr, "This is a bug in simrun; please report it with the command above (and the scenario file), the seed and this stack:")
			stderr.Write(debug.Stack())
			code = exitInternal
		}
	}()
	root := newRoot(a)
	if msg := unknownCommand(root, args); msg != "" {
		// cobra prints the root help and exits 0 for `simrun nosuchcommand
		// --help`: a typo in a script would pass.
		fmt.Fprintln(stderr, msg)
		fmt.Fprintln(stderr, "Run 'simrun --help' for usage.")
		return exitBadInput
	}
	root.SetArgs(goStyleFlags(args))
	err := root.Execute()
	code = exitOK
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
			if ee.msg != "" {
				fmt.Fprintln(stderr, ee.msg)
			}
		} else {
			// Cobra's own errors: unknown command or flag, wrong number of
			// arguments, a flag value that does not parse.
			fmt.Fprintf(stderr, "simrun: %v\n", flagParseMessage(err.Error()))
			cmd, _, ferr := root.Find(args)
			name := "simrun"
			if ferr == nil && cmd != nil {
				name = cmd.CommandPath()
			}
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", name)
			code = exitBadInput
		}
	}
	if a.stdout.err != nil {
		// Reported whatever the command's own status (tune's "no value
		// passes", exit 1, lost it).
		fmt.Fprintf(stderr, "simrun: writing standard output: %v\n", a.stdout.err)
		if code == exitOK {
			code = exitBadInput
		}
	}
	return code
}

// unknownCommand returns an error message when the first argument is not a
// flag and names no command (cobra's own hidden ones aside).
func unknownCommand(root *cobra.Command, args []string) string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[0], "__") {
		return ""
	}
	var names []string
	for _, c := range root.Commands() {
		if c.Name() == args[0] || slices.Contains(c.Aliases, args[0]) {
			return ""
		}
		if !c.Hidden {
			names = append(names, c.Name())
		}
	}
	if args[0] == "help" || args[0] == "completion" {
		return ""
	}
	hint := ""
	if near := nearest(args[0], names); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Sprintf("simrun: unknown command %s%s; commands: %s", quoteArg(args[0]), hint, strings.Join(names, ", "))
}

// flagParse matches the strconv errors pflag passes through for a flag
// value that does not parse.
var flagParse = regexp.MustCompile(`strconv\.Parse(Uint|Int|Float|Bool): parsing "(?:[^"\\]|\\.)*": (invalid syntax|value out of range)`)

// flagParseMessage says what a number flag wants instead of leaking
// strconv's words (`--seed -1`: strconv.ParseUint: parsing "-1": invalid
// syntax).
func flagParseMessage(msg string) string {
	return flagParse.ReplaceAllStringFunc(msg, func(m string) string {
		sub := flagParse.FindStringSubmatch(m)
		switch sub[1] {
		case "Uint":
			return "want a whole number from 0 to 18446744073709551615"
		case "Int":
			if sub[2] == "value out of range" {
				return "out of range"
			}
			return "want a whole number"
		case "Float":
			return "want a number"
		default:
			return "want true or false"
		}
	})
}

// goStyleFlags rewrites Go-flag spellings (-seed 3, -json) into pflag's
// (--seed 3, --json), so command lines written for the earlier flag-package
// simrun keep working. Only a single dash followed by two or more letters
// is rewritten, and nothing after "--".
var goStyleFlag = regexp.MustCompile(`^-[a-z][a-z0-9-]+(=.*)?$`)

func goStyleFlags(args []string) []string {
	out := make([]string, len(args))
	rewrite := true
	for i, a := range args {
		if a == "--" {
			rewrite = false
		}
		if rewrite && goStyleFlag.MatchString(a) {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

func newRoot(a *app) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "simrun",
		Short: "deterministic simulator of Kafka consumer-group rebalances",
		Long: `simrun — deterministic simulator of Kafka consumer-group rebalances.

Same scenario + same seed = the same trace, byte for byte. SCENARIO and
EXPERIMENT are files or built-in names (simrun list).`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				return printVersion(a, cmd)
			}
			// No command: the usage on stderr, as go(1) does.
			cmd.SetOut(a.stderr)
			cmd.Usage()
			return status(exitBadInput)
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.Flags().BoolVar(&showVersion, "version", false, "print the version, the Go version and the simulator fingerprint")
	root.SetUsageTemplate(root.UsageTemplate() + exitCodesHelp)
	root.CompletionOptions.HiddenDefaultCmd = false
	for _, c := range constructors {
		root.AddCommand(c(a))
	}
	return root
}

// synopsis sets cmd.Use to the command's name, its positional arguments
// and every flag it takes, so the usage line lists them all.
func synopsis(cmd *cobra.Command, positional string) {
	name := strings.Fields(cmd.Use)[0]
	parts := []string{name}
	if positional != "" {
		parts = append(parts, positional)
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		s := "--" + f.Name
		if v, _ := pflag.UnquoteUsage(f); v != "" {
			s += " " + v
		}
		rep := ""
		if strings.Contains(f.Value.Type(), "Slice") || strings.Contains(f.Value.Type(), "Array") || f.Value.Type() == "set" {
			rep = "..."
		}
		parts = append(parts, "["+s+"]"+rep)
	})
	cmd.Use = strings.Join(parts, " ")
	cmd.DisableFlagsInUseLine = true
}
