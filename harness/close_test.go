package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestCloseOrderInTheWorld: a graceful close in a running world follows
// ConsumerCoordinator.close / AbstractCoordinator.close @3.7.0: the
// auto-commit's OffsetCommit goes out and is answered, the revoke callback
// runs for its callback.time, and only then LeaveGroup is sent; the
// process ends after the LeaveGroup's response (awaitPendingRequests). A
// rolling restart whose downtime is shorter than that close starts the new
// process only once the old one has exited.
func TestCloseOrderInTheWorld(t *testing.T) {
	const cb = 3 * time.Second
	src := `name: close-order
duration: 60s
coordinator: {brokers: 1, profile: kafka-3.7}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.7}
    workload: {poll.interval: 10ms, poll.timeout: 10ms, callback.time: 3s}
    start: {at: 0s, stagger: 100ms}
faults: [{at: 30s, rolling-restart: g, interval: 20s, downtime: 1s}]
`
	res := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true})
	require.Empty(t, res.Summary.InvariantViolations)
	at := func(kind protocol.EventKind, node string, ok func(e TraceEvent) bool) time.Duration {
		for _, e := range res.Trace {
			if e.At >= protocol.Instant(0).Add(30*time.Second) && e.Kind == kind && e.Node == node && ok(e) {
				return time.Duration(e.At)
			}
		}
		t.Fatalf("no %s of %s after 30 s", kind, node)
		return 0
	}
	anyEvent := func(TraceEvent) bool { return true }
	const m = "g-0"
	commit := at(tracing.EvSend, m, func(e TraceEvent) bool { return e.API == protocol.APIOffsetCommit })
	commitResp := at(tracing.EvDeliver, m, func(e TraceEvent) bool { return e.API == protocol.APIOffsetCommit })
	revoked := at(protocol.EvRevoked, m, anyEvent)
	leave := at(tracing.EvSend, m, func(e TraceEvent) bool { return e.API == protocol.APILeaveGroup })
	closed := at(tracing.EvProcess, m, func(e TraceEvent) bool { return e.State == "closed" })
	started := at(tracing.EvProcess, m, func(e TraceEvent) bool { return e.State == "started" })
	// The rolling restart is the application's shutdown (Shutdown): close()
	// comes once the 10 ms processing step under way at 30 s ends.
	require.GreaterOrEqual(t, commit, 30*time.Second)
	require.LessOrEqual(t, commit, 30*time.Second+10*time.Millisecond, "close() starts with the synchronous auto-commit at the end of the processing step")
	require.Greater(t, commitResp, commit)
	require.Equal(t, commitResp+cb, revoked, "onLeavePrepare's callback runs once the commit is answered, for callback.time")
	require.Equal(t, revoked, leave, "LeaveGroup after the callback")
	require.Greater(t, closed, leave, "the process waits for the LeaveGroup's response")
	require.Equal(t, closed, started, "the restart (downtime 1 s) waits for the old process to exit")
	t.Logf("commit %v, answered %v, revoked %v, LeaveGroup %v, closed %v, restarted %v", commit, commitResp, revoked, leave, closed, started)
}
