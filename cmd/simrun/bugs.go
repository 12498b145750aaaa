package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/explore"
)

func init() { register(newBugsCmd) }

// newBugsCmd is `simrun bugs` (docs/BUGS.md, "Rediscovery"): the
// rediscovery table of the bug library (explore.Library), measured afresh.
func newBugsCmd(a *app) *cobra.Command {
	var (
		campaigns, seeds, fixedSeeds, workers int
		only                                  string
		budget                                time.Duration
	)
	cmd := &cobra.Command{
		Use:   "bugs",
		Short: "measure how fast generic exploration rediscovers each bug of the library (docs/BUGS.md's table)",
		Long: `For each bug of the library (docs/BUGS.md): run CAMPAIGNS campaigns of simrun explore on the
buggy built-in with its own faults dropped and the generic fault mix (--swarm default), each
stopping at the first run its oracle flags (campaign c runs seeds c*100000+1 ...), then one
campaign of the fixed variant (seeds 900001 ...). Prints the markdown table of docs/BUGS.md and,
per bug, the explore command of each campaign. Bugs generic exploration cannot find are listed
with the reason and not run. Same numbers at any --workers (wall times differ).`,
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.IntVar(&campaigns, "campaigns", 5, "buggy campaigns `N` per bug")
	fs.IntVar(&seeds, "seeds", 3000, "seeds `N` per buggy campaign at most")
	fs.IntVar(&fixedSeeds, "fixed-seeds", 10000, "seeds `N` of the fixed variant's campaign (0: none)")
	fs.IntVar(&workers, "workers", 2, "parallel runs `K` (results do not depend on it)")
	fs.StringVar(&only, "bug", "", "only these `BUGS` (comma-separated ids or built-in names, e.g. KAFKA-9752)")
	fs.DurationVar(&budget, "time", 0, "wall-time budget `TIME` per campaign (0: none); a campaign cut short says how far it got")
	synopsis(cmd, "")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkWorkers(workers); err != nil {
			return err
		}
		if campaigns < 1 || seeds < 1 || fixedSeeds < 0 {
			return fail(exitBadInput, "simrun bugs: --campaigns and --seeds must be at least 1, --fixed-seeds at least 0")
		}
		lib := explore.Library
		if only != "" {
			var known []string
			for _, r := range explore.Library {
				known = append(known, r.Bug)
			}
			for _, r := range explore.Library {
				if !slices.Contains(known, r.Builtin) {
					known = append(known, r.Builtin)
				}
			}
			lib = nil
			for _, name := range strings.Split(only, ",") {
				r, ok := explore.LibraryBug(strings.TrimSpace(name))
				if !ok { // ids are matched in any case, so only the error comes from checkNames
					_, err := checkNames("--bug", name, "bug", known)
					return fail(exitBadInput, "simrun bugs: %v", err)
				}
				lib = append(lib, r)
			}
		}
		ctx, stop := a.interruptible()
		defer stop()
		var rows []string
		for _, r := range lib {
			a.running = "simrun bugs --bug " + r.Bug
			m, err := explore.Measure(ctx, r, campaigns, seeds, fixedSeeds, workers, budget)
			if errors.Is(err, context.Canceled) {
				// The rows measured so far are kept: printed as the table.
				printTable(a, rows)
				return fail(exitInterrupted, "simrun bugs: interrupted while measuring %s; the table above has the %d bugs measured before it", r.Bug, len(rows))
			}
			if err != nil {
				return fail(exitBadInput, "simrun bugs: %s: %v", r.Bug, err)
			}
			fmt.Fprintf(a.stderr, "%s\n", m.Row())
			rows = append(rows, m.Row())
			if r.Unfindable == "" {
				fmt.Fprintf(a.stderr, "  campaign 1: %s\n  fixed:      %s\n", r.Command(false, explore.CampaignFirstSeed(1), seeds, workers),
					r.Command(true, explore.FixedFirstSeed, fixedSeeds, workers))
			}
		}
		printTable(a, rows)
		return nil
	}
	return cmd
}

func printTable(a *app, rows []string) {
	fmt.Fprintln(a.stdout, explore.TableHeader)
	for _, row := range rows {
		fmt.Fprintln(a.stdout, row)
	}
}
