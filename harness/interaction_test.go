package harness

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/internal/datadriven"
)

// TestInteraction runs the scripts of testdata/interaction: each drives a
// whole world (interactionEnv) a few events at a time and prints what
// happened, so a coordinator's, a KIP-848 client's or a migration's
// behaviour reads as text (go test -rewrite regenerates the output: review
// the diff). Commands:
//
//	scenario [name=N] [seed=S]   a world from the inline YAML (or built-in or file N), seed S (1)
//	step [n=N]                   fire the next N events (1)
//	tick D                       fire the events of the next D of virtual time
//	run-until [at=D] [node= peer= kind= api= state= reason= err= detail=]
//	                             fire events until one so recorded (or virtual time D)
//	deliver [from=A] [to=B] [api=X]
//	                             fire events until a message so delivered
//	drop api=X from=M | to=M     drop the next X request from member M (or response to M)
//	partition A B [one-way]      cut A ↔ B (or A → B): members, brokers or "coordinator"
//	heal                         end every partition the script made
//	stabilize                    fire events until nothing is in flight and every group settled
//	state                        every coordinator's and member's state
//	log-level none|events|msgs   what commands print (events: no sends, TCP losses or deliveries but of errors)
//	summary                      run to the scenario's end and print its summary figures
//	_breakpoint                  nothing (set a debugger breakpoint here)
//
// Each command prints the trace events it caused, one a line (the
// timeline format of TestTimelineScripts).
func TestInteraction(t *testing.T) {
	datadriven.RunScripts(t, "testdata/interaction/*.txt", func(t *testing.T) datadriven.Handler {
		var env *interactionEnv
		return func(c *datadriven.Case, b *strings.Builder) error {
			if c.Cmd == "scenario" {
				sc, seed := interactionScenario(t, c)
				var err error
				if env, err = newInteractionEnv(sc, seed); err != nil {
					return err
				}
				env.out = env.out[:0] // the initial election is in every script: not printed
				return nil
			}
			if env == nil {
				return fmt.Errorf("before scenario")
			}
			b.WriteString(env.handle(t, c))
			return nil
		}
	})
}

// TestInteractionMatchesRun: a world stepped through interactionEnv — one
// event at a time, by virtual-time slices, to settled instants — is the
// world Run runs: the same summary, trace hash included, for a classic
// crash, a KIP-848 group and a classic → consumer migration. A command that
// reached into the world by another path (or fired an event Run would not)
// would move the hash.
func TestInteractionMatchesRun(t *testing.T) {
	for _, name := range []string{"testdata/small-crash.yaml", "testdata/consumer-timeline.yaml", "testdata/migration-timeline.yaml"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			sc := load(t, name)
			want := run(t, sc, 7, Options{}).Summary
			env, err := newInteractionEnv(sc, 7)
			require.NoError(t, err)
			for i := 0; env.w.q.Now() < env.end; i++ {
				switch i % 3 {
				case 0:
					for k := 0; k < 50 && env.fireOne(env.end); k++ {
					}
				case 1:
					env.runUntil(env.w.q.Now().Add(1500e6), nil)
				case 2:
					env.runUntil(env.end, func() bool { return env.inFlight() == 0 && env.settled() })
					env.fireOne(env.end)
				}
				if env.w.q.Next() > env.end {
					break
				}
			}
			got := env.finish()
			assert.Equal(t, want.TraceSHA256, got.TraceSHA256)
			assert.Equal(t, want, got)
		})
	}
}
