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
	Err    string `json:"error,omitempty"`
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
		r := Record{AtMs: a.At.Milliseconds(), Kind: a.Kind, Target: a.Target, Peer: a.Peer, Fault: a.Fault}
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

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
