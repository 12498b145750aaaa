package scenario

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// DefaultWaitOvershoot is how late Object.wait(100) returned, the median of
// 300 and of 400 waits on the project's 2-core machine (AMD EPYC, Linux,
// OpenJDK 17.0.15; harness/testdata/WaitOvershoot.java, with no other
// thread of its own busy; the machine shared, load average 5 and 30):
// 0.115 ms both times (p90 0.43 ms and 2.2 ms; with its other core spinning
// the median was 0.112 and 0.121 ms; those runs' output is not in the
// repository, the program is). The classic heartbeat thread's waits
// (retry.backoff.ms) each return this late, so at heartbeat.interval.ms
// 3000 and retry.backoff.ms 100 a heartbeat goes out every 3003.45 ms
// (model/classic/client/hbgrid.go).
const DefaultWaitOvershoot = 115 * time.Microsecond

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
