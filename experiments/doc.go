// Package experiments runs sweeps: an experiment file names a scenario, a
// grid of values for paths into it, and a number of seeds; Sweep runs every
// (point, seed) of the grid through the harness on all cores, keeps one
// file per finished point under DIR/.points/ (so an interrupted sweep
// resumes), and Finalize writes points.csv, summary.csv and the plots from
// those files. Output is byte-identical whatever the worker count, and the
// union of shards (--shard i/n, joined by Merge) equals the unsharded run.
//
// Goroutines are allowed here (as in explore, for the same reason): each
// run is an isolated world (harness.Run is a pure function of scenario and
// seed), and results are sorted by (point, seed) before anything is
// written.
//
// The experiment file format is INTERFACE.md "Experiments", extended with
// title, question, description, an inline scenario, long-form sweep entries
// and more plot kinds; docs/EXPERIMENTS.md describes it.
package experiments
