package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// A finding is only worth what the next person can do with it, so each is
// named: a bug of the library the run's profiles are affected by and whose
// fixed release makes the finding go away (the differential check), a
// behaviour Kafka has on purpose, or neither — then the finding says what
// to check.

// Class kinds.
const (
	ClassKnownBug     = "known bug"
	ClassBehaviour    = "Kafka behaviour"
	ClassUnclassified = "unclassified"
)

// Class is a finding's classification.
type Class struct {
	Kind string `json:"kind"`
	Bug  string `json:"bug,omitempty"` // ClassKnownBug: the library's id
	// Text is the one-line classification a finding's explain.txt and the
	// campaign output start with.
	Text string `json:"text"`
}

// Behaviour is something Kafka does on purpose that an oracle can flag:
// a finding that matches it is Kafka's behaviour, with its source.
type Behaviour struct {
	Oracle string
	// Matches reports whether the finding (its scenario and the oracle's
	// message) is this behaviour.
	Matches func(sc *scenario.Scenario, msg string) bool
	Text    string // what Kafka does, with the source
}

// Behaviours are the documented behaviours of Kafka that an oracle can
// flag (docs/BUGS.md, "Kafka's own behaviour").
var Behaviours = []Behaviour{
	{Oracle: scenario.OracleClientFatal,
		Matches: func(_ *scenario.Scenario, msg string) bool {
			return strings.Contains(msg, "FENCED_INSTANCE_ID") && strings.Contains(msg, "JoinGroup")
		},
		Text: "a static member whose group.instance.id another process took over is fenced and stops " +
			"(KIP-345; GroupCoordinator.doSyncGroup / doJoinGroup answer FENCED_INSTANCE_ID, the consumer " +
			"treats it as fatal: AbstractCoordinator.JoinGroupResponseHandler @3.7.0)"},
	{Oracle: scenario.OracleClientFatal,
		Matches: func(_ *scenario.Scenario, msg string) bool {
			return strings.Contains(msg, "INVALID_SESSION_TIMEOUT") || strings.Contains(msg, "GROUP_MAX_SIZE_REACHED")
		},
		Text: "the broker refuses a member whose session.timeout.ms lies outside group.min/max.session.timeout.ms " +
			"(INVALID_SESSION_TIMEOUT) or that would grow the group past group.max.size (GROUP_MAX_SIZE_REACHED, KIP-389), " +
			"and the consumer throws: a configuration to fix, not a race (GroupCoordinator.handleJoinGroup @3.7.0; " +
			"AbstractCoordinator.JoinGroupResponseHandler @3.7.0)"},
}

// affected reports whether a profile lies in [from, fixedIn) of the
// release order (scenario.ProfileIndex).
func affected(profile, from, fixedIn string) bool {
	p, f, x := scenario.ProfileIndex(profile), scenario.ProfileIndex(from), scenario.ProfileIndex(fixedIn)
	return p >= 0 && f >= 0 && x >= 0 && p >= f && p < x
}

// fixOverrides are the overrides that move every part of sc the bug r
// affects to r's fixed profile, or none when sc is not affected.
func (r Rediscovery) fixOverrides(sc *scenario.Scenario) []scenario.Override {
	fixedIn := r.FixedIn
	if fixedIn == "" {
		fixedIn = fmt.Sprint(r.Fixed.Value)
	}
	var out []scenario.Override
	if r.Fixed.Path == "coordinator.profile" {
		if affected(sc.Coordinator.Profile, r.From, fixedIn) {
			out = append(out, r.Fixed)
		}
		return out
	}
	for i := range sc.Groups {
		if affected(sc.Groups[i].Client.Profile, r.From, fixedIn) {
			out = append(out, ov(fmt.Sprintf("groups[%d].client.profile", i), fmt.Sprint(r.Fixed.Value)))
		}
	}
	return out
}

// Classify names the finding of oracle in the run of seed on the scenario
// file data (source names it) with the fault timeline faults: the first
// library bug (in Library order) that lists the oracle, whose affected
// range holds the run's profiles, and whose fixed profiles make the oracle
// quiet with the same faults and seed; else the first matching Behaviour;
// else unclassified, with what to check. An invariant checker's finding
// is tried against every bug of the library.
func Classify(source string, data []byte, seed uint64, faults []scenario.Fault, oracle, msg string) (Class, error) {
	body, err := scenario.WithFaults(source, data, faults)
	if err != nil {
		return Class{}, err
	}
	sc, err := scenario.Parse(source, body)
	if err != nil {
		return Class{}, err
	}
	fires := func(sets []scenario.Override) (bool, error) {
		d, err := scenario.Overridden(source, body, sets)
		if err != nil {
			return false, err
		}
		c, err := scenario.Parse(source, d)
		if err != nil {
			return false, err
		}
		fs, err := judgeRun(c, seed, 0) // 0: harness.DefaultMaxMemory; the finding's run passed it
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(fs, func(f harness.Finding) bool { return f.Oracle == oracle }), nil
	}
	// An invariant checker's finding (not an oracle) is tried against every
	// bug: the differential check alone decides.
	checker := !slices.Contains(scenario.OracleNames, oracle)
	for _, r := range Library {
		if !checker && !slices.Contains(r.Oracles, oracle) || r.From == "" {
			continue
		}
		sets := r.fixOverrides(sc)
		if len(sets) == 0 {
			continue
		}
		still, err := fires(sets)
		if err != nil {
			return Class{}, err
		}
		if still {
			continue
		}
		var ups []string
		for _, s := range sets {
			ups = append(ups, fmt.Sprintf("--set %s=%v", s.Path, s.Value))
		}
		return Class{Kind: ClassKnownBug, Bug: r.Bug, Text: fmt.Sprintf("known bug: %s (%s); quiet after the upgrade %s (the same faults and seed)",
			r.Bug, r.Affects, strings.Join(ups, " "))}, nil
	}
	for _, b := range Behaviours {
		if b.Oracle == oracle && b.Matches(sc, msg) {
			return Class{Kind: ClassBehaviour, Text: "Kafka behaviour: " + b.Text}, nil
		}
	}
	// Neither: say whether the newest releases show it too.
	newest := []scenario.Override{ov("coordinator.profile", scenario.NewestProfile)}
	for i := range sc.Groups {
		newest = append(newest, ov(fmt.Sprintf("groups[%d].client.profile", i), scenario.NewestProfile))
	}
	still, err := fires(newest)
	if err != nil {
		// The scenario may not run on the newest profile (a setting it
		// rejects): leave that check out.
		still = true
	}
	check := "it fires with the newest profiles (" + scenario.NewestProfile + ") too: read explain.txt's causal chain against the Java " +
		"source of the models it names, and run the scenario on real Kafka (simrun real) if it is within what the testbed can make"
	if !still {
		check = "it is quiet with the newest profiles (" + scenario.NewestProfile + "): look for a fix between the run's release and " +
			scenario.NewestProfile + " (a bug the library does not name yet), then check the model against that release's source"
	}
	return Class{Kind: ClassUnclassified, Text: "unclassified: may be a Kafka bug or a model artefact; " + check}, nil
}
