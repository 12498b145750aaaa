package realkafka

import (
	"context"
	"time"
)

// Record is one line of the fault log (faults.jsonl): a timeline step, when
// it was due, and the wall-clock instants just before and after the action.
type Record struct {
	AtMs   int64  `json:"at_ms"`   // planned, from the run's t0
	TsMs   int64  `json:"ts_ms"`   // wall clock (Unix ms) just before the action
	DoneMs int64  `json:"done_ms"` // wall clock just after it
	Kind   string `json:"kind"`
	Target string `json:"target,omitempty"`
	Peer   string `json:"peer,omitempty"`
	Pid    int    `json:"pid,omitempty"`
	Value  string `json:"value,omitempty"`
	Fault  string `json:"fault,omitempty"`
	// PhaseMs: how far this repetition moved the step (ForRepetition).
	PhaseMs int64  `json:"phase_ms,omitempty"`
	Err     string `json:"error,omitempty"`
}

// RunTimeline performs the actions at t0 + At on the wall clock, in order,
// calling do for each and log with its record, then waits until t0 + end.
// It stops early when ctx is done. An action that is late (the one before
// took long) runs at once; its record shows by how much.
func RunTimeline(ctx context.Context, t0 time.Time, end time.Duration, actions []Action,
	do func(Action) (pid int, value string, err error), log func(Record)) error {
	for _, a := range actions {
		if a.At > end {
			break
		}
		if err := sleepUntil(ctx, t0.Add(a.At)); err != nil {
			return err
		}
		r := Record{AtMs: a.At.Milliseconds(), Kind: a.Kind, Target: a.Target, Peer: a.Peer, Fault: a.Fault, PhaseMs: a.PhaseMs}
		r.TsMs = time.Now().UnixMilli()
		pid, v, err := do(a)
		r.DoneMs = time.Now().UnixMilli()
		r.Pid, r.Value = pid, v
		if err != nil {
			r.Err = err.Error()
		}
		log(r)
	}
	return sleepUntil(ctx, t0.Add(end))
}

// sleepUntil waits until the wall clock reads t. The logs it is compared
// with are stamped by the wall clock (System.currentTimeMillis), and a
// single long sleep on Go's monotonic timers came back 49 ms late after
// 60 s in two real runs, so it sleeps in steps, each time measuring what
// is left on the wall clock (t.Round(0) drops the monotonic reading), and
// the last step is short.
func sleepUntil(ctx context.Context, t time.Time) error {
	t = t.Round(0)
	for {
		d := time.Until(t)
		if d <= 0 {
			return ctx.Err()
		}
		if d > 300*time.Millisecond {
			d = min(d-200*time.Millisecond, time.Second)
		}
		tm := time.NewTimer(d)
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-tm.C:
		}
	}
}
