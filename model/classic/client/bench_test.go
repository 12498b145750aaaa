package client

import (
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// BenchmarkSteadyStateMemberSecond measures one simulated member-second of a
// STABLE member (poll every 100 ms, heartbeat every 3 s answered at once).
func BenchmarkSteadyStateMemberSecond(b *testing.B) { benchSteadyState(b, false) }

// BenchmarkSteadyStateMemberSecondAutoCommit adds an auto-commit every 5 s.
func BenchmarkSteadyStateMemberSecondAutoCommit(b *testing.B) { benchSteadyState(b, true) }

func benchSteadyState(b *testing.B, auto bool) {
	t := &testing.T{}
	d := newDriver(t, "kafka-3.7", func(cfg *Config) { cfg.AutoCommit = auto })
	d.stable(tp(0))
	hbResp := &protocol.HeartbeatResponse{}
	commitResp := &protocol.OffsetCommitResponse{}
	var out Output
	now := d.now
	b.ReportAllocs()
	for b.Loop() {
		end := now.Add(time.Second)
		for {
			a, h := d.m.NextAppDeadline(), d.m.NextHeartbeatDeadline()
			next := min(a, h)
			if next > end {
				break
			}
			now = max(now, next)
			out.Reset()
			if a <= now {
				d.m.TickApp(now, &out)
			}
			if h <= now {
				d.m.TickHeartbeat(now, &out)
			}
			for _, s := range out.Sends {
				var o2 Output
				var resp protocol.Response = hbResp
				if s.Req.API() == protocol.APIOffsetCommit {
					resp = commitResp
				}
				d.m.Step(now, s.Broker, s.Corr, resp, &o2)
			}
		}
		now = end
	}
}
