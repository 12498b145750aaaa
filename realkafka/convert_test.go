package realkafka

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
)

// TestConvertCapturedRun converts a captured real run (testdata/smoke.yaml
// on broker 4.3.1 with kafka-clients 3.7.2; the logs kept are the lines the
// parsers read, plus the driver events, the fault log and meta.json) and
// checks every figure against the values worked out by hand from those
// files (t0 = 1796163147101, end = t0 + 45000):
//
//   - episode 1 opens at the first Preparing (…149325, 2224 ms) and closes at
//     the last gen-1 partitions_assigned (payments-1, …155418, 8317 ms): 6093 ms;
//   - payments-1 is SIGKILLed at …167112 (first fault 20011 ms); the broker
//     evicts it at …171505 and prepares at …171507 (24406 ms); the three
//     survivors' gen-2 assignments end at …171730 (24629 ms): 223 ms;
//   - unowned partition-seconds: 8 partitions unowned from the first start
//     until each member's gen-1 assignment: 2×8274 + 2×8289 + 2×8307 +
//     2×8317 ms = 66.374; after the kill: orders-2 4618 ms and orders-3 4607
//     ms (payments-1's until re-assigned), orders-4/5 82 ms each, orders-0/1
//     31 ms each, orders-6/7 27 ms each (eager revoke → assign) = 9.505;
//     total 75.879;
//   - moves: orders-2 (payments-1 → payments-0) and orders-3 (→ payments-2);
//   - member-hours: 45000 + 19961 + 44899 + 44850 ms = 0.042975 h;
//   - client rebalances: 4 assignments at gen 1 + 3 at gen 2.
//
// Definitions as harness/metrics.go (DESIGN.md "What a run measures").
func TestConvertCapturedRun(t *testing.T) {
	res := convertValid(t, "run-smoke-4.3.1")
	require.Len(t, res.Groups, 1)
	g := res.Groups[0]
	require.Equal(t, []harness.Rebalance{
		{Generation: 1, StartMs: 2224, EndMs: 8317, DurationMs: 6093, Trigger: "join", Members: 4, FirstGeneration: 1, Generations: 1},
		{Generation: 2, StartMs: 24406, EndMs: 24629, DurationMs: 223, Trigger: "session-expired", Members: 3, FirstGeneration: 2, Generations: 1},
	}, g.Rebalances)
	require.Equal(t, 3158.0, g.RebalanceDurationMs.Mean)
	require.Equal(t, int64(20011), g.FirstFaultMs)
	require.Equal(t, 1, g.Evictions)
	require.Equal(t, 0, g.FalseEvictions, "the evicted process was SIGKILLed")
	require.Equal(t, 0, g.Leaves)
	require.Equal(t, 75.879, g.UnownedPartitionSeconds)
	require.Equal(t, 9.505, g.UnownedPartitionSecondsAfterFirstFault)
	require.Equal(t, 2, g.PartitionsMoved)
	require.Equal(t, 2, g.PartitionsMovedAfterFirstFault)
	require.Equal(t, 0.0, g.DoubleOwnedPartitionSeconds)
	require.Equal(t, 0.042975, g.MemberHours)
	require.Equal(t, 7, g.ClientRebalances)
	require.Equal(t, 2, g.Generations)
	require.Equal(t, int32(2), g.FinalGeneration)
	require.True(t, g.StableAtEnd)
	require.Equal(t, 0, g.CoordinatorDeadMarks)
	// JVM exec → ready: 6445, 5928, 7001, 6510 ms; go (a start's done_ms:
	// the go is the last thing it does) → first "(Re-)joining group": 1996,
	// 1850, 2057, 1695 ms.
	require.Equal(t, 6471.0, res.Real.JVMToReadyMs.Mean)
	require.Equal(t, 1899.5, res.Real.StartToFirstJoinMs.Mean)
	require.Equal(t, "4.3.1", res.Real.BrokerVersion)
}

