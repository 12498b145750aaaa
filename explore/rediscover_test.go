package explore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// ciRediscoveries are the library bugs (Library) TestRediscoveryCI
// measures: KAFKA-8653, KAFKA-9801, KIP-62, KAFKA-10284, KAFKA-10870,
// KAFKA-13891 and KAFKA-14639 are found within a few hundred seeds (docs/BUGS.md has the
// full table, `simrun bugs`).
var ciRediscoveries = []string{"KAFKA-8653", "KAFKA-9801", "KIP-62", "KAFKA-10284", "KAFKA-10870", "KAFKA-13891", "KAFKA-14639"}

// TestRediscoveryCI is the CI-sized rediscovery measurement: for each bug,
// two campaigns of the generic mix on the buggy profile find its oracle
// within 500 seeds, and 150 seeds of the fixed profile find nothing. The
// full measurement (5 campaigns, 3,000 fixed seeds) is in docs/BUGS.md.
func TestRediscoveryCI(t *testing.T) {
	if testing.Short() {
		t.Skip("a few hundred runs")
	}
	for _, name := range ciRediscoveries {
		r, ok := LibraryBug(name)
		require.True(t, ok, name)
		require.Empty(t, r.Unfindable)
		t.Run(r.Builtin, func(t *testing.T) {
			for c := 1; c <= 2; c++ {
				cfg, err := r.Config(false, CampaignFirstSeed(c), 500, 2)
				require.NoError(t, err)
				rep, err := Run(cfg)
				require.NoError(t, err)
				assert.Equal(t, "first", rep.Stopped, "campaign %d: found within 500 seeds", c)
				require.NotEmpty(t, rep.Findings)
				assert.Contains(t, r.Oracles, rep.Findings[0].Oracle)
				// The differential check: that seed is clean on the fixed variant.
				fcfg, err := r.Config(true, rep.FirstFindingSeed, 1, 1)
				require.NoError(t, err)
				frep, err := Run(fcfg)
				require.NoError(t, err)
				assert.Zero(t, frep.RunsWithFindings, "campaign %d: seed %d fires on the fixed variant too", c, rep.FirstFindingSeed)
				t.Logf("campaign %d: first finding at seed %d (%d runs)", c, rep.FirstFindingSeed, rep.Runs)
			}
			cfg, err := r.Config(true, FixedFirstSeed, 150, 2)
			require.NoError(t, err)
			rep, err := Run(cfg)
			require.NoError(t, err)
			assert.Zero(t, rep.RunsWithFindings, "the fixed profile is clean: %+v", rep.Findings)
			assert.Equal(t, 150, rep.Runs)
		})
	}
}

// TestLibraryEntries: every library entry names a built-in that parses in
// both variants, and an entry exploration can find names its oracles.
func TestLibraryEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Library {
		assert.False(t, seen[r.Bug], "%s listed twice", r.Bug)
		seen[r.Bug] = true
		for _, fixed := range []bool{false, true} {
			_, err := r.Config(fixed, 1, 1, 1)
			assert.NoError(t, err, "%s fixed=%v", r.Bug, fixed)
		}
		if r.Unfindable == "" {
			assert.NotEmpty(t, r.Oracles, r.Bug)
			for _, o := range r.Oracles {
				assert.Contains(t, scenario.OracleNames, o, r.Bug)
			}
		}
	}
}

// TestMeasurementRow: the median needs every campaign to have found the
// bug; a campaign that did not says how far it got; a fixed-profile
// finding is shown as a false alarm.
func TestMeasurementRow(t *testing.T) {
	m := Measurement{Rediscovery: Rediscovery{Bug: "X", Oracles: []string{"group-stuck"}}, Seeds: 10,
		First: []int{7, 2, 5}, Runs: []int{7, 2, 5}, Wall: []time.Duration{3e9, 1e9, 2e9}, FixedRuns: 100}
	s, w, ok := m.Median()
	require.True(t, ok)
	assert.Equal(t, 5, s)
	assert.Equal(t, 2*time.Second, w)
	assert.Equal(t, "| X | `group-stuck` | 7, 2, 5 | 5 / 2s | 0 / 100 (0s) |", m.Row())
	m.AlsoFixed = []bool{false, false, true}
	_, _, ok = m.Median()
	assert.False(t, ok, "a finding the fixed variant shows too is not the bug")
	assert.Contains(t, m.Row(), "5 (fires on the fixed variant too: not this bug)")
	m.AlsoFixed = nil
	m.First[1], m.FixedFindingSeed = 0, 900_004
	_, _, ok = m.Median()
	assert.False(t, ok)
	assert.Contains(t, m.Row(), "none in 2")
	assert.Contains(t, m.Row(), "FALSE ALARM at seed 900004")
	none := Measurement{Rediscovery: Rediscovery{Bug: "Y", Unfindable: "no oracle"}}
	assert.Equal(t, "| Y | — | not run: no oracle | — | — |", none.Row())
}
