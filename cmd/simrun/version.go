package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() { register(newVersionCmd) }

// version is the release; `go build -ldflags "-X main.version=v1.2.3"`
// sets it. Otherwise the module version (or VCS revision) is shown.
var version = ""

func newVersionCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version, the Go version and the simulator fingerprint",
		Long: `Print simrun's version, the Go toolchain it was built with and the
simulator fingerprint: a hash of the full summaries of a few canary runs,
the same fingerprint that keys every sweep point, so two builds with one
fingerprint give the same numbers.`,
		Args: cobra.NoArgs,
	}
	synopsis(cmd, "")
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return printVersion(a, cmd) }
	return cmd
}

func printVersion(a *app, cmd *cobra.Command) error {
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Version != "" {
				v = bi.Main.Version
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					v += " " + s.Value
				}
			}
		}
	}
	fmt.Fprintf(a.stdout, "simrun %s\n", v)
	fmt.Fprintf(a.stdout, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(a.stdout, "simulator fingerprint %s\n", experiments.EngineFingerprint())
	return nil
}