// copyRun copies a captured run into a temporary directory.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
	return dst
}

// TestConvertHostDownAndAddPartitions: the captured smoke run with its
// SIGKILL logged as a host-down (the testbed's host-down kills the JVM with
// its host) converts to the same figures — the eviction is not false, the
// process's member-hours end at the host-down — and an add-partitions to 12
// at t0 + 40 s adds 4 partitions unowned for the last 5 s (nobody is
// assigned them before the end): 4 × 5 s = 20 partition-seconds more.
func TestConvertHostDownAndAddPartitions(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run-smoke-4.3.1"))
	f := filepath.Join(dir, "faults.jsonl")
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	s := strings.Replace(string(b), `"kind":"kill"`, `"kind":"host-down"`, 1)
	require.NotEqual(t, string(b), s)
	s += `{"at_ms":40000,"ts_ms":1796163187101,"done_ms":1796163187102,"kind":"add-partitions","target":"orders","value":"12","fault":"{at: 40s, add-partitions: orders}"}` + "\n"
	require.NoError(t, os.WriteFile(f, []byte(s), 0o644))
	res, err := Convert(dir)
	require.NoError(t, err)
	g := res.Groups[0]
	require.Equal(t, 1, g.Evictions)
	require.Equal(t, 0, g.FalseEvictions, "the evicted process went down with its host")
	require.Equal(t, 0.042975, g.MemberHours)
	require.Equal(t, 95.879, g.UnownedPartitionSeconds)
	require.Equal(t, 29.505, g.UnownedPartitionSecondsAfterFirstFault)
}

// TestConvertHeartbeatGapsAndNotices converts a captured repetition of
// cal-leave (broker and kafka-clients 3.9.1, DEBUG heartbeat lines, read
// from its logs.tar.gz; t0 = 1796622049659, payments-2 SIGTERMed at
// …065153) and checks the measured facts against the lines, by hand:
//
//   - first JoinGroup ("(Re-)joining group"), ms after t0: payments-0 114,
//     -1 133, -2 129, -3 111, -4 130, -5 115;
//   - the survivors' first notice after the SIGTERM ("Request joining
//     group due to: group is already rebalancing", from the heartbeat
//     thread): -0 24646, -1 24671, -3 24630, -4 24656, -5 24559 (payments-2,
//     the member the fault touched, is left out) — a 112 ms spread;
//   - heartbeat gaps within a generation: 39 gaps from 3012 to 3076 ms,
//     118616 ms in all: mean 3041.4 ms;
//   - each member's last heartbeat before the fault (its cycle's phase).
//
// Before: none of these was measured.
func TestConvertHeartbeatGapsAndNotices(t *testing.T) {
	res := convertValid(t, "run-leave-3.9.1")
	require.Equal(t, map[string]int64{"payments-0": 114, "payments-1": 133, "payments-2": 129, "payments-3": 111, "payments-4": 130, "payments-5": 115}, res.Real.FirstJoinMs)
	require.Equal(t, map[string]int64{"payments-0": 24646, "payments-1": 24671, "payments-3": 24630, "payments-4": 24656, "payments-5": 24559}, res.Real.RebalanceNoticeMs)
	require.Equal(t, 3041.4, res.Real.HeartbeatGapMs)
	// The last "Sending Heartbeat request" at or before the SIGTERM
	// (…065153): -0 …065104, -1 …065106, -2 …065051, -3 …065031, -4
	// …065028, -5 …064979.
	require.Equal(t, map[string]int64{"payments-0": 15445, "payments-1": 15447, "payments-2": 15392, "payments-3": 15372, "payments-4": 15369, "payments-5": 15320}, res.Real.LastHeartbeatMs)
	require.Equal(t, 39, res.Real.HeartbeatGaps)
	require.Equal(t, 1, res.Groups[0].Leaves)
	for _, n := range res.Real.NotMeasured {
		require.NotContains(t, n, "heartbeat_gap_ms", "the repetition has its heartbeat lines")
	}
}

