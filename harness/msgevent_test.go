package harness

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// TestRecordMsgEncoding: recordMsg hashes exactly the bytes record writes
// for the TraceEvent msgEvent would build (the trace_sha256 input).
func TestRecordMsgEncoding(t *testing.T) {
	type msg struct {
		at                        sim.Instant
		kind                      protocol.EventKind
		node, group, peer, reason string
		api                       protocol.APIKey
		err                       protocol.ErrorCode
		corr                      uint64
		req                       bool
	}
	msgs := []msg{
		{at: 1, kind: tracing.EvSend, node: "g-1", group: "g", peer: "broker-0", api: protocol.APIHeartbeat, corr: 7, req: true},
		{at: 123456789, kind: tracing.EvDeliver, node: "g-1", peer: "broker-0", api: protocol.APIJoinGroup, err: protocol.RebalanceInProgress, corr: 1 << 40},
		{at: 5e9, kind: tracing.EvLost, node: "broker-2", peer: "payments-10", reason: "loss", api: protocol.APISyncGroup, err: protocol.None, corr: 3},
		{at: 6e9, kind: tracing.EvDrop, node: "x", group: "", peer: "", reason: "no-process", api: protocol.APIOffsetCommit, req: true},
		{kind: tracing.EvRetransmit},
	}
	full := newRecorder(nil, true, nil)
	fast := newRecorder(nil, false, nil)
	require.False(t, full.hashOnly)
	require.True(t, fast.hashOnly)
	for i := 0; i < 200; i++ { // past a hash batch or two
		for _, m := range msgs {
			e := TraceEvent{At: m.at, Event: protocol.Event{Kind: m.kind, Node: m.node, Group: m.group, Peer: m.peer, Reason: m.reason, API: m.api, Err: m.err}, Corr: m.corr, Req: m.req}
			full.record(&e)
			fast.recordMsg(m.at, m.kind, m.node, m.group, m.peer, m.reason, m.api, m.err, m.corr, m.req)
			require.True(t, bytes.Equal(full.hbuf, fast.hbuf), "event %+v", m)
		}
	}
	assert.Equal(t, full.count, fast.count)
	assert.Equal(t, full.sum(), fast.sum())
}

// TestMessageEventsReachNoWatcher: neither the metrics (world.observe) nor
// any checker reacts to a message event (send, deliver, drop, lost,
// retransmit), so msgEvent may skip them when only the hash reads the
// trace. Every message event of a run is shown again, under each message
// kind, to one world's checkers and metrics after the run; they must end as
// its twin's, which saw nothing more, and no check may report anything.
func TestMessageEventsReachNoWatcher(t *testing.T) {
	kinds := []protocol.EventKind{tracing.EvSend, tracing.EvDeliver, tracing.EvDrop, tracing.EvLost, tracing.EvRetransmit}
	for _, name := range []string{"lossy-network", "consumer-crash-one-member", "coordinator-failover", "gc-pause", "rolling-restart-static"} {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			twins := [2]*world{}
			for i := range twins {
				w, err := newWorld(sc, 1, Options{KeepTrace: true})
				require.NoError(t, err)
				w.maxEvents = DefaultMaxEvents
				w.run()
				twins[i] = w
			}
			a, b := twins[0], twins[1]
			msgs := 0
			for _, e := range a.rec.events {
				if !tracing.IsMessageEvent(e.Kind) {
					continue
				}
				msgs++
				for _, k := range kinds {
					e.Kind = k
					for _, c := range a.checks {
						require.Empty(t, c.check(a.view, &e), "checker %s on %+v", c.name(), e)
					}
					a.watch.observe(&e)
				}
			}
			require.NotZero(t, msgs)
			assert.Equal(t, b.checks, a.checks)
			assert.Equal(t, b.watch.obs, a.watch.obs)
			assert.Equal(t, b.viol, a.viol)
			for i := range a.groups {
				assert.Equal(t, *b.groups[i].m, *a.groups[i].m, "group %s", a.groups[i].id)
			}
			for i := range a.slots {
				assert.Equal(t, b.slots[i].slotMetrics, a.slots[i].slotMetrics, "slot %s", a.slots[i].name)
			}
		})
	}
}

// TestHashOnlyRunMatchesFullRun: a run whose trace only the hash reads
// (message events hashed straight from the envelope and shown to no
// watcher) has the same summary and observations as one that keeps the
// trace (every event built, recorded and shown to the metrics and
// checkers), for every built-in scenario.
func TestHashOnlyRunMatchesFullRun(t *testing.T) {
	for _, name := range scenario.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			for seed := uint64(1); seed <= 2; seed++ {
				full := run(t, sc, seed, Options{KeepTrace: true})
				fast := run(t, sc, seed, Options{})
				assert.Equal(t, full.Summary, fast.Summary, "seed %d", seed)
				assert.Equal(t, full.Observations, fast.Observations, "seed %d", seed)
			}
		})
	}
}
