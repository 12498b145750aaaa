package tracing_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/vtime"
)

// run runs sc for seed with its trace kept.
func run(t testing.TB, sc *scenario.Scenario, seed uint64) *harness.Result {
	t.Helper()
	res, err := harness.Run(sc, seed, harness.Options{KeepTrace: true})
	require.NoError(t, err)
	return res
}

// TestExplainPause: the explainer names the last heartbeat, the pause and
// the session timer behind a false eviction.
func TestExplainPause(t *testing.T) {
	sc := simtest.ParseSmall(t, "60s", 1, "  - {at: 20s, pause: g-1, for: 15s}\n")
	res := run(t, sc, 3)
	xs := tracing.Explain(sc, res.Trace, res.Observations, "g-1")
	require.NotEmpty(t, xs)
	var ev *tracing.Explanation
	for i := range xs {
		assert.Equal(t, "g-1", xs[i].Member)
		if xs[i].Kind == "eviction" {
			ev = &xs[i]
		}
	}
	require.NotNil(t, ev)
	text := ev.String()
	assert.True(t, ev.False)
	assert.Contains(t, text, "last heartbeat that arrived")
	assert.Contains(t, text, "fault pause g-1")
	assert.Contains(t, text, "session timer")
	assert.Contains(t, text, "false eviction")
	// The last heartbeat plus the session timeout is the eviction instant.
	hb := simtest.Find(res.Trace, func(e *tracing.Event) bool {
		return e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIHeartbeat && e.Peer == "g-1" && e.At < ev.At
	})
	require.NotEmpty(t, hb)
	assert.InDelta(t, float64(hb[len(hb)-1].At+vtime.Instant(10*time.Second)), float64(ev.At), float64(5*time.Millisecond))
	assert.Empty(t, tracing.Explain(sc, res.Trace, res.Observations, "g-0"), "g-0 was neither evicted nor lost its coordinator")
	assert.True(t, strings.Contains(xs[len(xs)-1].String(), "coordinator"))
}

// TestExplainLostHeartbeat is the case explain was built for: one
// Heartbeat request of g-0
// is lost at 21.006 s; 30 s later (request.timeout.ms) the request times out
// and the client marks its coordinator dead. explain must name the lost
// request (by its correlation id) and must not blame the Heartbeat sent at
// 48.006 s, whose response arrived 2 ms later.
func TestExplainLostHeartbeat(t *testing.T) {
	text := fmt.Sprintf(strings.Replace(simtest.Small, "start: {at: 0s", "start: {at: 1s", 1), "70s", 1,
		"  - {at: 21s, filter: {api: Heartbeat, member: g-0, direction: request, action: drop}, for: 500ms}\n")
	text = strings.Replace(text, "seed: 3\n", "seed: 3\ntiming: exact\n", 1)
	sc, err := scenario.Parse("obs.yaml", []byte(text))
	require.NoError(t, err)
	res := run(t, sc, 3)
	xs := tracing.Explain(sc, res.Trace, res.Observations, "g-0")
	// The request timeout's mark, then one more: g-0's next poll() (at the
	// FindCoordinator answer, 2 ms later) finds the new connection's reconnect
	// backoff running and marks the coordinator unknown again
	// (checkAndGetCoordinator). A lazy poll replay that skipped that poll
	// left one mark: the second one is what firing every poll gives.
	require.Len(t, xs, 2, "two dead marks, no eviction")
	assert.Contains(t, xs[1].String(), "checkAndGetCoordinator: coordinator unavailable")
	x := xs[0]
	assert.Equal(t, "coordinator-dead", x.Kind)
	assert.True(t, x.False)
	text = x.String()
	// The lost request and the last answered Heartbeat before the timeout,
	// from the trace (the TCP model's connection set-up shifts the phase by
	// a few ms from the 21.006 s / 48.006 s).
	var lost, answered tracing.Event
	for _, e := range res.Trace {
		if e.Kind == tracing.EvDrop && e.Req && e.API == protocol.APIHeartbeat && e.Node == "g-0" {
			lost = e
		}
		if e.Kind == tracing.EvDeliver && !e.Req && e.API == protocol.APIHeartbeat && e.Node == "g-0" && e.At < x.At {
			answered = e
		}
	}
	require.NotZero(t, lost.Corr)
	require.Greater(t, answered.At, lost.At)
	assert.InDelta(t, 21.0, simtest.Secs(lost.At), 0.1, "the Heartbeat lost just after 21 s")
	assert.Contains(t, text, fmt.Sprintf("the Heartbeat request sent at %s (corr %d) had no answer at %s", tracing.FmtS(lost.At), lost.Corr, tracing.FmtS(x.At)))
	assert.Contains(t, text, fmt.Sprintf("the request was dropped at %s (filter)", tracing.FmtS(lost.At)))
	sentAnswered := tracing.SendTime(res.Trace, indexOf(res.Trace, answered))
	require.Greater(t, sentAnswered, lost.At)
	assert.NotContains(t, text, "sent at "+tracing.FmtS(sentAnswered), "the Heartbeat answered at %s is not blamed", tracing.FmtS(answered.At))
}

func indexOf(trace []tracing.Event, e tracing.Event) int {
	for i := range trace {
		if trace[i].At == e.At && trace[i].Kind == e.Kind && trace[i].Corr == e.Corr && trace[i].Node == e.Node {
			return i
		}
	}
	return -1
}