// TestRestartedMemberOutlivesItsPredecessorsClose: a restart of payments-2
// at 20 s in the captured cal-leave run, before the old process's own
// "closed" event (…071281, 21.6 s): the predecessor ends at the restart,
// its late close ends nothing of the new process, so payments-2 is a live
// member from 0 to 35 s like the other five: 6 × 35 s = 0.058333 member-h.
// Before: the old process's close ended the new one (5 × 35 s + 21.6 s).
func TestRestartedMemberOutlivesItsPredecessorsClose(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run-leave-3.9.1"))
	f := filepath.Join(dir, "faults.jsonl")
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	s := string(b) + `{"at_ms":20000,"ts_ms":1796622069659,"done_ms":1796622069659,"kind":"start","target":"payments-2","pid":99999,"fault":"{at: 20s, restart: payments-2}"}` + "\n"
	require.NoError(t, os.WriteFile(f, []byte(s), 0o644))
	res, err := Convert(dir)
	require.NoError(t, err)
	require.Equal(t, 0.058333, res.Groups[0].MemberHours)
}

// TestConsumerGroupSettlesWithEveryLiveProcess converts a captured
// repetition of cal-consumer-crash (broker and clients 4.4.0, the consumer
// protocol; t0 = 1796622279728) and closes each episode by the harness's
// rule (harness/metrics.go maybeCloseRebalance): the group Stable and every
// live member's client STABLE at the last epoch. By hand, ms after t0:
//
//   - the initial join opens at the first epoch bump (1789); the broker has
//     all six members STABLE at epoch 7 at 9625, but payments-5's client
//     runs its onPartitionsAssigned and logs ACKNOWLEDGING → STABLE at
//     epoch 7 only at 9875: one episode of 8086 ms;
//   - payments-2 is SIGKILLed and fenced on session expiry (bump to 8 at
//     59867). payments-5, -0 and -4 keep their partitions: the broker's
//     "new assignment state: epoch=8 … state=STABLE" lines (59889, 64846,
//     64853) print the assignment they had, so their STABLE clients take
//     epoch 8 without a line of their own; payments-3 and -1 get a
//     partition each (lines at 61222 and 64860, the group Stable at the
//     latter), reconcile and log STABLE at epoch 8 at 61615 and 65923:
//     6056 ms.
//
// Before: 7836 and 4993 ms (the broker's last STABLE line closed the
// episode, before the last members' callbacks).
func TestConsumerGroupSettlesWithEveryLiveProcess(t *testing.T) {
	res := convertValid(t, "run-consumer-crash-4.4.0")
	got := rebalances(res, func(r harness.Rebalance) int64 { return r.StartMs })
	require.Equal(t, [][3]any{{"join", int64(1789), int64(8086)}, {"session-expired", int64(59867), int64(6056)}}, got)
	require.Equal(t, 1, res.Groups[0].Evictions)
	require.True(t, res.Groups[0].StableAtEnd)
}

// TestConsumerEpisodeWaitsForTheCallbacks converts repetition 3 of
// cal-consumer-crash on 4.4.0 (t0 = 1796626842958): payments-2's member is
// fenced at …903751 and the group epoch bumped to 8 at …903752 (60794 ms).
// The broker's last "new assignment state: epoch=8 … state=STABLE" line is
// payments-1's at …908749 (65791 ms), but payments-5 and payments-0, which
// got the fenced member's partitions, run onPartitionsAssigned and log
// ACKNOWLEDGING → STABLE at epoch 8 only at …909107 and …909156: the
// episode ends at 66198 ms, 5404 ms. Before: 4997 ms, closed at the
// broker's line. The initial join likewise ends at payments-2's STABLE at
// epoch 7 (…853749, 10791 ms), not at the broker's last STABLE line
// (…853700, 10742 ms): 10475 ms from the first bump (316 ms), was 10426.
func TestConsumerEpisodeWaitsForTheCallbacks(t *testing.T) {
	res := convertValid(t, "run-consumer-crash-4.4.0-rep3")
	got := rebalances(res, func(r harness.Rebalance) int64 { return r.EndMs })
	require.Equal(t, [][3]any{{"join", int64(10791), int64(10475)}, {"session-expired", int64(66198), int64(5404)}}, got)
}

