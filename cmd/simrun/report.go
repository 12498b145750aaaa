package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() { register(newReportCmd) }

func newReportCmd(a *app) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:               "report",
		Short:             "sweep an experiment (resuming) and write DIR/REPORT.md",
		Long:              "Run the sweep (finished points are kept) and write DIR/REPORT.md and DIR/scenarios/<point>.yaml.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNames(experiments.BuiltinNames, 1),
	}
	f.register(cmd.Flags(), false)
	synopsis(cmd, "EXPERIMENT")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		tuneGC()
		path := args[0]
		e, dir, err := a.loadAndSweep(&f, path)
		if err != nil {
			return err
		}
		if e == nil {
			return fail(exitBadInput, "simrun: report needs every point; merge the shards first, then run report on the merged directory's experiment")
		}
		ref := path
		if _, err := os.Stat(path); err != nil {
			ref = e.Name // a built-in
		}
		if err := experiments.WriteReport(e, dir, experiments.ReportOptions{Dir: filepath.ToSlash(dir), Ref: ref}); err != nil {
			return fail(exitBadInput, "simrun: %v", err)
		}
		fmt.Fprintf(a.stdout, "wrote %s\n", filepath.Join(dir, "REPORT.md"))
		return nil
	}
	return cmd
}