// A member a rolling restart's `set:` moved to the consumer protocol is
// expired by the broker's group.consumer.session.timeout.ms, not by the
// classic cohort's session.timeout.ms: explain says which by the member's
// last group request, not by its cohort.
func TestExplainSessionKeyFollowsTheMembersProtocol(t *testing.T) {
	src := `name: upgraded-then-crashed
duration: 150s
timing: exact
coordinator: {brokers: 1, profile: kafka-4.0}
topics:
  - {name: orders, partitions: 8}
groups:
  - id: payments
    members: 3
    subscribe: [orders]
    client: {profile: kafka-4.0, session.timeout.ms: 10000, partition.assignment.strategy: [cooperative-sticky]}
faults:
  - {at: 20s, rolling-restart: payments, interval: 1s, downtime: 1s, set: {group.protocol: consumer}}
  - {at: 40s, crash: payments-0}
`
	sc, err := scenario.Parse("upgraded.yaml", []byte(src))
	require.NoError(t, err)
	res, err := harness.Run(sc, 1, harness.Options{KeepTrace: true})
	require.NoError(t, err)
	xs := tracing.Explain(sc, res.Trace, res.Observations, "payments-0")
	var lines []string
	for _, x := range xs {
		if x.Kind == "eviction" {
			lines = append(lines, x.Lines...)
		}
	}
	require.NotEmpty(t, lines, "payments-0 is evicted")
	assert.Contains(t, strings.Join(lines, "\n"), "group.consumer.session.timeout.ms 45 s")
}

// simrun explain names the TCP chain: the heartbeat transmissions lost to
// the partition and retransmitted, the session timer, the connection the
// member closed.
func TestExplainNamesTheTCPChain(t *testing.T) {
	sc := simtest.Parse(t, fmt.Sprintf(simtest.NetTimelineTmpl, 1, 10000, "{at: 60s, partition: [g-1, coordinator], for: 20s}"))
	res := run(t, sc, 1)
	xs := tracing.Explain(sc, res.Trace, res.Observations, "g-1")
	var ev, dead *tracing.Explanation
	for i := range xs {
		switch {
		case xs[i].Kind == "eviction" && ev == nil:
			ev = &xs[i]
		case xs[i].Kind == "coordinator-dead" && dead == nil:
			dead = &xs[i]
		}
	}
	require.NotNil(t, ev)
	require.NotNil(t, dead)
	text := ev.String()
	assert.Contains(t, text, "tcp: Heartbeat request g-1→broker-0")
	assert.Contains(t, text, "transmission lost (partition)")
	assert.Contains(t, text, "fault partition g-1|coordinator at 60.000 s")
	assert.True(t, ev.False)
	text = dead.String()
	assert.Contains(t, text, "connection to broker-0 (coordinator) closed")
	assert.Contains(t, text, "session timer")
	assert.True(t, dead.False)
}

// TestExplainPollGapEviction is the cooperative poll-gap eviction (a
// member evicted while processing, not while paused): a
// member learns of a rebalance from a heartbeat, sends its JoinGroup inside
// poll() and goes back to processing (12 s per poll, cooperative-sticky: it
// keeps its partitions). The join phase completes while it processes; the
// coordinator re-arms its session when it answers the JoinGroup, and the
// response waits for the application thread's next poll(), because the
// heartbeat thread is disabled while the member has not joined
// (AbstractCoordinator.HeartbeatThread.run @3.7.0: hasNotJoinedGroup ->
// disable). 10 s later the session expires. explain tells that story: the
// instant the session was re-armed, the application thread's gap, the
// eviction — and prints durations as "12 s", never Go's "12.001s".
func TestExplainPollGapEviction(t *testing.T) {
	sc := simtest.Parse(t, `
name: pollgap
duration: 90s
timing: exact
topics:
  - {name: orders, partitions: 6}
groups:
  - id: g
    members: 3
    subscribe: [orders]
    client:
      profile: kafka-3.x
      session.timeout.ms: 10000
      heartbeat.interval.ms: 3000
      partition.assignment.strategy: cooperative-sticky
    workload: {poll.interval: 12s}
faults:
  - {at: 30s, join: g}
`)
	res := run(t, sc, 1)
	xs := tracing.Explain(sc, res.Trace, res.Observations, "g-2")
	require.Len(t, xs, 1)
	text := xs[0].String()
	assert.Equal(t, "eviction", xs[0].Kind)
	assert.True(t, xs[0].False)
	assert.Contains(t, text, "session re-armed: the join phase completed and the coordinator answered the member's JoinGroup at 54.017 s")
	assert.Contains(t, text, "waited for the application thread's next poll(): the heartbeat thread is disabled while the member rejoins (PREPARING_REBALANCE)")
	assert.Contains(t, text, "out of poll() (processing the records of its last poll) until 66.016 s: 12 s after the response arrived, longer than the session (10 s)")
	assert.Contains(t, text, "session timer (session.timeout.ms 10 s) at 64.017 s")
	assert.NotRegexp(t, `[0-9]\.[0-9]{4,}s\b|[0-9]s\)`, text, "durations in the tool's format, not Go's")
	// A plain pause is not told as a poll gap.
	pause := simtest.ParseSmall(t, "60s", 1, "  - {at: 20s, pause: g-1, for: 15s}\n")
	pres := run(t, pause, 3)
	px := tracing.Explain(pause, pres.Trace, pres.Observations, "g-1")
	require.NotEmpty(t, px)
	for _, x := range px {
		assert.NotContains(t, x.String(), "session re-armed")
	}
}
