package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() {
	register("report", command{summary: "sweep an experiment (resuming) and write DIR/REPORT.md", run: cmdReport})
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	tuneGC()
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f sweepFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: simrun report EXPERIMENT [--out DIR] [--workers K]")
		fmt.Fprintln(stderr, "Runs the sweep (finished points are kept) and writes DIR/REPORT.md and DIR/scenarios/<point>.yaml.")
		fs.PrintDefaults()
	}
	path, _ := splitPositional(args)
	e, dir, code := loadAndSweep(fs, &f, args, stdout, stderr)
	if code != exitOK {
		return code
	}
	if e == nil {
		fmt.Fprintln(stderr, "simrun: report needs every point; merge the shards first, then run report on the merged directory's experiment")
		return exitBadInput
	}
	ref := path
	if _, err := os.Stat(path); err != nil {
		ref = e.Name // a built-in
	}
	if err := experiments.WriteReport(e, dir, experiments.ReportOptions{Dir: filepath.ToSlash(dir), Ref: ref}); err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return exitBadInput
	}
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, "REPORT.md"))
	return exitOK
}
