package explore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// bug9801 is the KAFKA-9801 built-in (broker kafka-2.4) without its
// hand-placed faults, long enough for the generic mix and its quiet tail.
func bug9801(t *testing.T, profile string) (*scenario.Scenario, []byte) {
	t.Helper()
	src, ok := scenario.Builtin("bug-kafka-9801")
	require.True(t, ok)
	text := strings.Replace(string(src), "duration: 120s", "duration: 600s", 1)
	text = strings.Replace(text, "  profile: kafka-2.4\ntopics", "  profile: "+profile+"\ntopics", 1)
	text = text[:strings.Index(text, "faults:")]
	sc, err := scenario.Parse("bug9801.yaml", []byte(text))
	require.NoError(t, err)
	return sc, []byte(text)
}

func campaign(t *testing.T, seeds, workers int, out string) *Report {
	t.Helper()
	sc, data := bug9801(t, "kafka-2.4")
	// Seeds 300001 … : the first KAFKA-9801 finding is at 300062
	// (docs/BUGS.md, campaign 3); broker faults left out (fast runs).
	rep, err := Run(Config{Scenario: sc, Source: "bug9801.yaml", Data: data, Command: "simrun run", Swarm: SwarmDefault,
		Without: []string{"broker-crash", "broker-host-down"}, FirstSeed: 300001, Seeds: seeds, Workers: workers, Out: out,
		ShrinksPerOracle: 1, ShrinkRuns: 200, Only: []string{scenario.OracleUnownedAtEnd}})
	require.NoError(t, err)
	return rep
}

func indexJSON(t *testing.T, rep *Report) string {
	b, err := json.Marshal(&rep.Index)
	require.NoError(t, err)
	return string(b)
}

// TestExploreSameResultsAnyWorkers: a campaign's index (findings,
// signatures, counts) is the same with 1 and 3 workers, and it finds the
// KAFKA-9801 symptom in 70 seeds of the generic mix.
func TestExploreSameResultsAnyWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 140 simulations and a shrink")
	}
	a := campaign(t, 70, 1, "")
	b := campaign(t, 70, 3, "")
	assert.Equal(t, indexJSON(t, a), indexJSON(t, b))
	assert.Equal(t, 70, a.Runs)
	require.NotEmpty(t, a.Findings, "the 2.4 broker's empty assignment shows up under the generic mix")
	assert.Equal(t, scenario.OracleUnownedAtEnd, a.Findings[0].Oracle)
	assert.Positive(t, a.FirstFindingSeed)
}

// TestExploreResumes: a campaign stopped after 30 seeds and run again with
// the same output directory continues at seed 300031 and ends with the index a
// single 70-seed campaign writes; its finding files reproduce the finding.
func TestExploreResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 170 simulations")
	}
	dir := t.TempDir()
	first := campaign(t, 30, 2, dir)
	assert.Equal(t, uint64(300031), first.NextSeed)
	resumed := campaign(t, 70, 2, dir)
	fresh := campaign(t, 70, 2, t.TempDir())
	assert.Equal(t, 70, resumed.Runs)
	// The index records paths under its own directory: compare without them.
	strip := func(r *Report) string { s := indexJSON(t, r); return strings.ReplaceAll(s, dir, "DIR") }
	freshS := indexJSON(t, fresh)
	for _, f := range fresh.Findings {
		freshS = strings.ReplaceAll(freshS, filepath.Dir(filepath.Dir(strings.Fields(f.Repro)[2])), "DIR")
	}
	assert.Equal(t, freshS, strip(resumed))

	require.NotEmpty(t, resumed.Findings)
	f := resumed.Findings[0]
	file := filepath.Join(dir, f.Signature, "scenario.yaml")
	assert.Contains(t, f.Repro, file)
	sc, err := scenario.Load(file)
	require.NoError(t, err, "a finding's file is a valid scenario")
	_, fs, err := harness.RunOracles(sc, f.Seed, harness.Options{})
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(fs, func(x harness.Finding) bool { return x.Oracle == f.Oracle }), "the file reproduces %s: %v", f.Oracle, fs)
	for _, name := range []string{"explain.txt", IndexFile} {
		p := filepath.Join(dir, name)
		if name == "explain.txt" {
			p = filepath.Join(dir, f.Signature, name)
		}
		_, err := os.Stat(p)
		assert.NoError(t, err, name)
	}

	// Another campaign in the same directory is refused.
	sc2, data := bug9801(t, "kafka-2.4")
	_, err = Run(Config{Scenario: sc2, Source: "other.yaml", Data: data, Swarm: SwarmDefault, Seeds: 1, Out: dir})
	assert.ErrorContains(t, err, "another campaign")
}

