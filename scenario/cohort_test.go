// Tests for cohorts (INTERFACE.md "Cohorts"): several `groups:` entries with
// one id are one consumer group whose members run different client
// configurations. Goal: member indexes continue across cohorts, each cohort
// keeps its own client, workload, subscription and start, join faults and
// fault targets count the whole group, and the errors name the entry.
package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cohortFile = `name: rolling-upgrade
topics:
  - {name: orders, partitions: 6}
  - {name: refunds, partitions: 2}
groups:
  - id: payments                 # cohort 0: payments-0 … payments-2, not yet upgraded
    members: 3
    subscribe: [orders]
    client: {profile: kafka-2.x, partition.assignment.strategy: range}
    start: {at: 0s, stagger: 100ms}
  - id: audit                    # another group between the cohorts
    members: 1
    subscribe: [refunds]
  - id: payments                 # cohort 1: payments-3, payments-4, upgraded
    members: 2
    subscribe: [orders, refunds]
    client: {profile: kafka-3.x, partition.assignment.strategy: [cooperative-sticky, range], max.poll.interval.ms: 10000}
    workload: {poll.interval: 2s}
    start: {at: 5s, stagger: 1s}
`

// TestCohortsParse: cohorts are numbered in file order, their members'
// indexes continue across cohorts, and each keeps its own settings.
func TestCohortsParse(t *testing.T) {
	s, err := Parse("f.yaml", []byte(cohortFile+`faults:
  - {at: 10s, crash: payments-4}
  - {at: 20s, join: payments}
  - {at: 30s, leave: payments-5}
`))
	require.NoError(t, err)
	require.Len(t, s.Groups, 3)
	p0, audit, p1 := s.Groups[0], s.Groups[1], s.Groups[2]
	assert.Equal(t, []int{0, 0, 1}, []int{p0.Cohort, audit.Cohort, p1.Cohort})
	assert.Equal(t, []int{0, 0, 3}, []int{p0.FirstIndex, audit.FirstIndex, p1.FirstIndex})
	assert.Equal(t, "kafka-2.x", p0.Client.Profile)
	assert.Equal(t, []string{"range"}, p0.Client.Assignors)
	assert.Equal(t, "kafka-3.x", p1.Client.Profile)
	assert.Equal(t, []string{"cooperative-sticky", "range"}, p1.Client.Assignors)
	assert.Equal(t, 10*time.Second, p1.Client.MaxPollInterval)
	assert.Equal(t, []string{"orders", "refunds"}, p1.Subscribe)
	assert.Equal(t, Start{At: 5 * time.Second, Stagger: time.Second}, p1.Start)
	assert.Equal(t, 2*time.Second, p1.Workload.PollInterval.Value)

	assert.Equal(t, []string{"payments", "audit"}, s.GroupIDs())
	assert.Equal(t, 5, s.GroupMembers("payments"))
	assert.Equal(t, 1, s.GroupMembers("audit"))
	cs := s.Cohorts("payments")
	require.Len(t, cs, 2)
	assert.Same(t, &s.Groups[0], cs[0])
	assert.Same(t, &s.Groups[2], cs[1])

	for _, tc := range []struct {
		name          string
		entry, member int
	}{
		{"payments-0", 0, 0},
		{"payments-2", 0, 2},
		{"payments-3", 2, 3}, // first member of cohort 1
		{"payments-4", 2, 4},
		{"payments-5", 2, 5}, // added by the join fault: the last cohort's
		{"audit-0", 1, 0},
	} {
		gi, mi, ok := s.ResolveMember(tc.name)
		require.True(t, ok, tc.name)
		assert.Equal(t, tc.entry, gi, "%s: entry", tc.name)
		assert.Equal(t, tc.member, mi, "%s: index", tc.name)
	}
}

// TestSingleEntryGroupIsCohortZero: a group written once is cohort 0 with
// FirstIndex 0, as before cohorts existed.
func TestSingleEntryGroupIsCohortZero(t *testing.T) {
	s, err := Parse("f.yaml", []byte(minimal))
	require.NoError(t, err)
	require.Len(t, s.Groups, 1)
	assert.Zero(t, s.Groups[0].Cohort)
	assert.Zero(t, s.Groups[0].FirstIndex)
	assert.Equal(t, []string{"g"}, s.GroupIDs())
	assert.Equal(t, 2, s.GroupMembers("g"))
}

// TestCohortErrors: fault targets are checked against the whole group
// (every cohort plus the join faults), the member limit holds per group, and
// a cohort's own settings are validated as any group's, naming its entry.
// Nothing but the id has to agree between cohorts, so cohorts differing in
// profile, assignors, subscription or start are not errors (TestCohortsParse).
func TestCohortErrors(t *testing.T) {
	twoCohorts := minimal + `  - id: g
    members: 3
    subscribe: [orders]
`
	cases := []struct {
		name, yaml, want string
	}{
		{"member beyond every cohort", twoCohorts + `faults:
  - {at: 1s, crash: g-5}
`, `f.yaml:12: faults[0].crash: member "g-5" does not exist: group g has members g-0 to g-4`},
		{"member beyond every cohort and the joins", twoCohorts + `faults:
  - {at: 1s, join: g}
  - {at: 2s, pause: g-6, for: 1s}
`, `f.yaml:13: faults[1].pause: member "g-6" does not exist: group g has members g-0 to g-5`},
		{"filter member beyond the cohorts", twoCohorts + `faults:
  - {at: 1s, filter: {member: g-7}, for: 1s}
`, `f.yaml:12: faults[0].filter: member "g-7" does not exist: group g has members g-0 to g-4`},
		{"too many members over the cohorts", minimal + `  - id: g
    members: 99999
    subscribe: [orders]
`, `f.yaml:8: groups[1].members: group "g" has 100001 members over its 2 cohorts, more than 100000`},
		{"a cohort's own client settings", twoCohorts + `    client: {profile: kafka-2.3, partition.assignment.strategy: cooperative-sticky}
`, `f.yaml:11: groups[1].client.partition.assignment.strategy: assignor "cooperative-sticky" is not available in profile kafka-2.3 (KIP-429, Kafka 2.4)`},
		{"a cohort's own subscription", strings.Replace(twoCohorts, "    members: 3\n    subscribe: [orders]", "    members: 3\n    subscribe: [refunds]", 1),
			`f.yaml:10: groups[1].subscribe[0]: unknown topic "refunds"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("f.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestCohortOverride: --set and sweep paths index `groups:` entries, so
// groups[1] is the second cohort.
func TestCohortOverride(t *testing.T) {
	s, err := ParseWithOverrides("f.yaml", []byte(cohortFile), []Override{
		{Path: "groups[2].client.max.poll.interval.ms", Value: 20000},
		{Path: "groups[2].members", Value: 4},
	})
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, s.Groups[2].Client.MaxPollInterval)
	assert.Equal(t, 7, s.GroupMembers("payments"))
	assert.Equal(t, 3, s.Groups[2].FirstIndex)
}
