package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/scenario"
)

// FuzzWholePath drives any bytes through everything a user's file goes
// through: parse → validate → a short simulation (at most 20 s of virtual
// time and 300,000 events, at most 64 members and 512 partitions) → the JSON summary. No input may panic or hang;
// a parse error is a located *scenario.Error; a run is refused only by its
// event budget; the summary is consistent. Invariant violations are
// findings of the simulation (reported in the summary), not failures here.
// Seeds: the built-in scenarios, every hostile or careless input kept in
// the scenario package's testdata/hostile and scenario.Random's output.
//
// CI runs it for 10,000 inputs (.ci/run; counts, not seconds: see there):
//
//	go test ./harness -run='^$' -fuzz=FuzzWholePath -fuzztime=10000x -fuzzminimizetime=200x
func FuzzWholePath(f *testing.F) {
	for _, n := range scenario.BuiltinNames() {
		b, _ := scenario.Builtin(n)
		f.Add(b)
	}
	hostile, _ := filepath.Glob("../scenario/testdata/hostile/*.yaml")
	for _, p := range hostile {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	r := rand.New(rand.NewPCG(17, 1))
	for i := 0; i < 12; i++ {
		f.Add(scenario.Random(r, []int{0, 1, 0}[i%3]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A hang is a finding: the fuzzer saves the input of a worker
		// that dies, and it has no per-input timeout of its own.
		watchdog := time.AfterFunc(3*time.Second, func() {
			panic(fmt.Sprintf("FuzzWholePath: one input ran more than 3 s of wall time: %q", data))
		})
		defer watchdog.Stop()
		sc, err := scenario.Parse("fuzz.yaml", data)
		if err != nil {
			var e *scenario.Error
			require.True(t, errors.As(err, &e), "parse error without file and line: %v", err)
			require.Less(t, len(err.Error()), 2000, "an error quotes little of the input")
			return
		}
		// A short simulation: big worlds are the benchmarks' business.
		if !simtest.FuzzSized(sc) {
			return
		}
		sc.Duration = min(sc.Duration, 20*time.Second)
		res, err := Run(sc, 1, Options{MaxEvents: 300_000})
		if err != nil {
			require.Regexp(t, "--max-events|--max-memory", err.Error(), "a run is refused only by its budgets")
			return
		}
		s := res.Summary
		require.LessOrEqual(t, s.SimulatedMs, sc.Duration.Milliseconds())
		_, err = json.Marshal(s)
		require.NoError(t, err)
		for _, g := range s.Groups {
			require.GreaterOrEqual(t, g.Evictions, g.FalseEvictions)
			require.GreaterOrEqual(t, g.CoordinatorDeadMarks, g.FalseCoordinatorDeadMarks)
			require.GreaterOrEqual(t, g.UnownedPartitionSeconds, 0.0)
			require.GreaterOrEqual(t, g.MemberHours, 0.0)
			if g.StableAtEnd && len(g.Rebalances) > 0 {
				require.False(t, g.Rebalances[len(g.Rebalances)-1].Incomplete, "stable at end with a rebalance open")
			}
		}
		for _, v := range s.InvariantViolations {
			require.NotEmpty(t, v.Checker)
			require.False(t, strings.ContainsAny(v.Message, "\x1b"), "no raw escapes in messages")
		}
	})
}
