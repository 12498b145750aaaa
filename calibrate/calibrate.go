// Package calibrate runs a suite of scenarios on the simulator and on real
// Kafka and says how close they are, scenario by scenario and figure by
// figure (simrun calibrate; docs/CALIBRATE.md).
//
// The real side is a sequence of repetitions, each run once through one
// function (RepFunc: realkafka's one repetition code path in simrun) into
// OUT/real/SCENARIO/kafka-V/rep-NNN and marked done; a run that is
// interrupted or repeated skips what is done (resumable). The simulated
// side is a pure function of the suite and those repetitions: each
// repetition's measured facts (latency, member starts, fault instants and
// heartbeat phases, cadence, join and consumer-coordinator costs, each
// classic member's driver draws) are fed into the scenario (Match) and run on its own N seeds (repetition k:
// seeds N·(k−1)+1 … N·k, matchedSeed). The report is
// written from both: REPORT.md, calibration.csv, values.csv, plots/.
package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/realkafka"
)

// RepFunc runs one real repetition of plan into dir (which does not exist
// yet or holds an unfinished attempt, removed before the call) and leaves
// summary.json (realkafka.Result), meta.json and faults.jsonl there. It
// returns ctx's error when interrupted.
type RepFunc func(ctx context.Context, plan *realkafka.Plan, dir string, rep int) error

// Options says what to calibrate.
type Options struct {
	Suite    *Suite
	Versions []string // broker versions, e.g. 3.9.1, 4.4.0
	Reps     int      // real repetitions per scenario and version
	Seeds    int      // simulated seeds per real repetition
	Out      string
	// Run makes real repetitions; nil only reports what is there
	// (--report-only).
	Run      RepFunc
	Progress io.Writer
	// Explanations is the explanations file's text (nil: the committed
	// calibrate/explanations.yaml).
	Explanations []byte
	// Now is the wall clock for the progress line's time left (nil:
	// time.Now). Nothing the report says depends on it.
	Now func() time.Time
}

// ErrInterrupted: the context ended the real runs; the report of what
// finished was written.
var ErrInterrupted = errors.New("interrupted")

// Calibrate runs the real repetitions still missing (rep-major: every
// scenario's repetition 1, then every repetition 2, …) and writes the
// report. Interrupted, it writes the report of what finished and returns
// ErrInterrupted; when repetitions failed, the report of the others and a
// *FailedError.
func Calibrate(ctx context.Context, o Options) (*Result, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Seeds < 1 {
		return nil, fmt.Errorf("--seeds must be at least 1 (got %d)", o.Seeds)
	}
	var runErr error // interrupted, or repetitions failed: the report is still written
	if o.Run != nil {
		runErr = runReal(ctx, o)
		var failed *FailedError
		if runErr != nil && !errors.Is(runErr, ErrInterrupted) && !errors.As(runErr, &failed) {
			return nil, runErr
		}
	}
	res, err := Evaluate(o)
	if err != nil {
		return nil, err
	}
	if err := Write(res, o.Out); err != nil {
		return nil, err
	}
	return res, runErr
}

type job struct {
	ss      *SuiteScenario
	version string
	plan    *realkafka.Plan
	rep     int
}