// TestConvertFailoverRecovery converts a captured repetition of
// cal-coordinator-kill (3 brokers and kafka-clients 3.9.1; t0 =
// 1796622850126): broker-1, the coordinator, is SIGKILLed at …868050; the
// controller fences it and broker-2 logs "Elected as the group coordinator
// for partition 0" at 05:54:35,214 (…875214, 25088 ms) and "Finished
// loading …" at …875263. The members' first successful Heartbeat or
// SyncGroup answers after the load: payments-5 …875465, -2 …875505, -4
// …875795, -1 …876057, -3 …876114, -0 …876255; the group stays Stable
// (no rebalance), so it has recovered at …876255: 1041 ms after the
// election. Before: recovery_ms was not converted (no failovers at all).
func TestConvertFailoverRecovery(t *testing.T) {
	res := convertValid(t, "run-coordinator-kill-3.9.1")
	g := res.Groups[0]
	require.Equal(t, []harness.Failover{{AtMs: 25088, RecoveryMs: 1041}}, g.Failovers)
	require.Len(t, g.Rebalances, 1, "only the initial join: a coordinator move is no rebalance")
	require.Equal(t, 0, g.Evictions)
	// The heartbeat cadence without the retries after the dead marks (a
	// mean of 2558 ms with them, shorter than the 3 s interval).
	require.InDelta(t, 3050, res.Real.HeartbeatGapMs, 50)
}

// TestConvertBrokerFirstJoin: each member's first join as the coordinator
// saw it, by hand from the captured lines:
//
//   - cal-leave 3.9.1 (t0 05:40:49,659): "Created a new member id
//     payments-N-…" at ,854 (payments-0), ,865 (-3), ,866 (-5), ,870 (-4),
//     ,871 (-1, -2): 195, 206, 207, 211, 212, 212 ms — the clients had
//     sent their first JoinGroup at 111–133 ms (first_join_ms);
//   - cal-coordinator-kill 3.9.1, packed before the testbed kept that
//     broker line: the clients' "need to re-join with the given member-id"
//     (their receipt of MEMBER_ID_REQUIRED), 525–554 ms, and a note saying so;
//   - cal-consumer-crash 4.4.0 (consumer protocol): "Member M joins the
//     consumer group", M mapped by each client's "Member M with epoch 0
//     transitioned from UNSUBSCRIBED to JOINING".
func TestConvertBrokerFirstJoin(t *testing.T) {
	res, err := Convert(filepath.Join("testdata", "run-leave-3.9.1"))
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"payments-0": 195, "payments-1": 212, "payments-2": 212, "payments-3": 206, "payments-4": 211, "payments-5": 207}, res.Real.BrokerFirstJoinMs)
	for _, n := range res.Real.Notes {
		require.NotContains(t, n, "broker_first_join_ms")
	}

	res, err = Convert(filepath.Join("testdata", "run-coordinator-kill-3.9.1"))
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"payments-0": 554, "payments-1": 546, "payments-2": 525, "payments-3": 552, "payments-4": 541, "payments-5": 554}, res.Real.BrokerFirstJoinMs)
	require.Contains(t, strings.Join(res.Real.Notes, "\n"), "broker_first_join_ms: for some members the client's receipt of MEMBER_ID_REQUIRED")

	res, err = Convert(filepath.Join("testdata", "run-consumer-crash-4.4.0"))
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"payments-0": 2971, "payments-1": 3283, "payments-2": 3146, "payments-3": 1158, "payments-4": 2926, "payments-5": 3146}, res.Real.BrokerFirstJoinMs)

	// cal-migration 4.4.0: each member's first process is classic (its
	// MEMBER_ID_REQUIRED receipt, 494–628 ms); the consumer-protocol joins
	// of the restarted processes (18.9–20.6 s) are not first joins. Before:
	// those were taken for every member [calib, 06:20].
	res, err = Convert(filepath.Join("testdata", "run-migration-4.4.0"))
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"payments-0": 591, "payments-1": 534, "payments-2": 494, "payments-3": 628, "payments-4": 538, "payments-5": 528}, res.Real.BrokerFirstJoinMs)
}

