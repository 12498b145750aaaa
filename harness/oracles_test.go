package harness

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// oracleBase is a 3-member group on 6 partitions, 2.x client defaults
// (session 10 s, request timeout 30 s, max.poll.interval.ms 40 s: settle
// bound 10 + 45 + 30 = 85 s), with a crash at
// 10 s so the oracles know when the last fault ended.
const oracleBase = `name: oracle-unit
duration: 300s
coordinator: {brokers: 1, profile: kafka-2.x}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: kafka-2.x, max.poll.interval.ms: 40000}
faults:
  - {at: 10s, crash: g-2}
%s`

// synth is a synthetic trace for the oracles, built event by event.
type synth struct {
	o      *oracleSet
	ids    map[string]string // process → its member id
	nextID int
}

func newSynth(t *testing.T, extra string) *synth {
	sc := simtest.Parse(t, fmt.Sprintf(oracleBase, extra))
	return &synth{o: newOracleSet(sc, ExpandFaults(sc, 1)), ids: map[string]string{}}
}

func (s *synth) ev(at time.Duration, e protocol.Event) {
	s.o.observe(&TraceEvent{At: sim.Instant(at), Event: typedText(e)})
}

func (s *synth) start(at time.Duration, p string) {
	s.ev(at, protocol.Event{Kind: tracing.EvProcess, Node: p, Group: "g", State: "started"})
}

func (s *synth) crash(at time.Duration, p string) {
	s.ev(at, protocol.Event{Kind: tracing.EvProcess, Node: p, Group: "g", State: "crashed"})
}

func (s *synth) join(at time.Duration, p string) {
	s.nextID++
	id := fmt.Sprintf("%s-id%d", p, s.nextID)
	s.ids[p] = id
	s.ev(at, protocol.Event{Kind: protocol.EvMemberAdded, Node: "broker-0", Group: "g", Peer: id, Detail: p})
}

func (s *synth) remove(at time.Duration, p string) {
	s.ev(at, protocol.Event{Kind: protocol.EvMemberRemoved, Node: "broker-0", Group: "g", Peer: s.ids[p]})
	delete(s.ids, p)
}

func (s *synth) state(at time.Duration, st string) {
	s.ev(at, protocol.Event{Kind: protocol.EvGroupState, Node: "broker-0", Group: "g", State: st})
}

func (s *synth) gen(at time.Duration) {
	s.ev(at, protocol.Event{Kind: protocol.EvGenerationComplete, Node: "broker-0", Group: "g"})
}

func (s *synth) assign(at time.Duration, p string, parts ...int32) {
	tps := []protocol.TopicPartition{}
	for _, i := range parts {
		tps = append(tps, protocol.TopicPartition{Topic: "t", Partition: i})
	}
	s.ev(at, protocol.Event{Kind: protocol.EvAssigned, Node: p, Group: "g", Partitions: tps})
}

// healthy: g-0..g-2 start and join; g-2 crashes at 10 s and is removed at
// 20 s; g-0 and g-1 share the 6 partitions from 21 s, Stable.
func (s *synth) healthy() {
	for _, p := range []string{"g-0", "g-1", "g-2"} {
		s.start(0, p)
		s.join(10*time.Millisecond, p)
	}
	s.state(3*time.Second, "Stable")
	s.gen(3 * time.Second)
	s.crash(10*time.Second, "g-2")
	s.remove(20*time.Second, "g-2")
	s.state(20*time.Second, "PreparingRebalance")
	s.gen(21 * time.Second)
	s.state(21*time.Second, "Stable")
	s.assign(21*time.Second, "g-0", 0, 1, 2)
	s.assign(21*time.Second, "g-1", 3, 4, 5)
}

func (s *synth) finish(at time.Duration) []Finding {
	var members []string
	for _, p := range []string{"g-0", "g-1", "g-2"} {
		if id, ok := s.ids[p]; ok {
			members = append(members, id)
		}
	}
	for id, p := range s.o.owner { // leaked ids the test left in place
		if _, ok := s.ids[p]; !ok && strings.HasSuffix(id, "-leak") {
			members = append(members, id)
		}
	}
	return s.o.finish(endState{now: at, groups: []endGroup{{id: "g", procs: []string{"g-0", "g-1", "g-2"}, members: members}}})
}