// runReal makes the missing repetitions, rep-major.
func runReal(ctx context.Context, o Options) error {
	var todo []job
	for rep := 1; rep <= o.Reps; rep++ {
		for i := range o.Suite.Scenarios {
			ss := &o.Suite.Scenarios[i]
			for _, v := range o.Versions {
				sc, err := ss.ForVersion(v)
				if err != nil {
					continue // not applicable on v (said in the report)
				}
				if isDone(repDir(o.Out, ss.Name, v, rep)) {
					continue
				}
				plan, err := realkafka.NewPlan(sc, v, false)
				if err != nil {
					if rep == 1 {
						fmt.Fprintf(o.Progress, "%s on %s: cannot run on the testbed: %v\n", ss.Name, v, err)
					}
					continue
				}
				todo = append(todo, job{ss: ss, version: v, plan: plan, rep: rep})
			}
		}
	}
	start := o.Now()
	var failed []string
	for i, j := range todo {
		dir := repDir(o.Out, j.ss.Name, j.version, j.rep)
		left := ""
		if i > 0 {
			per := o.Now().Sub(start) / time.Duration(i)
			left = fmt.Sprintf(", about %s left", (per * time.Duration(len(todo)-i)).Round(time.Minute))
		}
		fmt.Fprintf(o.Progress, "[%d/%d%s] %s on Kafka %s, repetition %d\n", i+1, len(todo), left, j.ss.Name, j.version, j.rep)
		if err := os.RemoveAll(dir); err != nil { // an unfinished attempt starts over
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		err := o.Run(ctx, j.plan, dir, j.rep)
		if ctx.Err() != nil {
			_ = os.RemoveAll(dir)
			fmt.Fprintf(o.Progress, "interrupted: %d of %d repetitions made; the report covers what finished\n", i, len(todo))
			return ErrInterrupted
		}
		if err != nil {
			// One failed repetition does not stop a suite of hours: it is
			// removed (the next run makes it again) and counted.
			fmt.Fprintf(o.Progress, "%s on Kafka %s, repetition %d FAILED: %v (removed; the next run makes it again)\n", j.ss.Name, j.version, j.rep, err)
			_ = os.RemoveAll(dir)
			failed = append(failed, fmt.Sprintf("%s on %s rep %d", j.ss.Name, j.version, j.rep))
			continue
		}
		if err := os.WriteFile(dirDone(dir), nil, 0o644); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return &FailedError{Reps: failed}
	}
	return nil
}

// FailedError lists the repetitions that failed (the report of the others
// was written).
type FailedError struct{ Reps []string }

func (e *FailedError) Error() string {
	return fmt.Sprintf("%d repetitions failed (run again to retry them): %s", len(e.Reps), strings.Join(e.Reps, ", "))
}

func dirDone(dir string) string { return dir + string(os.PathSeparator) + "done" }

// Result is the calibration: every row, and what each scenario ran as.
type Result struct {
	Suite     string
	Versions  []string
	Seeds     int
	Scenarios []ScenarioResult
	// Unused explanations (no disagreement matches them): stale entries.
	Unused []*Explanation
}

// ScenarioResult is one scenario on one version.
type ScenarioResult struct {
	Name, Version string
	// NotApplicable says why the scenario does not run on this version
	// ("" when it does).
	NotApplicable string
	// NotOnTestbed says why the testbed cannot make it (realkafka's plan
	// refused it): its real side stays empty.
	NotOnTestbed string
	Rows         []Row
	Sim, Real    []Run
	Reps         []*Rep
	Notes        []string // what the matched simulation fell back on
}

// Evaluate reads the real repetitions under o.Out, runs the simulated side
// and judges every figure. It runs nothing real.
func Evaluate(o Options) (*Result, error) {
	src, data := "calibrate/explanations.yaml", explanationsYAML
	if o.Explanations != nil {
		src, data = "explanations", o.Explanations
	}
	ex, err := ParseExplanations(src, data)
	if err != nil {
		return nil, err
	}
	res := &Result{Suite: o.Suite.Name, Versions: o.Versions, Seeds: o.Seeds}
	for i := range o.Suite.Scenarios {
		ss := &o.Suite.Scenarios[i]
		for _, v := range o.Versions {
			sr := ScenarioResult{Name: ss.Name, Version: v}
			sc, err := ss.ForVersion(v)
			if err != nil {
				sr.NotApplicable = firstLine(err.Error())
				res.Scenarios = append(res.Scenarios, sr)
				continue
			}
			if _, err := realkafka.NewPlan(sc, v, false); err != nil {
				sr.NotOnTestbed = strings.ReplaceAll(err.Error(), "\n", " ")
			}
			if sr.Reps, err = readReps(o.Out, ss.Name, v); err != nil {
				return nil, err
			}
			if sr.Sim, sr.Notes, err = simulate(sc, sr.Reps, o.Seeds); err != nil {
				return nil, err
			}
			sr.Real = realRuns(sc, sr.Reps)
			for fi, f := range Figures {
				row := Judge(f, fi, sr.Sim, sr.Real)
				if row.Sim.N == 0 && row.Real.N == 0 {
					continue // not exercised by this scenario
				}
				row.Scenario, row.Version = ss.Name, v
				if f.realKey != "" && len(sr.Reps) > 0 && !measured(sr.Reps, f.realKey) {
					row.Verdict, row.Why, row.SoFar = Pending, "not measured by the real repetitions (summary.json real."+f.realKey+")", ""
				}
				sr.Rows = append(sr.Rows, row)
			}
			explain(sr.Rows, ex)
			res.Scenarios = append(res.Scenarios, sr)
		}
	}
	for _, e := range ex {
		if !e.used {
			res.Unused = append(res.Unused, e)
		}
	}
	return res, nil
}

// measured reports whether the repetitions' converter records the real
// field key (some repetition has it: the field is omitted when empty).
func measured(reps []*Rep, key string) bool {
	for _, r := range reps {
		if key == "rebalance_notice_ms" && r.Real.RebalanceNoticeMs != nil {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