// unpackRun copies a captured repetition with its logs.tar.gz unpacked
// into brokers/ and members/ (the raw layout Convert also reads), so a
// test can edit a log line.
func unpackRun(t *testing.T, src string) string {
	t.Helper()
	dir := copyRun(t, src)
	logs, err := openLogs(dir)
	require.NoError(t, err)
	for _, pat := range []string{"brokers/*.log", "members/*.log", "members/*.events.jsonl"} {
		for _, f := range logs.glob(pat) {
			p := filepath.Join(dir, filepath.FromSlash(f))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(logs.lines(f), "\n")+"\n"), 0o644))
		}
	}
	require.NoError(t, os.Remove(filepath.Join(dir, ArchiveName)))
	return dir
}

// TestConvertJoinCosts: the classic join's costs, by hand from the
// captured cal-leave 3.9.1 lines (range, eager; leader payments-3; the
// loopback's 0.05 ms one way taken off):
//
//   - generation 1: "Stabilized group payments generation 1" 05:40:55,912
//     (…055912), "Assignment received from leader payments-3-… for
//     generation 1" ,982: 70 − 0.1 = 69.9 ms; the first "Successfully
//     synced group in generation Generation{generationId=1" payments-2's
//     at …056018: 36 − 0.05 = 35.95 ms;
//   - generation 2 (after payments-2's leave): stabilized 05:41:14,821,
//     assignment ,834: 12.9 ms; first synced payments-5's …074838, on its
//     heartbeat thread: 3.95 ms.
//
// With payments-3's revocation before generation 2 taken out of its driver
// events the leader keeps orders-6/7 through the rebalance (as a
// cooperative member does) and generation 2's assignment time is left
// out: its JoinGroup answer waits for its next poll(). A consumer-protocol
// repetition has neither and says so.
func TestConvertJoinCosts(t *testing.T) {
	res, err := Convert(filepath.Join("testdata", "run-leave-3.9.1"))
	require.NoError(t, err)
	require.Equal(t, &JoinCost{Mean: 41.4, N: 2, Values: []float64{69.9, 12.9}}, res.Real.AssignMs)
	require.Equal(t, &JoinCost{Mean: 19.95, N: 2, Values: []float64{35.95, 3.95}}, res.Real.SyncAppendMs)
	for _, n := range res.Real.NotMeasured {
		require.NotContains(t, n, "assign_ms")
		require.NotContains(t, n, "sync_append_ms")
	}

	dir := unpackRun(t, filepath.Join("testdata", "run-leave-3.9.1"))
	ev := filepath.Join(dir, "members", "payments-3.events.jsonl")
	b, err := os.ReadFile(ev)
	require.NoError(t, err)
	var kept []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.Contains(l, `"partitions_revoked"`) {
			kept = append(kept, l)
		}
	}
	require.Len(t, kept, strings.Count(string(b), "\n")-1, "one revocation taken out")
	require.NoError(t, os.WriteFile(ev, []byte(strings.Join(kept, "\n")+"\n"), 0o644))
	res, err = Convert(dir)
	require.NoError(t, err)
	require.Equal(t, &JoinCost{Mean: 69.9, N: 1, Values: []float64{69.9}, LeftOut: 1}, res.Real.AssignMs)
	require.Equal(t, &JoinCost{Mean: 19.95, N: 2, Values: []float64{35.95, 3.95}}, res.Real.SyncAppendMs)

	res, err = Convert(filepath.Join("testdata", "run-consumer-crash-4.4.0"))
	require.NoError(t, err)
	require.Nil(t, res.Real.AssignMs)
	require.Nil(t, res.Real.SyncAppendMs)
	nm := strings.Join(res.Real.NotMeasured, "\n")
	require.Contains(t, nm, "assign_ms (no classic generation")
	require.Contains(t, nm, "sync_append_ms (no classic generation")
}

