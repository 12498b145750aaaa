package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() { register(newMergeCmd) }

func newMergeCmd(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge",
		Short: "join the shard directories of one sweep into one result",
		Long:  "Join the directories written by simrun sweep --shard i/n; the result equals an unsharded sweep byte for byte.",
		Args:  cobra.MinimumNArgs(1),
	}
	cmd.Flags().StringVar(&out, "out", "", "output `DIR` (required; may be one of the inputs)")
	synopsis(cmd, "DIR...")
	cmd.RunE = func(cmd *cobra.Command, dirs []string) error {
		if out == "" {
			return fail(exitBadInput, "simrun merge: --out DIR is required")
		}
		if err := a.lockOut(out); err != nil {
			return err
		}
		e, err := experiments.Merge(dirs, out)
		if err != nil {
			return fail(exitBadInput, "simrun: %v", err)
		}
		fmt.Fprintf(a.stdout, "%s: merged %d directories into %s (%d points × %d seeds)\n", e.Name, len(dirs), out, e.NumPoints(), e.Seeds)
		return nil
	}
	return cmd
}
