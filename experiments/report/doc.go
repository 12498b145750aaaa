// Package report holds the numeric and graphic end of an experiment: the
// statistics over seeds (gonum/stat) and the plots (gonum/plot). It is the
// only package that imports gonum/plot. It knows nothing of scenarios or
// the harness: it takes plain numbers and returns numbers and file bytes.
package report
