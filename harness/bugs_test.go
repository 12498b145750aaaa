// Tests of the bug library (scenario/builtin/bug-*.yaml, docs/BUGS.md): each
// real Kafka bug shows its symptom with the buggy profile and not with the
// fixed one, in a script of testdata/bugs (TestBugScripts,
// bug_scripts_test.go). The fixed variant is the same built-in file with one
// `profile:` line changed, exactly as the file's header tells a user to do.
// What stays here is what a script cannot say: two runs' traces compared
// event by event, and the runs around a bug that are not a bug's variant.
package harness

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// bugSeeds are the seeds every bug case runs (the symptoms must not depend
// on the seed's latency jitter or tie-breaks).
var bugSeeds = []uint64{1, 2, 3}

// withProfile returns the built-in scenario with the first `profile:` line of
// the coordinator section ("coordinator") or of the first group's client
// section ("client") set to profile. It fails if the file has no such line,
// so a renamed section cannot silently test the buggy variant twice.
func withProfile(t testing.TB, name, section, profile string) *scenario.Scenario {
	t.Helper()
	src, ok := scenario.Builtin(name)
	require.True(t, ok, "built-in %s", name)
	lines := strings.Split(string(src), "\n")
	header := "coordinator:"
	if section == "client" {
		header = "    client:"
	}
	in, done := false, false
	for i, l := range lines {
		switch {
		case l == header:
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(l), "profile:"):
			indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
			lines[i] = indent + "profile: " + profile
			in, done = false, true
		}
		if done {
			break
		}
	}
	require.True(t, done, "%s: no profile line in section %s", name, section)
	return simtest.Parse(t, strings.Join(lines, "\n"))
}

// memberOwner maps coordinator member ids to the process (member name) that
// joined with them, from EvMemberAdded (Peer = id, Detail = name).
func memberOwner(trace []TraceEvent) map[string]string {
	owner := map[string]string{}
	for _, e := range trace {
		if e.Kind == protocol.EvMemberAdded {
			owner[e.Peer] = e.Detail
		}
	}
	return owner
}

// finalOwnership is the partitions each member holds at the end of the run:
// its last EvAssigned (EAGER protocol: every assignment replaces the last).
func finalOwnership(trace []TraceEvent) map[string][]protocol.TopicPartition {
	own := map[string][]protocol.TopicPartition{}
	for _, e := range trace {
		if e.Kind == protocol.EvAssigned {
			own[e.Node] = e.Partitions
		}
	}
	return own
}

// TestBugKIP62: the KIP-62 case already has a built-in with both eras side by
// side (kip62-slow-poll, tested by TestKIP62); the bug library lists it and
// this checks it still exists so docs/BUGS.md stays true.
func TestBugKIP62(t *testing.T) {
	assert.Contains(t, scenario.BuiltinNames(), "kip62-slow-poll")
}

// oracleNames lists the oracles that fired in one run, in the fixed order
// RunOracles gives them.
func oracleNames(t testing.TB, sc *scenario.Scenario, seed uint64) []string {
	t.Helper()
	_, fs, err := RunOracles(sc, seed, Options{})
	require.NoError(t, err)
	return oracleList(fs)
}

// takenWhileHeld lists the handovers of a partition to another member while
// victim still held it (its last `assigned` minus what it revoked or lost
// since), as "member@generation:partition".
func takenWhileHeld(trace []TraceEvent, victim string) []string {
	held := map[protocol.TopicPartition]bool{}
	var taken []string
	for _, e := range trace {
		switch {
		case e.Kind == protocol.EvAssigned && e.Node == victim:
			clear(held)
			for _, tp := range e.Partitions {
				held[tp] = true
			}
		case e.Kind == protocol.EvRevoked && e.Node == victim:
			for _, tp := range e.Partitions {
				delete(held, tp)
			}
		case e.Kind == protocol.EvAssigned:
			for _, tp := range e.Partitions {
				if held[tp] {
					taken = append(taken, fmt.Sprintf("%s@%d:%s-%d", e.Node, e.Gen, tp.Topic, tp.Partition))
				}
			}
		}
	}
	return taken
}

// TestBugFailoverLoading: the failover-loading reproduction
// (testdata/bugs/failover-loading.txt) compares the two profiles after the
// failover; this checks what a script cannot say, that before it the
// variants' traces are identical: the other broker changes between the
// two profiles do not touch this run.
func TestBugFailoverLoading(t *testing.T) {
	const name = "bug-failover-loading"
	const failover = 30100 * time.Millisecond
	for _, seed := range bugSeeds {
		res := run(t, load(t, name), seed, Options{KeepTrace: true})
		fixed := run(t, withProfile(t, name, "coordinator", "kafka-2.3"), seed, Options{KeepTrace: true})
		n := 0
		for i, e := range res.Trace {
			if e.At.Duration() >= failover {
				break
			}
			require.Equal(t, e, fixed.Trace[i], "seed %d: the variants differ before the failover", seed)
			n++
		}
		assert.Greater(t, n, 100, "seed %d: a prefix worth comparing", seed)
		assert.NotEqual(t, res.Summary.TraceSHA256, fixed.Summary.TraceSHA256, "seed %d: and they differ after it", seed)
	}
}

