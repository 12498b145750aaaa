package client

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// opaqueDist hides a distribution's Fixed method: fastForward then replays
// polls one at a time.
type opaqueDist struct{ d Dist }

func (o opaqueDist) Draw(r *rand.Rand) time.Duration { return o.d.Draw(r) }
func (o opaqueDist) String() string                  { return o.d.String() }

// TestFastForwardFixedPollsMatchLoop: with fixed poll distributions the lazy
// replay of polls in one step (template.replay.fixed) leaves the member exactly
// as replaying them one by one does: the same poll timer, next poll,
// deadlines, events and requests, whatever the instants it is called at
// (ticks, responses, CatchUp with and without the poll due at now).
func TestFastForwardFixedPollsMatchLoop(t *testing.T) {
	for _, profile := range []string{"kafka-3.7", "kafka-0.10"} {
		for _, poll := range []time.Duration{100 * time.Millisecond, 7 * time.Millisecond, 1300 * time.Millisecond} {
			t.Run(profile+"/"+poll.String(), func(t *testing.T) {
				fixed := newDriver(t, profile, autoCommit, func(cfg *Config) { cfg.PollInterval = Const(poll) })
				loop := newDriver(t, profile, autoCommit, func(cfg *Config) {
					cfg.PollInterval, cfg.PollTimeout = opaqueDist{Const(poll)}, opaqueDist{cfg.PollTimeout}
				})
				require.Equal(t, poll, fixed.m.cfg.replay.fixed)
				require.Zero(t, loop.m.cfg.replay.fixed)
				ds := []*driver{fixed, loop}
				for _, d := range ds {
					d.stable(tp(0), tp(1))
				}
				rng := rand.New(rand.NewPCG(7, 8))
				replayed := 0
				for step := range 3000 {
					dur := time.Duration(rng.IntN(1500)) * time.Millisecond
					if rng.IntN(4) == 0 { // land exactly on a due poll
						dur = fixed.m.app.busyUntil.Sub(fixed.now)
					}
					includeNow := rng.IntN(2) == 0
					before := fixed.m.app.busyUntil
					for _, d := range ds {
						if dur > 0 {
							d.advance(dur)
						}
						d.m.CatchUp(d.now, includeNow)
						for _, api := range []protocol.APIKey{protocol.APIHeartbeat, protocol.APIOffsetCommit} {
							for d.count(api) > 0 {
								s := d.pop(api)
								if api == protocol.APIHeartbeat {
									d.respond(s, &protocol.HeartbeatResponse{})
								} else {
									d.respond(s, &protocol.OffsetCommitResponse{})
								}
							}
						}
					}
					if fixed.m.app.busyUntil > before.Add(poll) {
						replayed++
					}
					require.Equal(t, loop.now, fixed.now, "step %d", step)
					require.Equal(t, loop.m.app.busyUntil, fixed.m.app.busyUntil, "step %d: next poll", step)
					require.Equal(t, loop.m.hb.pollDeadline, fixed.m.hb.pollDeadline, "step %d: poll timer", step)
					require.Equal(t, loop.m.NextAppDeadline(), fixed.m.NextAppDeadline(), "step %d", step)
					require.Equal(t, loop.m.NextHeartbeatDeadline(), fixed.m.NextHeartbeatDeadline(), "step %d", step)
					require.Equal(t, loop.events, fixed.events, "step %d", step)
					require.Equal(t, len(loop.sends), len(fixed.sends), "step %d", step)
					require.Equal(t, loop.m.rng.Uint64(), fixed.m.rng.Uint64(), "step %d: random stream", step)
				}
				assert.Equal(t, Stable, fixed.m.State())
				assert.Greater(t, replayed, 10, "runs of polls were replayed")
			})
		}
	}
}

// TestThreadFailedIsFailure: steady reads m.hb.threadFailed for
// m.hbt.failure(); they agree for both heartbeaters, including after the
// heartbeat thread fails on a fenced instance id.
func TestThreadFailedIsFailure(t *testing.T) {
	for _, profile := range []string{"kafka-3.x", "kafka-2.x", "kafka-0.10"} {
		t.Run(profile, func(t *testing.T) {
			d := newDriver(t, profile, autoCommit, func(cfg *Config) {
				if profile != "kafka-0.10" {
					cfg.GroupInstanceID = "i-0"
				}
			})
			same := func(step string) {
				t.Helper()
				require.Equal(t, d.m.hbt.failure(), d.m.hb.threadFailed, step)
			}
			same("new")
			d.stable(tp(0))
			same("stable")
			for i := range 5 {
				d.advance(3 * time.Second)
				same("advanced")
				for d.count(protocol.APIHeartbeat) > 0 {
					resp := &protocol.HeartbeatResponse{}
					if i == 3 {
						resp.Error = protocol.FencedInstanceID
					}
					d.respond(d.pop(protocol.APIHeartbeat), resp)
					same("answered")
				}
			}
			if profile != "kafka-0.10" {
				assert.Equal(t, protocol.FencedInstanceID, d.m.hbt.failure(), "the thread failed")
			}
		})
	}
}
