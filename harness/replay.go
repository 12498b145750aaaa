package harness

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rebalsim/rebalsim/internal/javarand"
	"github.com/rebalsim/rebalsim/model/classic/client"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// This file replays a real member's workload draws (Scenario.DriverSeeds,
// fed by simrun calibrate from a repetition's meta.json): a classic member
// incarnation with a driver seed draws its poll.interval, poll.timeout and
// callback.time as the testbed's driver did (realkafka/java/Driver.java,
// consume), from one java.util.Random of that seed (internal/javarand),
// instead of from its named stream. Its other draws (backoff jitter, the
// heartbeat thread) stay on the named stream.
//
// The driver's order, per process incarnation, on its one thread:
//
//	each poll():                   pollTimeout.draw (none when constant)
//	inside it, each callback:      callbackTime.draw (none when constant)
//	after a poll that had records: pollInterval.draw (none under slow_poll)
//
// The classic model draws the same three at the same points of its loop
// (model/classic/client app.go: newPollCall at each poll() call, iterate's
// PollInterval when the fetch has records, invokeCallback), and its lazy
// poll replay makes the same draws in the same order (lazy.go
// fastForward), so each Dist below is simply the driver's draw from the
// incarnation's shared Random. Deviations, where the model's loop is not
// the driver's:
//   - A poll "returns records" when the member owns partitions and no
//     eager join blocks them (appThread.recordsAvailable): the real fetch
//     may return nothing for a poll or two after an assignment (the
//     offset fetch and first fetch round trip), taking no draw there.
//   - A slow-poll fault: the driver sleeps it instead of the next poll's
//     pollInterval draw; the model adds it to the step under way
//     (Member.SlowPoll) and draws the next step as usual, so from there
//     its draws are one ahead of the driver's.
//   - The model runs no callback for an empty partition set
//     (Member.invokeCallback), so it takes no callback.time draw where
//     Java invokes the listener with an empty set (with a constant
//     callback.time, every calibration scenario's, nothing is drawn).
//   - poll.interval and poll.timeout keep MinPollCost as their least value
//     (limits.go): a 0 ms draw is 1 µs.
//   - Records are waiting at once for owned partitions in the model; the
//     real consumer's first polls after an assignment return nothing
//     until the committed offsets are fetched and the first Fetch is
//     answered (a quarter second, the suite's median), and the driver
//     draws only after the first poll with records. The replay adds the
//     incarnation's measured wait (Scenario.FirstRecords: its first
//     non-empty assignment → its first_records) to its first processing
//     step, so its steps follow the real ones from the model's own
//     assignment instant (typically a tenth of a second before the real
//     one: the matched runs' revocations come 0.15–0.25 s before the real
//     ones, cal-crash-s10, cal-scaleout-eager); during the wait the model's
//     member is busy where the real one polled empty (a rebalance noticed
//     then waits for the step). The wait after a later assignment is not
//     measured (the driver prints first_records once) and not added.
//     (Anchoring the first step at the measured first_records instant
//     instead brought the revocations within 0.05–0.1 s of the real ones
//     there, but keeps a member whose model assignment came well before
//     the real one busy for the difference, and gave cal-rolling-coop
//     4.4.0 false evictions the measured wait does not.)
//   - A poll takes no time of its own in the model (the real poll that
//     returns buffered records takes about a millisecond), so the replayed
//     steps drift early from the real ones by that much per poll.
//
// A consumer-protocol process is not replayed: its model has no per-poll
// loop (cclient.Process draws a residual step, vtime.DrawResidual, when a
// poll has work), so there is no point at which the driver's n-th draw
// would be taken.

// driverSeedKey is how meta.json's driver_seeds names a process
// incarnation: "member.inc" (realkafka orchestrate's startMember).
func driverSeedKey(member string, inc uint32) string {
	return member + "." + strconv.FormatUint(uint64(inc), 10)
}

// driverDist is one of the driver's workload distributions drawn from an
// incarnation's java.util.Random: the rand.Rand a model passes is not used
// (the draw's state is the driver's, shared by the incarnation's three
// distributions, as the driver's one Random).
type driverDist struct {
	d   javarand.Dist
	r   *javarand.Random
	min time.Duration // MinPollCost for poll.interval and poll.timeout, else 0
	// first, when not nil, is added to the next draw and then zeroed: the
	// incarnation's measured wait for its first records
	// (Scenario.FirstRecords), taken with its first processing step.
	first *time.Duration
}

func (d driverDist) Draw(*rand.Rand) time.Duration {
	x := max(time.Duration(d.d.Draw(d.r))*time.Millisecond, d.min)
	if d.first != nil {
		x += *d.first
		*d.first = 0
	}
	return x
}

func (d driverDist) String() string {
	return fmt.Sprintf("driver %s:%g:%g", d.d.Kind, d.d.A, d.d.B)
}

// driverSpec is the driver's Dist of a scenario distribution, as
// realkafka's distSpec writes it for the driver: whole milliseconds.
func driverSpec(d scenario.Dist) javarand.Dist {
	ms := func(v time.Duration) float64 { return float64(v.Milliseconds()) }
	switch d.Kind {
	case scenario.DistUniform:
		return javarand.Dist{Kind: "uniform", A: ms(d.Min), B: ms(d.Max)}
	case scenario.DistExponential:
		return javarand.Dist{Kind: "exponential", A: ms(d.Min), B: ms(d.Mean)}
	case scenario.DistLognormal:
		return javarand.Dist{Kind: "lognormal", A: ms(d.Median), B: ms(d.P99)}
	}
	return javarand.Dist{Kind: "constant", A: ms(d.Value)}
}

// replayTemplate is the cohort's template for slot s's classic incarnation
// when sc gives it a driver seed (Scenario.DriverSeeds), or nil: the
// workload distributions that draw from the generator are the driver's,
// from one Random of the seed; a constant one stays the cohort's (it draws
// nothing in either).
func replayTemplate(sc *scenario.Scenario, s *slot, c *cohort) *client.Template {
	seed, ok := sc.DriverSeeds[driverSeedKey(s.name, s.inc)]
	if !ok {
		return nil
	}
	cfg := *c.cfg
	r := javarand.New(seed)
	wl := c.sc.Workload
	var first *time.Duration
	if f := sc.FirstRecords[driverSeedKey(s.name, s.inc)]; f > 0 {
		first = &f
	}
	for _, x := range []struct {
		d     scenario.Dist
		to    *client.Dist
		min   time.Duration
		first *time.Duration
	}{
		{wl.PollInterval, &cfg.PollInterval, MinPollCost, first},
		{wl.PollTimeout, &cfg.PollTimeout, MinPollCost, nil},
		{wl.CallbackTime, &cfg.CallbackTime, 0, nil},
	} {
		if d := driverSpec(x.d); !d.Constant() || x.first != nil {
			*x.to = driverDist{d: d, r: r, min: x.min, first: x.first}
		}
	}
	t, err := client.NewTemplate(cfg)
	if err != nil {
		panic("client: NewMember: " + err.Error()) // as the cohort's template would
	}
	return t
}

var _ sim.Dist = driverDist{}