// TestKIP814ResidualLeaderAwayAcrossMetadataChange keeps what exploration
// found on the fixed (3.2) broker of bug-kafka-13435 (docs/BUGS.md): a
// static leader that is out of the group while the topic grows (here it
// closes at 57 s, static members send no LeaveGroup, and its process is
// started again at 65.9 s, within the session timeout) rejoins into a
// Stable group, is told it leads with skipAssignment, and takes its
// assignment snapshot from metadata that already has the new partitions
// (ConsumerCoordinator.onLeaderElected, apache/kafka 3.2.0 668-671, the
// same at 3.8.0): the snapshot matches, nobody rejoins, and the new
// partitions stay unowned. The model follows the Java code; whether Kafka
// tracks this window in a JIRA was not checked.
func TestKIP814ResidualLeaderAwayAcrossMetadataChange(t *testing.T) {
	sc := withProfile(t, "bug-kafka-13435", "coordinator", "kafka-3.2")
	sc.Faults = []scenario.Fault{
		{At: 57076 * time.Millisecond, Kind: scenario.FaultLeave, Target: "payments-0"},
		{At: 60 * time.Second, Kind: scenario.FaultAddPartitions, Target: "orders", Partitions: 16},
		{At: 65913 * time.Millisecond, Kind: scenario.FaultRestart, Target: "payments-0"},
	}
	for _, seed := range bugSeeds {
		res := run(t, sc, seed, Options{KeepTrace: true})
		skipLeader := false
		for _, e := range res.Trace {
			assert.False(t, e.Kind == protocol.EvRejoinRequested && e.Reason == "metadata-changed", "seed %d: %+v", seed, e)
			if e.Kind == protocol.EvJoined && e.Node == "payments-0" && e.Detail == "leader" && e.At > sim.Instant(65*time.Second) {
				skipLeader = true
			}
		}
		assert.True(t, skipLeader, "seed %d: the restarted member is told it leads", seed)
		assert.Contains(t, oracleNames(t, sc, seed), scenario.OracleUnownedAtEnd, "seed %d", seed)
	}
}

// A KIP-394 pending member whose second JoinGroup arrives after the group's
// last member was removed (the group still PreparingRebalance, no member):
// Kafka's supportsProtocols is true for a group with no member
// (GroupMetadata.scala 3.6.1 473-478), so the member is added and the group
// is Stable again. A model that answered INCONSISTENT_GROUP_PROTOCOL
// here (as an earlier one did) stops the member on a fatal error.
//
// Kafka: GroupMetadataTest.testSupportsProtocols @3.6.1
func TestPendingMemberJoinsGroupWithNoMemberRun(t *testing.T) {
	src, err := os.ReadFile("testdata/pending-member-no-member.yaml")
	require.NoError(t, err)
	sc, err := scenario.Parse("pending-member-no-member.yaml", src)
	require.NoError(t, err)
	res, err := Run(sc, 1, Options{KeepTrace: true})
	require.NoError(t, err)
	var removedAt sim.Instant
	for _, e := range res.Trace {
		if e.Kind == protocol.EvMemberRemoved && e.At > sim.Instant(65*time.Second) && removedAt == 0 {
			removedAt = e.At
		}
		if e.Kind == protocol.EvFatal {
			t.Errorf("%v: %s stopped on %v", e.At, e.Node, e.Err)
		}
	}
	assert.Equal(t, sim.Instant(70*time.Second), removedAt, "g-1's session expires between g-2's two JoinGroups")
	assert.Empty(t, res.Summary.Groups[0].FatalErrors)
	assert.True(t, res.Summary.Groups[0].StableAtEnd)
}

// A static member restarting while its first JoinGroup is parked: the
// Scala coordinator (kafka-3.x) expires it at its session timeout (one
// eviction, new-member-timeout), the Java one (kafka-4.0) keeps it
// (ClassicGroup.replaceStaticMember v8.0.0 builds a ClassicGroupMember whose
// isNew is false): no eviction.
//
// Source: ClassicGroup.replaceStaticMember (v8.0.0), GroupMetadata.replaceStaticMember (3.6.1).
func TestStaticRestartFirstJoinParkedRun(t *testing.T) {
	src, err := os.ReadFile("testdata/static-restart-first-join-parked.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		profile   string
		evictions int
	}{{"kafka-3.x", 1}, {"kafka-4.0", 0}} {
		sc, err := scenario.Parse("static-restart-first-join-parked.yaml", []byte(strings.ReplaceAll(string(src), "kafka-4.0", tc.profile)))
		require.NoError(t, err)
		res, err := Run(sc, 1, Options{})
		require.NoError(t, err)
		assert.Equal(t, tc.evictions, res.Summary.Groups[0].Evictions, tc.profile)
		assert.True(t, res.Summary.Groups[0].StableAtEnd, tc.profile)
	}
}

func oracleList(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Oracle)
	}
	return out
}
