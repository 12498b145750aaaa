package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/scenario"
)

// FuzzExperimentFile drives any bytes through what an experiment file goes
// through (experiment files are input too, fuzzed like scenario files):
// parse → validate (every grid point's scenario) → a short sweep (at most 8
// runs of at most 20 s of virtual time, 300,000 events, 64 members and 512
// partitions) into a fresh directory → points.csv and summary.csv. No
// input may panic or hang; an error is located (file and line where it has
// one) and quotes little of the input. Seeds: the built-in experiments and
// the hostile ones that once got through (octal, tags, a second document,
// labels with escapes).
//
// CI runs it for a count of inputs (.ci/run):
//
//	go test ./experiments -run='^$' -fuzz=FuzzExperimentFile -fuzztime=5000x -fuzzminimizetime=200x
func FuzzExperimentFile(f *testing.F) {
	for _, n := range BuiltinNames() {
		b, _ := Builtin(n)
		f.Add(b)
	}
	base := "name: f\nscenario:\n  name: q\n  duration: 40s\n  topics: [{name: t, partitions: 4}]\n  groups:\n    - {id: g, members: 3, subscribe: [t]}\n  faults:\n    - {at: 10s, crash: g-1}\nseeds: 2\nsweep:\n  groups[0].client.session.timeout.ms: %s\nplots:\n  - {kind: line, x: session_timeout_ms, y: recovery_ms, file: rec}\n"
	for _, sw := range []string{"[6000, 10000]", "[6000, 010000]", "{values: [6000, 10000], labels: [\"\\e]0;x\\a\", b]}",
		"{values: [6000, 10000], labels: [\"a<b&c\", \"x\\\"y,z\"]}", "!tag [6000]", "[6000]\n---\nname: g\n"} {
		f.Add([]byte(fmt.Sprintf(base, sw)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog := time.AfterFunc(5*time.Second, func() {
			panic(fmt.Sprintf("FuzzExperimentFile: one input ran more than 5 s of wall time: %q", data))
		})
		defer watchdog.Stop()
		e, err := Parse("fuzz.yaml", data)
		if err != nil {
			var ee *Error
			var se *scenario.Error
			require.True(t, errors.As(err, &ee) || errors.As(err, &se), "an error without file and line: %v", err)
			require.Less(t, len(err.Error()), 4000, "an error quotes little of the input")
			return
		}
		if int64(e.NumPoints())*int64(e.Seeds) > 8 {
			return
		}
		for _, pt := range e.Points() {
			sc, err := e.Scenario(pt)
			require.NoError(t, err, "Parse checked every point")
			if !simtest.FuzzSized(sc) {
				return
			}
		}
		short := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
			c := *sc
			c.Duration = min(c.Duration, 20*time.Second)
			res, err := harness.Run(&c, seed, harness.Options{MaxEvents: 300_000})
			if err != nil {
				return nil, err
			}
			return &res.Summary, nil
		}
		dir := t.TempDir()
		out, err := Sweep(context.Background(), e, Options{Out: dir, Workers: 1, Runner: short})
		if err != nil {
			require.Regexp(t, "--max-events|--max-memory|plot", err.Error(), "a sweep fails only by a run's budget or a plot it cannot draw")
			return
		}
		require.True(t, out.Complete)
		for _, name := range []string{"points.csv", "summary.csv"} {
			b, err := os.ReadFile(dir + "/" + name)
			require.NoError(t, err)
			require.False(t, strings.ContainsAny(string(b), "\x1b\x00"), "no control characters in %s", name)
		}
	})
}
