package scenario

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// DefaultWaitOvershoot is how late each of the classic heartbeat thread's
// waits (retry.backoff.ms) returns, read off the real Java consumer's own
// heartbeat cadence on the project's 2-core machine:
// results/calibration/real/*/kafka-*/rep-*/summary.json, field
// real.heartbeat_gap_ms (the mean gap between a member's successive
// "Sending Heartbeat request" lines, kafka-clients 3.9.1 and 4.4.0,
// heartbeat.interval.ms 3000, retry.backoff.ms 100, so 30 waits a
// heartbeat). It is the median of (gap − 3000 ms) / 30 over the 14
// repetitions whose load average at start (real.loadavg_start, 1 minute)
// was at most 2.5: gaps 3011.2–3018.6 ms, median 3014.2 ms, 0.4733 ms a
// wait, rounded to 10 µs (the repetitions run from 0.37 to 0.62 ms a
// wait, so finer digits are noise). TestDefaultWaitOvershootIsTheRealClients
// recomputes it from the committed summaries. It grows with load: at load
// average 16–29 (6 repetitions) the gaps are 3037.9–3054.6 ms (1.26–1.82
// ms a wait), which a scenario can write. harness/testdata/WaitOvershoot.java
// measured Object.wait(100) alone at 0.115 ms (median, same machine); the rest of
// the real loop — pollNoWakeup, re-taking the coordinator's monitor — is in
// the real client's figure and not in that one. At 3000 ms and 100 ms a
// heartbeat goes out every 3014.1 ms (model/classic/client/hbgrid.go).
const DefaultWaitOvershoot = 470 * time.Microsecond

// maxWaitOvershoot bounds wait.overshoot: a wait a second late is a stalled
// JVM, which a pause fault models.
const maxWaitOvershoot = time.Second

// waitOvershoot reads a group's workload wait.overshoot.
func (d *decoder) waitOvershoot(v *yaml.Node, path string, w *Workload) error {
	const key = "wait.overshoot"
	o, err := d.duration(v, sub(path, key))
	if err != nil {
		return err
	}
	if o < 0 || o > maxWaitOvershoot {
		return d.errf(v, sub(path, key), "must be between 0s and %v (how late each heartbeat-thread wait returns; a longer stall is a pause fault)", maxWaitOvershoot)
	}
	w.WaitOvershoot, w.WaitOvershootSet = o, true
	return nil
}

// HeartbeatWaitOvershoot is the group's wait.overshoot under timing t: as
// written, else DefaultWaitOvershoot under realistic timing and 0 under
// timing: exact (whose heartbeats keep their exact intervals).
func (g *Group) HeartbeatWaitOvershoot(t Timing) time.Duration {
	switch {
	case g.Workload.WaitOvershootSet:
		return g.Workload.WaitOvershoot
	case t == TimingExact:
		return 0
	}
	return DefaultWaitOvershoot
}
