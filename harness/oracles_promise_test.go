package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// TestPromiseOraclesOnTheirBugs: each of the three oracles of
// oracles_promise.go fires on its bug's built-in (buggy profile) and stays
// quiet on the fixed profile, one override apart (docs/BUGS.md).
func TestPromiseOraclesOnTheirBugs(t *testing.T) {
	for _, c := range []struct {
		builtin, oracle, section, fixed string
	}{
		{"bug-kafka-14639", scenario.OracleHandoverBeforeRevoke, "groups[0].client", "kafka-3.6"},
		{"bug-kafka-13891", scenario.OracleOverRevocation, "groups[0].client", "kafka-3.2"},
		{"bug-failover-loading", scenario.OracleFalseNotCoordinator, "coordinator", "kafka-2.3"},
	} {
		t.Run(c.builtin, func(t *testing.T) {
			for _, seed := range bugSeeds {
				_, fs, err := RunOracles(load(t, c.builtin), seed, Options{})
				require.NoError(t, err)
				assert.Contains(t, oracleList(fs), c.oracle, "seed %d: buggy", seed)
				for _, f := range fs {
					if f.Oracle == c.oracle {
						t.Logf("seed %d: %s", seed, f)
					}
				}
				sc := load(t, c.builtin)
				data, ok := scenario.Builtin(c.builtin)
				require.True(t, ok)
				over, err := scenario.Overridden("builtin:"+c.builtin, data, []scenario.Override{{Path: c.section + ".profile", Value: c.fixed}})
				require.NoError(t, err)
				sc, err = scenario.Parse("builtin:"+c.builtin, over)
				require.NoError(t, err)
				_, ffs, err := RunOracles(sc, seed, Options{})
				require.NoError(t, err)
				assert.NotContains(t, oracleList(ffs), c.oracle, "seed %d: fixed: %v", seed, ffs)
			}
		})
	}
}

// TestPromiseOracleThresholds: each threshold decides: above the measured
// symptom (2.284 s of double ownership, 4 partitions lost, 114 false marks
// in 10 s) the oracle is quiet, at or below it fires.
func TestPromiseOracleThresholds(t *testing.T) {
	for _, c := range []struct {
		builtin, oracle string
		quiet, fires    scenario.Oracles
	}{
		{"bug-kafka-14639", scenario.OracleHandoverBeforeRevoke,
			scenario.Oracles{Handover: 2300 * time.Millisecond}, scenario.Oracles{Handover: 2 * time.Second}},
		{"bug-kafka-13891", scenario.OracleOverRevocation, scenario.Oracles{OverRevocation: 5}, scenario.Oracles{OverRevocation: 4}},
		{"bug-failover-loading", scenario.OracleFalseNotCoordinator,
			scenario.Oracles{FalseNotCoordinator: 200}, scenario.Oracles{FalseNotCoordinator: 20, FalseNotCoordinatorWindow: 10 * time.Second}},
	} {
		for i, o := range []scenario.Oracles{c.quiet, c.fires} {
			sc := load(t, c.builtin)
			sc.Oracles = &o
			_, fs, err := RunOracles(sc, 1, Options{})
			require.NoError(t, err)
			if i == 0 {
				assert.NotContains(t, oracleList(fs), c.oracle, "%s %+v", c.builtin, o)
			} else {
				assert.Contains(t, oracleList(fs), c.oracle, "%s %+v", c.builtin, o)
			}
		}
	}
}
