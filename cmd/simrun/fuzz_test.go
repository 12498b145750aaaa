package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/scenario"
)

// FuzzSetValue drives any --set PATH=VALUE through what the command line
// does with it (the command line is input too, fuzzed like scenario files):
// parseSet → the override applied to a built-in scenario → validation → a
// short run (at most 20 s of virtual time, 300,000 events, 64 members and
// 512 partitions). No input may panic or hang; a refused value is a flag
// error or a located *scenario.Error; no message carries a raw control
// character to the terminal.
//
// CI runs it for a count of inputs (.ci/run):
//
//	go test ./cmd/simrun -run='^$' -fuzz=FuzzSetValue -fuzztime=10000x -fuzzminimizetime=200x
func FuzzSetValue(f *testing.F) {
	for _, s := range [][2]string{
		{"groups[0].client.session.timeout.ms", "45000"}, {"groups[0].client.session.timeout.ms", "030000"},
		{"groups[0].members", "09"}, {"duration", "!!binary AAAA"}, {"duration", "60s\n---\n30s"},
		{"network.latency", "{dist: uniform, min: 1ms, max: 5ms}"}, {"coordinator.profile", "kafka-2.x"},
		{"groups[0].client.profile", "\x1b]0;x\a"}, {"faults[0].at", "1e300s"}, {"topics[0].partitions", "1000000"},
		{"groups[0].client.partition.assignment.strategy", "cooperative-sticky"}, {"name", "&a [*a, *a]"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, value string) {
		watchdog := time.AfterFunc(3*time.Second, func() {
			panic(fmt.Sprintf("FuzzSetValue: one input ran more than 3 s of wall time: %q=%q", path, value))
		})
		defer watchdog.Stop()
		clean := func(msg string) {
			var b strings.Builder
			cleanWriter{&b}.Write([]byte(msg))
			require.Equal(t, -1, strings.IndexFunc(b.String(), func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }))
		}
		var sets setFlags
		if err := sets.Set(path + "=" + value); err != nil {
			clean(err.Error())
			return
		}
		sc, _, _, err := loadScenario("crash-one-member", &sets)
		if err != nil {
			var se *scenario.Error
			require.True(t, errors.As(err, &se), "an override error without its place: %v", err)
			require.Less(t, len(err.Error()), 4000)
			clean(err.Error())
			return
		}
		if !simtest.FuzzSized(sc) {
			return
		}
		sc.Duration = min(sc.Duration, 20*time.Second)
		if _, err := harness.Run(sc, 1, harness.Options{MaxEvents: 300_000}); err != nil {
			require.Regexp(t, "--max-events|--max-memory", err.Error(), "a run is refused only by its budgets")
		}
	})
}
