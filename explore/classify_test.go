package explore

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestClassify: a fixed set of findings, each named as the issue asks: a
// known bug when the run's profile is in the bug's affected range and the
// fixed release makes the oracle quiet (the differential check), and
// unclassified, with what to check, otherwise.
func TestClassify(t *testing.T) {
	builtin := func(name string) (string, []byte) {
		data, ok := scenario.Builtin(name)
		require.True(t, ok)
		return "builtin:" + name, data
	}
	faultsOf := func(source string, data []byte, seed uint64) []scenario.Fault {
		sc, err := scenario.Parse(source, data)
		require.NoError(t, err)
		return harness.ExpandFaults(sc, seed)
	}
	t.Run("known bug: KAFKA-12639 on a 2.8 client", func(t *testing.T) {
		src, data := builtin("bug-kafka-12639")
		c, err := Classify(src, data, 1, faultsOf(src, data, 1), scenario.OracleCPUSpin, "")
		require.NoError(t, err)
		assert.Equal(t, ClassKnownBug, c.Kind)
		assert.Equal(t, "KAFKA-12639", c.Bug)
		assert.Contains(t, c.Text, "groups[0].client.profile=kafka-3.6")
	})
	t.Run("known bug: KAFKA-12639 on a 3.4 client (the last affected)", func(t *testing.T) {
		src, data := builtin("bug-kafka-12639")
		data, err := scenario.Overridden(src, data, []scenario.Override{{Path: "groups[0].client.profile", Value: "kafka-3.4"}})
		require.NoError(t, err)
		c, err := Classify(src, data, 2, faultsOf(src, data, 2), scenario.OracleCPUSpin, "")
		require.NoError(t, err)
		assert.Equal(t, "KAFKA-12639", c.Bug)
	})
	t.Run("known bug: KAFKA-8653 (a broker bug; its oracle, another bug's entry first)", func(t *testing.T) {
		src, data := builtin("bug-kafka-8653")
		c, err := Classify(src, data, 1, faultsOf(src, data, 1), scenario.OracleRebalanceStorm, "")
		require.NoError(t, err)
		assert.Equal(t, ClassKnownBug, c.Kind)
		assert.Equal(t, "KAFKA-8653", c.Bug, "KIP-62 lists rebalance-storm too, but the client is not 0.10")
	})
	t.Run("Kafka behaviour: a session timeout the broker refuses", func(t *testing.T) {
		src, data := builtin("crash-one-member")
		data, err := scenario.Overridden(src, data, []scenario.Override{
			{Path: "groups[0].client.session.timeout.ms", Value: 5000}, {Path: "coordinator.group.min.session.timeout.ms", Value: 6000}})
		require.NoError(t, err)
		sc, err := scenario.Parse(src, data)
		require.NoError(t, err)
		_, found, err := harness.RunOracles(sc, 1, harness.Options{})
		require.NoError(t, err)
		i := slices.IndexFunc(found, func(f harness.Finding) bool { return f.Oracle == scenario.OracleClientFatal })
		require.GreaterOrEqual(t, i, 0, "the oracle fires")
		c, err := Classify(src, data, 1, faultsOf(src, data, 1), scenario.OracleClientFatal, found[i].Message)
		require.NoError(t, err)
		assert.Equal(t, ClassBehaviour, c.Kind)
		assert.Contains(t, c.Text, "INVALID_SESSION_TIMEOUT")
	})
	t.Run("unclassified: a handover during a classic-to-consumer migration", func(t *testing.T) {
		data, err := os.ReadFile("testdata/migration-handover.yaml")
		require.NoError(t, err)
		src := "testdata/migration-handover.yaml"
		c, err := Classify(src, data, 1798, faultsOf(src, data, 1798), scenario.OracleHandoverBeforeRevoke, "")
		require.NoError(t, err)
		assert.Equal(t, ClassUnclassified, c.Kind)
		assert.Contains(t, c.Text, "may be a Kafka bug or a model artefact")
	})
}

// TestProfileRanges: every library entry's affected range is well formed
// (both ends are profiles, from before fixed) and holds the built-in's own
// buggy profile but not its fixed one, so Classify can name the bug its
// own built-in shows.
func TestProfileRanges(t *testing.T) {
	for _, r := range Library {
		t.Run(r.Bug, func(t *testing.T) {
			require.NotEmpty(t, r.From)
			fixedIn := r.FixedIn
			if fixedIn == "" {
				fixedIn = r.Fixed.Value.(string)
			}
			require.GreaterOrEqual(t, scenario.ProfileIndex(r.From), 0, r.From)
			require.Less(t, scenario.ProfileIndex(r.From), scenario.ProfileIndex(fixedIn))
			data, ok := scenario.Builtin(r.Builtin)
			require.True(t, ok)
			sc, err := scenario.Parse(r.Builtin, data)
			require.NoError(t, err)
			assert.NotEmpty(t, r.fixOverrides(sc), "the built-in's own profile is affected")
			fixed, err := scenario.Overridden(r.Builtin, data, []scenario.Override{r.Fixed})
			require.NoError(t, err)
			fsc, err := scenario.Parse(r.Builtin, fixed)
			require.NoError(t, err)
			assert.Empty(t, r.fixOverrides(fsc), "the fixed variant is not affected")
		})
	}
}
