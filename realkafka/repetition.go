package realkafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// RepetitionSpec is one repetition of a plan: Rep (1, 2, …) decides its
// seed and fault phases (Plan.ForRepetition); Dir is its directory.
type RepetitionSpec struct {
	Plan     *Plan
	Dir      string
	Jars     *Jars
	Progress io.Writer
	Rep      int
	// KeepRaw keeps the raw logs beside logs.tar.gz (they are removed by
	// default: the archive holds every line the converter reads).
	KeepRaw bool
}

// ErrInterrupted is returned when the context ended a repetition: it was
// torn down and will start over.
var ErrInterrupted = errors.New("interrupted: cleaned up; the unfinished repetition will start over")

// Done says whether the repetition in dir has finished (its done marker).
func Done(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "done"))
	return err == nil
}

// Repetition runs one repetition into s.Dir — or, when it is done already,
// converts what it left (resumable) — and returns its converted summary,
// with ran saying whether it ran now. The one code path of a repetition,
// for `simrun real` and `simrun calibrate`. A finished repetition leaves
// meta.json, faults.jsonl, summary.json, logs.tar.gz and its done marker;
// an unfinished one is removed and started over.
func Repetition(ctx context.Context, s RepetitionSpec) (res *Result, ran bool, err error) {
	if Done(s.Dir) {
		res, err := Convert(s.Dir)
		return res, false, err
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		return nil, false, err
	}
	r := &Runner{Plan: s.Plan.ForRepetition(s.Rep), Dir: s.Dir, Jars: s.Jars, Progress: s.Progress}
	if err := r.Prepare(); err != nil {
		return nil, false, err
	}
	t := time.Now()
	err = r.Run(ctx)
	_ = os.RemoveAll(filepath.Join(s.Dir, "data")) // the brokers' log.dirs: large, not needed by the converter
	if ctx.Err() != nil {
		return nil, true, ErrInterrupted
	}
	if err != nil {
		return nil, true, fmt.Errorf("repetition %d: %v", s.Rep, err)
	}
	if res, err = Convert(s.Dir); err != nil {
		return nil, true, err
	}
	if err := writeSummary(s.Dir, res); err != nil {
		return nil, true, err
	}
	if err := Pack(s.Dir, s.KeepRaw); err != nil {
		return nil, true, fmt.Errorf("packing the logs of %s: %v", s.Dir, err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "done"), nil, 0o644); err != nil {
		return nil, true, err
	}
	fmt.Fprintf(s.Progress, "repetition %d done in %.0f s\n", s.Rep, time.Since(t).Seconds())
	return res, true, nil
}

func writeSummary(dir string, res *Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644)
}

// Reconvert converts a finished repetition again (from its raw logs or its
// logs.tar.gz) with the converter as it is now and rewrites its
// summary.json: after a converter fix, the committed repetitions are
// brought up to date without running them again.
func Reconvert(dir string) (*Result, error) {
	if !Done(dir) {
		return nil, fmt.Errorf("%s: not a finished repetition (no done marker)", dir)
	}
	res, err := Convert(dir)
	if err != nil {
		return nil, err
	}
	return res, writeSummary(dir, res)
}