// convertValid converts the captured repetition testdata/dir and requires a
// valid result.
func convertValid(t *testing.T, dir string) *Result {
	t.Helper()
	res, err := Convert(filepath.Join("testdata", dir))
	require.NoError(t, err)
	require.True(t, res.Valid, res.InvalidReason)
	return res
}

// rebalances lists the first group's rebalances as (trigger, at(r),
// duration).
func rebalances(res *Result, at func(harness.Rebalance) int64) [][3]any {
	var got [][3]any
	for _, r := range res.Groups[0].Rebalances {
		got = append(got, [3]any{r.Trigger, at(r), r.DurationMs})
	}
	return got
}

// TestConvertConsumerCosts: the consumer coordinator's costs, by hand from
// the captured cal-consumer-crash 4.4.0 rep 1 lines (epoch ms, the veth's
// 0.05 ms one way taken off the answers):
//
//   - the assignor: epoch 2 "… with 'uniform' assignor in 142ms" (the
//     coordinator's first), epochs 3, 7 and 8 "in 0ms";
//   - the first member, 2lNRtay2… (payments-3): "joins the consumer
//     group" …280886, its "new assignment state" …281671: 785 ms; its
//     client's "transitioned from JOINING to RECONCILING" …283782: 2111 −
//     0.05 = 2110.95 ms;
//   - the others in join order: 915awve0… (payments-4) state …282698,
//     answer …283875: 1176.95; WBRriY5V… (payments-0) …282873 → …283780:
//     906.95; Gq4T3a1A… (payments-2, joined at the same ms as ucZJW5gr…,
//     ids in order) …282874 → …283774: 899.95; ucZJW5gr… (payments-5)
//     …282998 → …283815: 816.95; L6vKQwCI… (payments-1) …283102 →
//     …283731: 628.95.
//
// A migration's members' first processes are classic: no first heartbeat
// or answer, the assignor runs only.
func TestConvertConsumerCosts(t *testing.T) {
	res := convertValid(t, "run-consumer-crash-4.4.0")
	r := res.Real
	require.Equal(t, &JoinCost{Mean: 142, N: 1, Values: []float64{142}}, r.ConsumerFirstAssignMs)
	require.Equal(t, &JoinCost{Mean: 0, N: 3, Values: []float64{0, 0, 0}}, r.ConsumerAssignMs)
	require.Equal(t, &JoinCost{Mean: 785, N: 1, Values: []float64{785}}, r.ConsumerFirstHeartbeatMs)
	require.Equal(t, &JoinCost{Mean: 2110.95, N: 1, Values: []float64{2110.95}}, r.ConsumerFirstAnswerMs)
	require.Equal(t, &JoinCost{Mean: 885.95, N: 5, Values: []float64{1176.95, 906.95, 899.95, 816.95, 628.95}}, r.ConsumerJoinAnswerMs)

	res, err := Convert(filepath.Join("testdata", "run-migration-4.4.0"))
	require.NoError(t, err)
	require.NotNil(t, res.Real.ConsumerFirstAssignMs)
	require.Nil(t, res.Real.ConsumerFirstHeartbeatMs)
	require.Nil(t, res.Real.ConsumerFirstAnswerMs)
	require.Nil(t, res.Real.ConsumerJoinAnswerMs)

	// A classic repetition has none.
	res, err = Convert(filepath.Join("testdata", "run-leave-3.9.1"))
	require.NoError(t, err)
	require.Nil(t, res.Real.ConsumerFirstAssignMs)
	require.Nil(t, res.Real.ConsumerAssignMs)
}