func oracles(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Oracle)
	}
	return out
}

// TestOraclesSilentOnHealthyRun: a crash handled the way Kafka handles it
// (expiry, one rebalance, the survivors share the partitions) fires nothing.
func TestOraclesSilentOnHealthyRun(t *testing.T) {
	s := newSynth(t, "")
	s.healthy()
	assert.Empty(t, s.finish(300*time.Second))
}

// TestOracleFiresAndStaysSilent: each oracle, one synthetic trace where its
// symptom shows (and only that oracle fires) and one just inside its
// threshold (nothing fires).
func TestOracleFiresAndStaysSilent(t *testing.T) {
	const end = 300 * time.Second
	cases := []struct {
		oracle string
		extra  string // oracles: block
		fire   func(s *synth)
		silent func(s *synth)
	}{
		{
			oracle: scenario.OracleGroupStuck, extra: "oracles: {group-stuck: 60s}\n",
			// The group leaves Stable at 100 s and never returns: 200 s > 60 s.
			fire: func(s *synth) { s.state(100*time.Second, "CompletingRebalance") },
			// It leaves Stable at 250 s: 50 s ≤ 60 s at the end.
			silent: func(s *synth) { s.state(250*time.Second, "CompletingRebalance") },
		},
		{
			oracle: scenario.OracleRebalanceStorm, extra: "oracles: {rebalance-storm: 3, rebalance-storm.window: 30s}\n",
			// 5 generations in 20 s, long after the crash's settle bound
			// (10 s + 85 s): more than 3 in 30 s.
			fire: func(s *synth) {
				for i := 0; i < 5; i++ {
					s.gen(200*time.Second + time.Duration(i)*5*time.Second)
				}
			},
			// 3 generations in 30 s: not more than 3.
			silent: func(s *synth) {
				for i := 0; i < 3; i++ {
					s.gen(200*time.Second + time.Duration(i)*10*time.Second)
				}
			},
		},
		{
			oracle: scenario.OracleNeverRejoins, extra: "oracles: {never-rejoins: 60s}\n",
			// g-1 is removed at 100 s and never gets a member id again (its
			// partitions move to g-0, so only this oracle fires).
			fire: func(s *synth) {
				s.remove(100*time.Second, "g-1")
				s.assign(101*time.Second, "g-0", 0, 1, 2, 3, 4, 5)
				s.assign(101*time.Second, "g-1")
			},
			// Removed at 100 s, back at 150 s.
			silent: func(s *synth) {
				s.remove(100*time.Second, "g-1")
				s.join(150*time.Second, "g-1")
			},
		},
		{
			oracle: scenario.OracleUnownedAtEnd,
			// g-1 revokes two partitions nobody takes over (and keeps one).
			fire: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: protocol.EvRevoked, Node: "g-1", Group: "g",
					Partitions: []protocol.TopicPartition{{Topic: "t", Partition: 4}, {Topic: "t", Partition: 5}}})
			},
			// g-0 takes them over.
			silent: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: protocol.EvRevoked, Node: "g-1", Group: "g",
					Partitions: []protocol.TopicPartition{{Topic: "t", Partition: 4}, {Topic: "t", Partition: 5}}})
				s.assign(101*time.Second, "g-0", 0, 1, 2, 4, 5)
			},
		},
		{
			oracle: scenario.OracleUnbalanced,
			// g-1 ends with nothing, g-0 with all 6.
			fire: func(s *synth) {
				s.assign(100*time.Second, "g-0", 0, 1, 2, 3, 4, 5)
				s.assign(100*time.Second, "g-1")
			},
			// 4 and 2: uneven but nobody idle.
			silent: func(s *synth) {
				s.assign(100*time.Second, "g-0", 0, 1, 2, 3)
				s.assign(100*time.Second, "g-1", 4, 5)
			},
		},
		{
			oracle: scenario.OracleDoubleOwnedAtEnd,
			// g-0 keeps partition 3 that g-1 also holds.
			fire: func(s *synth) { s.assign(100*time.Second, "g-0", 0, 1, 2, 3) },
			// g-0 gets 3 only after g-1 gave it up.
			silent: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: protocol.EvRevoked, Node: "g-1", Group: "g",
					Partitions: []protocol.TopicPartition{{Topic: "t", Partition: 3}}})
				s.assign(100*time.Second, "g-0", 0, 1, 2, 3)
			},
		},
		{
			oracle: scenario.OracleMemberLeak, extra: "oracles: {disable: [member-id-leak]}\n",
			// g-0 joins again under a second id; the first stays.
			fire: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: protocol.EvMemberAdded, Node: "broker-0", Group: "g", Peer: "g-0-old-leak", Detail: "g-2"})
			},
			// The crashed g-2's id is removed (healthy already does): nothing extra.
			silent: func(s *synth) {},
		},
		{
			oracle: scenario.OracleMemberIDLeak, extra: "oracles: {member-id-leak: 30s}\n",
			// A second id of g-0 from 100 s to 150 s: 3 ids for 2 live
			// processes for 50 s > 30 s, gone by the end (so member-leak,
			// which judges the end, stays silent).
			fire: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: protocol.EvMemberAdded, Node: "broker-0", Group: "g", Peer: "g-0-second", Detail: "g-0"})
				s.ev(150*time.Second, protocol.Event{Kind: protocol.EvMemberRemoved, Node: "broker-0", Group: "g", Peer: "g-0-second"})
			},
			// The same for 20 s (as a crashed member's id for a session timeout).
			silent: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: protocol.EvMemberAdded, Node: "broker-0", Group: "g", Peer: "g-0-second", Detail: "g-0"})
				s.ev(120*time.Second, protocol.Event{Kind: protocol.EvMemberRemoved, Node: "broker-0", Group: "g", Peer: "g-0-second"})
			},
		},
		{
			oracle: scenario.OracleClientFatal, extra: "oracles: {disable: [unowned-at-end, member-leak, member-id-leak]}\n",
			// g-1 stops on a fatal error after an error response.
			fire: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: tracing.EvDeliver, Node: "g-1", Group: "g", API: protocol.APIJoinGroup, Err: protocol.RebalanceInProgress})
				s.ev(100*time.Second, protocol.Event{Kind: tracing.EvProcess, Node: "g-1", Group: "g", State: "fatal"})
			},
			// g-1 is closed by the application: not an error.
			silent: func(s *synth) {
				s.ev(100*time.Second, protocol.Event{Kind: tracing.EvProcess, Node: "g-1", Group: "g", State: "closed"})
			},
		},
		{
			oracle: scenario.OracleCPUSpin, extra: "oracles: {cpu-spin: 20}\n",
			// g-0 sends 250 requests in one 10 s window: 25/s > 20/s
			// (deliveries to it are not requests it sent).
			fire: func(s *synth) {
				for i := 0; i < 250; i++ {
					at := sim.Instant(100*time.Second + time.Duration(i)*20*time.Millisecond)
					s.o.observe(&TraceEvent{At: at, Event: protocol.Event{Kind: tracing.EvSend, Node: "g-0", Group: "g"}, Req: true})
					s.o.observe(&TraceEvent{At: at, Event: protocol.Event{Kind: tracing.EvDeliver, Node: "g-0", Group: "g"}})
				}
			},
			// 200 in the window: exactly 20/s, not above.
			silent: func(s *synth) {
				for i := 0; i < 200; i++ {
					s.o.observe(&TraceEvent{At: sim.Instant(100*time.Second + time.Duration(i)*20*time.Millisecond),
						Event: protocol.Event{Kind: tracing.EvSend, Node: "g-0", Group: "g"}, Req: true})
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.oracle, func(t *testing.T) {
			s := newSynth(t, c.extra)
			s.healthy()
			c.fire(s)
			got := s.finish(end)
			require.Equal(t, []string{c.oracle}, oracles(got), "%v", got)
			assert.NotEmpty(t, got[0].Message)

			s = newSynth(t, c.extra)
			s.healthy()
			c.silent(s)
			assert.Empty(t, s.finish(end))
		})
	}
}

