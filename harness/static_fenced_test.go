package harness

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// A finding of `simrun explore rolling-restart-static --swarm default
// --set duration=9m --seeds 10000` (seed 7726, oracle client-fatal), turned
// into a scenario with the race at written instants: Kafka's behaviour, not
// a simulator bug. payments-3 is paused past its session and expired; it
// rejoins with an empty member id while the rebalance is held open (payments-1
// paused), so the coordinator gives instance payments-3 a NEW member id in
// memory; the join completes, but the leader (payments-0, 5 s assignor)
// crashes before its SyncGroup, so generation 2 is never written
// (GroupMetadataManager.storeGroup runs in SyncGroup, 3.6.0). The coordinator's
// broker crashes; the next one loads generation 1, where instance
// payments-3 still maps to its OLD member id. payments-3 rejoins with the
// new id: GroupCoordinator.validateCurrentMember (3.6.0) answers
// FENCED_INSTANCE_ID (isStaticMemberFenced) and the Java client's
// JoinGroupResponseHandler treats it as fatal ("we would not expect the
// instance id gets fenced, and hence we always treat this as a fatal
// error", AbstractCoordinator 3.6.0). KAFKA-10284 (2.7.0) persisted the
// replacement only for a static rejoin in Stable, not this path.
func TestStaticMemberFencedAfterFailoverBeforeSync(t *testing.T) {
	src, err := os.ReadFile("testdata/static-fenced-after-failover.yaml")
	require.NoError(t, err)
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		sc, err := scenario.Parse("static-fenced-after-failover.yaml", src)
		require.NoError(t, err)
		res, err := Run(sc, seed, Options{KeepTrace: true})
		require.NoError(t, err)
		var fatal, persisted2OnOld []TraceEvent
		for _, e := range res.Trace {
			if e.Kind == protocol.EvFatal {
				fatal = append(fatal, e)
			}
			if e.Kind == protocol.EvGroupPersisted && e.Node == "broker-1" && e.Gen >= 2 {
				persisted2OnOld = append(persisted2OnOld, e)
			}
		}
		assert.Empty(t, persisted2OnOld, "seed %d: generation 2 never written before the crash", seed)
		if assert.Len(t, fatal, 1, "seed %d", seed) {
			assert.Equal(t, "payments-3", fatal[0].Node, "seed %d", seed)
			assert.Equal(t, protocol.FencedInstanceID, fatal[0].Err, "seed %d", seed)
			assert.Greater(t, int64(fatal[0].At), int64(50e9), "seed %d: after the coordinator crash", seed)
		}

		// The control: the same run without the broker crash has no
		// fatal error (the new member id stays in the live coordinator).
		sc2, err := scenario.Parse("static-fenced-after-failover.yaml", src)
		require.NoError(t, err)
		sc2.Faults = sc2.Faults[:len(sc2.Faults)-1]
		res2, err := Run(sc2, seed, Options{})
		require.NoError(t, err)
		assert.Empty(t, res2.Summary.Groups[0].FatalErrors, "seed %d: no crash, no fence", seed)
	}
}

// A restart of a member whose host is down (explore's generic mix draws
// one now and then) must not start a process on a silent host: before, the
// new process ran for 20 s on a host whose every segment was lost, then
// the host-down's end started it a second time. Now it starts once, when
// the host is back.
func TestRestartOnDownHostWaitsForTheHost(t *testing.T) {
	src, err := os.ReadFile("testdata/restart-on-down-host.yaml")
	require.NoError(t, err)
	sc, err := scenario.Parse("restart-on-down-host.yaml", src)
	require.NoError(t, err)
	res, err := Run(sc, 1, Options{KeepTrace: true})
	require.NoError(t, err)
	var started []int64
	for _, e := range res.Trace {
		if e.Kind == tracing.EvProcess && e.Node == "payments-1" && e.State == "started" {
			started = append(started, int64(e.At))
		}
	}
	require.Len(t, started, 2, "the first start and the one when the host is back")
	assert.Equal(t, int64(50e9), started[1])
	assert.True(t, res.Summary.Groups[0].StableAtEnd)
}

// Patch releases resolve to the patch's behaviour, not the minor's first
// release: before, `kafka-2.6.1`/`2.6.2` gave the 2.6.0 broker (KAFKA-10284
// still there) and `kafka-2.8.1` the 2.8.0 broker (KAFKA-12890 still there),
// with a note claiming the era covered them.
func TestPatchReleaseProfilesReachTheBroker(t *testing.T) {
	fatal := func(profile string) int {
		sc := withProfile(t, "bug-kafka-10284", "coordinator", profile)
		res, err := Run(sc, 1, Options{})
		require.NoError(t, err)
		return len(res.Summary.Groups[0].FatalErrors)
	}
	assert.Equal(t, 1, fatal("kafka-2.6"))
	assert.Equal(t, 1, fatal("kafka-2.6.0"))
	assert.Equal(t, 0, fatal("kafka-2.6.1"))
	assert.Equal(t, 0, fatal("kafka-2.6.3"))
	stuck := func(profile string) int32 {
		sc := withProfile(t, "bug-kafka-12890", "coordinator", profile)
		res, err := Run(sc, 1, Options{})
		require.NoError(t, err)
		return res.Summary.Groups[0].FinalGeneration
	}
	assert.Equal(t, int32(2), stuck("kafka-2.8.0"), "KAFKA-12890 wedges the group at generation 2")
	assert.Greater(t, stuck("kafka-2.8.2"), int32(2), "2.8.1+ expires the member that never syncs")
}