// TestGenericFaults: the mix is a function of the seed, stays in its
// window, uses several kinds over seeds, and every schedule written into
// the scenario file parses back to the same faults.
func TestGenericFaults(t *testing.T) {
	sc, data := bug9801(t, "kafka-2.4")
	from, until, err := GenericWindow(sc, time.Minute)
	require.NoError(t, err)
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		fs := GenericFaults(sc, seed, from, until)
		assert.Equal(t, fs, GenericFaults(sc, seed, from, until))
		for _, f := range fs {
			assert.GreaterOrEqual(t, f.At, from)
			assert.Less(t, f.At, until)
			kinds[Signature("x", []scenario.Fault{f})] = true
		}
		out, err := scenario.WithFaults("g.yaml", data, fs)
		require.NoError(t, err)
		back, err := scenario.Parse("g.yaml", out)
		require.NoError(t, err, "seed %d:\n%s", seed, out)
		require.Len(t, back.Faults, len(fs))
		for i := range fs {
			assert.Equal(t, scenario.FormatFault(fs[i]), scenario.FormatFault(back.Faults[i]))
		}
	}
	assert.GreaterOrEqual(t, len(kinds), 10, "%v", kinds)
	_, _, err = GenericWindow(sc, 10*time.Minute)
	assert.ErrorContains(t, err, "too short")
}

// TestSignature: the oracle and the fault kinds in order, targets left out;
// broker crashes are told from member ones.
func TestSignature(t *testing.T) {
	fs := []scenario.Fault{
		{Kind: scenario.FaultCrash, Target: "payments-1"},
		{Kind: scenario.FaultCrash, Target: "coordinator"},
		{Kind: scenario.FaultHostDown, Target: "broker-2"},
		{Kind: scenario.FaultRestart, Target: "payments-3"},
	}
	assert.Equal(t, "group-stuck--crash+broker-crash+broker-host-down+restart", Signature("group-stuck", fs))
	fs[0].Target = "payments-7"
	assert.Equal(t, "group-stuck--crash+broker-crash+broker-host-down+restart", Signature("group-stuck", fs))
	assert.Equal(t, "member-leak--no-faults", Signature("member-leak", nil))
}

// TestExploreTimeBudget: --time stops the campaign (Stopped "time") with
// every seed before NextSeed judged; the wall clock is injected.
func TestExploreTimeBudget(t *testing.T) {
	sc, data := bug9801(t, "kafka-2.6")
	now := time.Unix(0, 0)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	rep, err := Run(Config{Scenario: sc, Source: "bug9801.yaml", Data: data, Swarm: SwarmDefault,
		Without: []string{"broker-crash", "broker-host-down"}, Seeds: 1000, Workers: 2, Budget: 5 * time.Second, Clock: clock})
	require.NoError(t, err)
	assert.Equal(t, "time", rep.Stopped)
	assert.Less(t, rep.Runs, 1000)
	assert.Equal(t, uint64(rep.Runs)+1, rep.NextSeed)
}

// TestFileFaultsFalseKeepsAddPartitions: --file-faults=false drops the
// file's faults but keeps add-partitions (the topics' history, part of the
// environment), and the written finding file round-trips it.
func TestFileFaultsFalseKeepsAddPartitions(t *testing.T) {
	src, ok := scenario.Builtin("bug-kafka-13435")
	require.True(t, ok)
	data, err := scenario.Overridden("builtin:bug-kafka-13435", src, []scenario.Override{{Path: "duration", Value: "600s"}})
	require.NoError(t, err)
	sc, err := scenario.Parse("builtin:bug-kafka-13435", data)
	require.NoError(t, err)
	cfg := &Config{Scenario: sc, Swarm: SwarmDefault}
	for seed := uint64(1); seed <= 20; seed++ {
		s, err := SeedScenario(cfg, seed)
		require.NoError(t, err)
		var adds, restartsAt30 int
		for _, f := range s.Faults {
			if f.Kind == scenario.FaultAddPartitions {
				adds++
				assert.Equal(t, scenario.Fault{At: 60 * time.Second, Kind: scenario.FaultAddPartitions, Target: "orders", Partitions: 16, Line: f.Line}, f)
			}
			if f.Kind == scenario.FaultRestart && f.At == 30*time.Second && f.Target == "payments-0" && !f.Swarm && f.Line > 0 {
				restartsAt30++
			}
		}
		assert.Equal(t, 1, adds, "seed %d", seed)
		assert.Zero(t, restartsAt30, "seed %d: the file's restart is dropped", seed)
		out, err := scenario.WithFaults("g.yaml", data, s.Faults)
		require.NoError(t, err)
		back, err := scenario.Parse("g.yaml", out)
		require.NoError(t, err)
		assert.Len(t, back.Faults, len(s.Faults))
	}
}
