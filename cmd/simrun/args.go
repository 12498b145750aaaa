package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
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

// writeAtomic writes a file through a temporary file and a rename, so a
// reader never sees half of it.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
