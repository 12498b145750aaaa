package realkafka

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

func parseFile(t *testing.T, file string) *scenario.Scenario {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	sc, err := scenario.Parse(file, b)
	require.NoError(t, err)
	return sc
}

// TestRepetitionsDrawTheirOwnPhasesAndWorkloads: each repetition moves each
// fault subject by its own phase over the subject's window (a crash and its
// restart together), the member starts stay, and each process incarnation
// gets its own workload seed; a re-run of one repetition asks for the same.
// Before: every repetition made its fault at the written instant and ran
// every driver with one seed.
func TestRepetitionsDrawTheirOwnPhasesAndWorkloads(t *testing.T) {
	sc := parseFile(t, "../calibrate/suite/cal-static-restart-in.yaml")
	p, err := NewPlan(sc, "3.9.1", false)
	require.NoError(t, err)
	require.Len(t, p.Actions, 2)
	for _, a := range p.Actions {
		require.Equal(t, 3*time.Second, a.Window, "jitter: 3s written on the fault")
		require.Equal(t, "payments-2", a.Subject)
	}
	phases := map[int64]bool{}
	seeds := map[int64]bool{}
	for rep := 1; rep <= 20; rep++ {
		q := p.ForRepetition(rep)
		require.Len(t, q.Phases, 1)
		ph := q.Phases[0].PhaseMs
		require.True(t, ph >= 0 && ph < 3000, "phase %d ms over a 3 s window", ph)
		require.Equal(t, 15*time.Second+time.Duration(ph)*time.Millisecond, q.Actions[0].At, "the crash moves by the phase")
		require.Equal(t, 4*time.Second, q.Actions[1].At-q.Actions[0].At, "the restart keeps its gap")
		require.Equal(t, p.Members[2].StartAt, q.Members[2].StartAt, "starts do not move")
		require.Equal(t, q.Phases, p.ForRepetition(rep).Phases, "a re-run of a repetition draws the same")
		phases[ph] = true
		seeds[DriverSeed(q.Seed, "payments-0", 1)] = true
		require.NotEqual(t, DriverSeed(q.Seed, "payments-0", 1), DriverSeed(q.Seed, "payments-0", 2), "a restarted process draws its own workload")
		require.NotEqual(t, DriverSeed(q.Seed, "payments-0", 1), DriverSeed(q.Seed, "payments-1", 1))
	}
	require.Greater(t, len(phases), 15, "20 repetitions, 20 phases (nearly)")
	require.Len(t, seeds, 20, "each repetition its own workload seed")
	require.Equal(t, 15*time.Second, p.Actions[0].At, "the plan itself is not changed")
	require.NotEqual(t, RepetitionSeed(sc.Name, "3.9.1", 1), RepetitionSeed(sc.Name, "4.4.0", 1), "the two lines draw apart")
}

// TestSuitePlans: every scenario of the calibration suite runs on the real
// testbed on both lines (the consumer-protocol ones, whose profile is 4.x,
// on 4.4.0 only), each fault with a phase window, in ~6 members and at most
// 80 s.
func TestSuitePlans(t *testing.T) {
	files, err := filepath.Glob("../calibrate/suite/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 12, "the calibration suite asks at least 12 scenarios (docs/CALIBRATE.md)")
	for _, f := range files {
		sc := parseFile(t, f)
		require.Equal(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), sc.Name, f)
		require.LessOrEqual(t, sc.Duration, 80*time.Second, f)
		versions := []string{"3.9.1", "4.4.0"}
		if strings.HasPrefix(sc.Coordinator.Profile, "kafka-4") {
			versions = versions[1:]
			_, err := NewPlan(sc, "3.9.1", false)
			require.Error(t, err, "%s needs a 4.x broker", f)
		}
		for _, v := range versions {
			p, err := NewPlan(sc, v, false)
			require.NoError(t, err, "%s on %s", f, v)
			require.LessOrEqual(t, len(p.Members), 7, f)
			for _, a := range p.Actions {
				require.Greater(t, a.Window, time.Duration(0), "%s: %s has a phase window", f, a.Kind)
			}
		}
	}
}
