package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() {
	register("merge", command{summary: "join the shard directories of one sweep into one result", run: cmdMerge})
}

func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output `DIR` (required; may be one of the inputs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: simrun merge DIR... --out DIR")
		fmt.Fprintln(stderr, "Joins the directories written by simrun sweep --shard i/n; the result equals an unsharded sweep byte for byte.")
		fs.PrintDefaults()
	}
	// Directories may come before or after the flags.
	var dirs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--out" || a == "-out":
			if i+1 < len(args) {
				rest = append(rest, a, args[i+1])
				i++
			} else {
				rest = append(rest, a)
			}
		case strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		default:
			dirs = append(dirs, a)
		}
	}
	if err := fs.Parse(rest); err != nil {
		return exitBadInput
	}
	dirs = append(dirs, fs.Args()...)
	if len(dirs) == 0 || *out == "" {
		fs.Usage()
		return exitBadInput
	}
	e, err := experiments.Merge(dirs, *out)
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return exitBadInput
	}
	fmt.Fprintf(stdout, "%s: merged %d directories into %s (%d points × %d seeds)\n", e.Name, len(dirs), *out, e.NumPoints(), e.Seeds)
	return exitOK
}
