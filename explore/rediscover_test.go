package explore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// rediscovery is one library bug as generic exploration sees it: the
// built-in with its hand-placed faults dropped, the generic mix instead,
// and only the oracle that names the bug's symptom; buggy and fixed differ
// by one override (docs/BUGS.md, "Rediscovery").
type rediscovery struct {
	builtin string
	oracle  string
	sets    []scenario.Override // both variants (a duration long enough for the mix)
	fixed   scenario.Override   // the one line that makes the fixed variant
	without []string
}

func (r rediscovery) config(t *testing.T, fixed bool, first uint64, seeds int) Config {
	t.Helper()
	src, ok := scenario.Builtin(r.builtin)
	require.True(t, ok)
	sets := r.sets
	if fixed {
		sets = append(sets[:len(sets):len(sets)], r.fixed)
	}
	data, err := scenario.Overridden("builtin:"+r.builtin, src, sets)
	require.NoError(t, err)
	sc, err := scenario.Parse("builtin:"+r.builtin, data)
	require.NoError(t, err)
	return Config{Scenario: sc, Source: "builtin:" + r.builtin, Data: data, Swarm: SwarmDefault, Without: r.without,
		FirstSeed: first, Seeds: seeds, Workers: 2, StopAtFirst: true, Only: []string{r.oracle}}
}

var ciRediscoveries = []rediscovery{
	{
		// KAFKA-8653: a 2.3.0 broker gives JoinGroup v0 a -1 rebalance
		// timeout: after any rebalance, zero-length rebalances forever.
		builtin: "bug-kafka-8653", oracle: scenario.OracleRebalanceStorm,
		sets:  []scenario.Override{{Path: "duration", Value: "600s"}},
		fixed: scenario.Override{Path: "coordinator.profile", Value: "kafka-2.3"},
	},
	{
		// KAFKA-9801: a static member restarting in CompletingRebalance
		// keeps an empty assignment on a 2.4 broker. Broker crashes and
		// host-downs are left out to keep CI fast (they make runs ~15×
		// slower; docs/BUGS.md measures the whole mix too).
		builtin: "bug-kafka-9801", oracle: scenario.OracleUnownedAtEnd,
		sets:    []scenario.Override{{Path: "duration", Value: "600s"}},
		fixed:   scenario.Override{Path: "coordinator.profile", Value: "kafka-2.6"},
		without: []string{"broker-crash", "broker-host-down"},
	},
	{
		// KIP-62: a 0.10 client processing longer than its session timeout
		// is evicted again and again: a rebalance storm with no fault.
		builtin: "kip62-slow-poll", oracle: scenario.OracleRebalanceStorm,
		sets:  []scenario.Override{{Path: "duration", Value: "900s"}},
		fixed: scenario.Override{Path: "groups[0].client.profile", Value: "kafka-2.x"},
	},
}

// TestRediscoveryCI is the CI-sized rediscovery measurement: for each bug,
// two campaigns of the generic mix on the buggy profile find its oracle
// within 500 seeds, and 150 seeds of the fixed profile find nothing. The
// full measurement (5 campaigns, 3,000 fixed seeds) is in docs/BUGS.md.
func TestRediscoveryCI(t *testing.T) {
	if testing.Short() {
		t.Skip("a few hundred runs")
	}
	for _, r := range ciRediscoveries {
		t.Run(r.builtin, func(t *testing.T) {
			for c := uint64(1); c <= 2; c++ {
				rep, err := Run(r.config(t, false, c*100_000+1, 500))
				require.NoError(t, err)
				assert.Equal(t, "first", rep.Stopped, "campaign %d: found within 500 seeds", c)
				require.NotEmpty(t, rep.Findings)
				assert.Equal(t, r.oracle, rep.Findings[0].Oracle)
				t.Logf("campaign %d: first finding at seed %d (%d runs)", c, rep.FirstFindingSeed, rep.Runs)
			}
			rep, err := Run(r.config(t, true, 900_001, 150))
			require.NoError(t, err)
			assert.Zero(t, rep.RunsWithFindings, "the fixed profile is clean: %+v", rep.Findings)
			assert.Equal(t, 150, rep.Runs)
		})
	}
}