// TestOracleBrokerCrashLosesState: when the coordinator's broker dies and
// no broker loads the group again, the group is not Stable any more, even
// though no group-state event says so: group-stuck fires (and the ownership
// oracles, which judge Stable groups, do not).
func TestOracleBrokerCrashLosesState(t *testing.T) {
	s := newSynth(t, "oracles: {group-stuck: 60s}\n")
	s.healthy()
	s.ev(100*time.Second, protocol.Event{Kind: tracing.EvBrokerProcess, Node: "broker-0", State: "crashed"})
	s.ev(104*time.Second, protocol.Event{Kind: tracing.EvBrokerProcess, Node: "broker-0", State: "started"})
	s.assign(110*time.Second, "g-1") // would be unowned and unbalanced in a Stable group
	assert.Equal(t, []string{scenario.OracleGroupStuck}, oracles(s.finish(300*time.Second)))

	s = newSynth(t, "oracles: {group-stuck: 60s}\n")
	s.healthy()
	s.ev(100*time.Second, protocol.Event{Kind: tracing.EvBrokerProcess, Node: "broker-0", State: "crashed"})
	s.state(110*time.Second, "Stable") // a broker loaded the group
	assert.Empty(t, s.finish(300*time.Second))
}

// TestOracleDisable: `oracles: {disable: [...]}` turns an oracle off.
func TestOracleDisable(t *testing.T) {
	s := newSynth(t, "oracles: {disable: [group-stuck]}\n")
	s.healthy()
	s.state(100*time.Second, "CompletingRebalance")
	assert.Empty(t, s.finish(300*time.Second))
}

// TestOracleEndStateNeedsQuiet: the end-state oracles do not judge a run
// that ended before the group's settle bound after its last fault.
func TestOracleEndStateNeedsQuiet(t *testing.T) {
	s := newSynth(t, "")
	s.healthy()
	s.assign(21*time.Second, "g-1") // g-1 idle: unowned and unbalanced
	assert.Empty(t, s.finish(95*time.Second), "10 s + 85 s settle bound not reached")
	assert.ElementsMatch(t, []string{scenario.OracleUnownedAtEnd, scenario.OracleUnbalanced}, oracles(s.finish(96*time.Second)))
}

// TestOraclesParse: the oracles: key is decoded with file:line:field errors.
func TestOraclesParse(t *testing.T) {
	sc := simtest.Parse(t, fmt.Sprintf(oracleBase, "oracles: {settle: 90s, group-stuck: 2m, rebalance-storm: 7, rebalance-storm.window: 45s, never-rejoins: 1m, cpu-spin: 12.5, "+
		"handover-before-revoke: 2s, over-revocation: 3, false-not-coordinator: 9, false-not-coordinator.window: 30s, disable: [member-leak]}\n"))
	assert.Equal(t, &scenario.Oracles{Settle: 90 * time.Second, GroupStuck: 2 * time.Minute, StormGenerations: 7, StormWindow: 45 * time.Second,
		NeverRejoins: time.Minute, CPUSpin: 12.5, Handover: 2 * time.Second, OverRevocation: 3, FalseNotCoordinator: 9,
		FalseNotCoordinatorWindow: 30 * time.Second, Disable: []string{"member-leak"}}, sc.Oracles)
	for _, c := range []struct{ extra, want string }{
		{"oracles: {group-stuk: 1s}\n", "test.yaml:12: oracles.group-stuk: unknown key (did you mean group-stuck?)"},
		{"oracles: {rebalance-storm: 0}\n", "test.yaml:12: oracles.rebalance-storm: must be between 1 and"},
		{"oracles: {cpu-spin: fast}\n", "test.yaml:12: oracles.cpu-spin: expected a positive number"},
		{"oracles: {disable: [storm]}\n", "test.yaml:12: oracles.disable: unknown oracle \"storm\""},
		{"oracles: {never-rejoins: 0s}\n", "test.yaml:12: oracles.never-rejoins: must be positive"},
		{"oracles: {over-revocation: 0}\n", "test.yaml:12: oracles.over-revocation: must be between 1 and"},
		{"oracles: {false-not-coordinator.window: 0s}\n", "test.yaml:12: oracles.false-not-coordinator.window: must be positive"},
		{"oracles: {handover-before-revoke: -1s}\n", "test.yaml:12: oracles.handover-before-revoke: negative duration"},
	} {
		_, err := scenario.Parse("test.yaml", []byte(fmt.Sprintf(oracleBase, c.extra)))
		require.Error(t, err, c.extra)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestOraclesEndToEnd: on real runs, the KAFKA-9801 broker (2.4) leaves a
// Stable group with a member holding nothing and two partitions unowned;
// the fixed broker (2.6) fires nothing; a healthy built-in fires nothing
// over several seeds; the 0.10 group of kip62-slow-poll storms.
func TestOraclesEndToEnd(t *testing.T) {
	src, ok := scenario.Builtin("bug-kafka-9801")
	require.True(t, ok)
	long := strings.Replace(string(src), "duration: 120s", "duration: 500s", 1)
	for _, seed := range []uint64{1, 2, 3} {
		_, fs, err := RunOracles(simtest.Parse(t, long), seed, Options{})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{scenario.OracleUnbalanced, scenario.OracleUnownedAtEnd}, oracles(fs), "seed %d: %v", seed, fs)
		fixed := strings.Replace(long, "profile: kafka-2.4\ntopics", "profile: kafka-2.6\ntopics", 1)
		require.NotEqual(t, long, fixed)
		_, fs, err = RunOracles(simtest.Parse(t, fixed), seed, Options{})
		require.NoError(t, err)
		assert.Empty(t, fs, "seed %d", seed)
		for _, name := range []string{"crash-one-member", "coordinator-failover", "static-restart", "graceful-leave"} {
			res, fs, err := RunOracles(load(t, name), seed, Options{})
			require.NoError(t, err)
			assert.Empty(t, fs, "%s seed %d", name, seed)
			assert.Equal(t, run(t, load(t, name), seed, Options{}).Summary.TraceSHA256, res.Summary.TraceSHA256, "oracles change nothing")
		}
		// kip62-slow-poll lasts 300 s, shorter than the modern group's
		// settle bound (its max.poll.interval.ms is 300 s): judge it after 60 s.
		kip62, ok := scenario.Builtin("kip62-slow-poll")
		require.True(t, ok)
		_, fs, err = RunOracles(simtest.Parse(t, string(kip62)+"oracles: {settle: 60s}\n"), seed, Options{})
		require.NoError(t, err)
		assert.Contains(t, oracles(fs), scenario.OracleRebalanceStorm)
	}
}

// TestAbandonedMemberIDNeedsAKnownID: the oracle judges only ids whose
// JoinGroup answer reached the client. A static member's id, made at once,
// whose answer was lost to the coordinator's host going down is not dropped
// by the client (it never had it): no finding. The same oracle names the
// library's own bug on the buggy client.
func TestAbandonedMemberIDNeedsAKnownID(t *testing.T) {
	src, err := os.ReadFile("testdata/abandoned-id-lost-answer.yaml")
	require.NoError(t, err)
	sc := simtest.Parse(t, string(src))
	_, fs, err := RunOracles(sc, 909534, Options{})
	require.NoError(t, err)
	assert.NotContains(t, oracleList(fs), scenario.OracleAbandonedMemberID)
	// An online upgrade carries a restarted process's old classic id into
	// the consumer group: not a join of the process now running.
	src, err = os.ReadFile("testdata/abandoned-id-upgrade.yaml")
	require.NoError(t, err)
	_, fs, err = RunOracles(simtest.Parse(t, string(src)), 1171, Options{})
	require.NoError(t, err)
	assert.NotContains(t, oracleList(fs), scenario.OracleAbandonedMemberID)
	_, fs, err = RunOracles(load(t, "bug-kafka-13419"), 1, Options{})
	require.NoError(t, err)
	assert.Contains(t, oracleList(fs), scenario.OracleAbandonedMemberID)
}
