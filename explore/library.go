package explore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
)

// Rediscovery is one bug of the library (docs/BUGS.md) as generic
// exploration sees it: the bug's built-in with its hand-placed faults
// dropped (--file-faults=false), the generic mix drawn from each seed
// (--swarm default), and only the oracles that name the bug's symptom.
// The buggy and fixed variants differ by the one override Fixed.
type Rediscovery struct {
	Bug     string // "KAFKA-9752"
	Builtin string
	Oracles []string
	// Sets apply to both variants (a duration long enough for the mix).
	Sets  []scenario.Override
	Fixed scenario.Override
	// Without leaves fault kinds out of the mix (GenericKinds); With adds
	// opt-in kinds (OptInKinds).
	Without, With []string
	// From is the first profile the bug affects and FixedIn the first that
	// has the fix (empty: Fixed's value), on the side Fixed sets (the
	// coordinator or the groups' clients), in scenario.ProfileIndex order;
	// Affects says it in releases. Classify reads them.
	From, FixedIn, Affects string
	// Unfindable, when set, says why generic exploration is not expected
	// to find this bug (no generic fault makes its trigger, or no oracle
	// judges its symptom). Measure still runs the campaigns when the entry
	// names oracles (the table shows how far they got); with none it runs
	// nothing.
	Unfindable string
}

func ov(path, value string) scenario.Override { return scenario.Override{Path: path, Value: value} }

// Library is the bug library's rediscovery table, in docs/BUGS.md order.
var Library = []Rediscovery{
	{Bug: "KAFKA-12890", From: "kafka-2.6.1", FixedIn: "kafka-2.8.1", Affects: "broker 2.6.1–2.8.0, fixed in 2.8.1 / 3.0.0",
		Builtin: "bug-kafka-12890", Oracles: []string{scenario.OracleSyncOverrun},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-3.x"),
		// TCP retransmits a lost SyncGroup, so only a message filter (the
		// opt-in api-filter kind, blind to which API it drops) keeps one
		// member's SyncGroups from arriving while it heartbeats.
		With: []string{"api-filter"}},
	{Bug: "KAFKA-13214", From: "kafka-2.6.1", FixedIn: "kafka-2.7.2", Affects: "client 2.6.1–2.7.1 and 2.8.0, fixed in 2.7.2 / 2.8.1",
		Builtin: "bug-kafka-13214", Oracles: []string{scenario.OracleAbandonedMemberID},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("groups[0].client.profile", "kafka-2.8")},
	{Bug: "KAFKA-9801", From: "kafka-2.3", FixedIn: "kafka-2.5", Affects: "broker 2.3–2.4, fixed in 2.5.0", Builtin: "bug-kafka-9801", Oracles: []string{scenario.OracleUnownedAtEnd},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-2.6"),
		Without: []string{"broker-crash", "broker-host-down"}},
	{Bug: "KAFKA-13419", From: "kafka-2.3", FixedIn: "kafka-3.2", Affects: "client 2.3–3.1.0, fixed in 3.1.1 / 3.2.0",
		Builtin: "bug-kafka-13419", Oracles: []string{scenario.OracleAbandonedMemberID},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("groups[0].client.profile", "kafka-3.2")},
	{Bug: "KAFKA-8653", From: "kafka-2.3.0", FixedIn: "kafka-2.4", Affects: "broker 2.3.0, fixed in 2.3.1 / 2.4.0", Builtin: "bug-kafka-8653", Oracles: []string{scenario.OracleRebalanceStorm},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-2.3")},
	{Bug: "KIP-62", From: "kafka-0.10", FixedIn: "kafka-2.3", Affects: "client 0.10.0, fixed in 0.10.1 (the heartbeat thread)", Builtin: "kip62-slow-poll", Oracles: []string{scenario.OracleRebalanceStorm},
		Sets: []scenario.Override{ov("duration", "900s")}, Fixed: ov("groups[0].client.profile", "kafka-2.x")},
	{Bug: "KAFKA-9752", From: "kafka-2.3", FixedIn: "kafka-2.5", Affects: "broker 2.2.0–2.4.1, fixed in 2.5.0", Builtin: "bug-kafka-9752", Oracles: []string{scenario.OracleUnownedAtEnd},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-2.5"),
		Without: []string{"broker-crash", "broker-host-down"}},
	{Bug: "KAFKA-10284", From: "kafka-2.3", FixedIn: "kafka-2.6.1", Affects: "broker 2.3.0–2.6.0, fixed in 2.6.1 / 2.7.0", Builtin: "bug-kafka-10284", Oracles: []string{scenario.OracleClientFatal},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-2.6.1")},
	{Bug: "KAFKA-10870", From: "kafka-2.7", FixedIn: "kafka-2.8", Affects: "client 2.7.x, fixed in 2.8.0", Builtin: "bug-kafka-10870", Oracles: []string{scenario.OracleClientFatal},
		Sets: []scenario.Override{ov("duration", "900s")}, Fixed: ov("groups[0].client.profile", "kafka-2.8")},
	{Bug: "KAFKA-13435", From: "kafka-2.3", FixedIn: "kafka-3.2", Affects: "broker 2.3–3.1 with JoinGroup v9 clients, fixed in 3.2.0", Builtin: "bug-kafka-13435", Oracles: []string{scenario.OracleUnownedAtEnd},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-3.2"),
		Without: []string{"broker-crash", "broker-host-down"}},
	{Bug: "KAFKA-13891", From: "kafka-3.3", FixedIn: "kafka-3.4", Affects: "client 3.3.0–3.3.1, fixed in 3.3.2 / 3.4.0", Builtin: "bug-kafka-13891", Oracles: []string{scenario.OracleOverRevocation},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("groups[0].client.profile", "kafka-3.2"),
		Without: []string{"broker-crash", "broker-host-down"}},
	{Bug: "KAFKA-14639", From: "kafka-2.3", FixedIn: "kafka-3.6", Affects: "client 2.3–3.4, fixed in 3.5.0", Builtin: "bug-kafka-14639", Oracles: []string{scenario.OracleHandoverBeforeRevoke},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("groups[0].client.profile", "kafka-3.6"),
		Without: []string{"broker-crash", "broker-host-down"}},
	{Bug: "KAFKA-12639", From: "kafka-2.5", FixedIn: "kafka-3.6", Affects: "client 2.5–3.4, fixed in 3.5.0",
		Builtin: "bug-kafka-12639", Oracles: []string{scenario.OracleCPUSpin},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("groups[0].client.profile", "kafka-3.6")},
	{Bug: "apache/kafka#4788", From: "kafka-0.10", FixedIn: "kafka-2.3", Affects: "broker 0.10.1–1.1, fixed in 2.0.0", Builtin: "bug-failover-loading", Oracles: []string{scenario.OracleFalseNotCoordinator},
		Sets: []scenario.Override{ov("duration", "600s")}, Fixed: ov("coordinator.profile", "kafka-2.3")},
}

// LibraryBug returns the library entry of a bug id or built-in name.
func LibraryBug(name string) (Rediscovery, bool) {
	for _, r := range Library {
		if strings.EqualFold(r.Bug, name) || r.Builtin == name {
			return r, true
		}
	}
	return Rediscovery{}, false
}

// Config is the campaign of one variant: seeds first … first+seeds-1,
// stopping at the first run with one of the bug's oracles.
func (r Rediscovery) Config(fixed bool, first uint64, seeds, workers int) (Config, error) {
	src, ok := scenario.Builtin(r.Builtin)
	if !ok {
		return Config{}, fmt.Errorf("explore: no built-in %s", r.Builtin)
	}
	sets := slices.Clone(r.Sets)
	if fixed {
		sets = append(sets, r.Fixed)
	}
	data, err := scenario.Overridden("builtin:"+r.Builtin, src, sets)
	if err != nil {
		return Config{}, err
	}
	sc, err := scenario.Parse("builtin:"+r.Builtin, data)
	if err != nil {
		return Config{}, err
	}
	var setArgs []string
	for _, s := range sets {
		setArgs = append(setArgs, fmt.Sprintf("%s=%v", s.Path, s.Value))
	}
	return Config{Scenario: sc, Source: "builtin:" + r.Builtin, Data: data, Command: "simrun run", Sets: setArgs,
		Swarm: SwarmDefault, Without: r.Without, With: r.With, FirstSeed: first, Seeds: seeds, Workers: workers,
		StopAtFirst: true, Only: r.Oracles}, nil
}

// Command is the `simrun explore` line of one campaign of the measurement.
func (r Rediscovery) Command(fixed bool, first uint64, seeds, workers int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "simrun explore %s --swarm default --file-faults=false", r.Builtin)
	for _, s := range r.Sets {
		fmt.Fprintf(&b, " --set %s=%v", s.Path, s.Value)
	}
	if fixed {
		fmt.Fprintf(&b, " --set %s=%v", r.Fixed.Path, r.Fixed.Value)
	}
	if len(r.Without) > 0 {
		fmt.Fprintf(&b, " --without %s", strings.Join(r.Without, ","))
	}
	if len(r.With) > 0 {
		fmt.Fprintf(&b, " --with %s", strings.Join(r.With, ","))
	}
	fmt.Fprintf(&b, " --oracle %s --stop-at-first --seeds %d --first-seed %d --workers %d",
		strings.Join(r.Oracles, ","), seeds, first, workers)
	return b.String()
}

// CampaignFirstSeed is the first seed of buggy campaign c (1-based):
// c·100000+1, so campaigns never share a seed; the fixed campaign starts
// at FixedFirstSeed.
func CampaignFirstSeed(c int) uint64 { return uint64(c)*100_000 + 1 }

// FixedFirstSeed is the first seed of the fixed variant's campaign.
const FixedFirstSeed = 900_001

// Measurement is one row of the rediscovery table.
type Measurement struct {
	Rediscovery
	// Seeds is the campaign size; First[c] the runs up to and including
	// the first finding of campaign c, 0 when it found nothing in Seeds
	// runs (or in its time budget: Runs[c] says how far it got).
	Seeds int
	First []int
	Runs  []int
	Wall  []time.Duration // to the first finding (or the whole campaign)
	// AlsoFixed[c]: campaign c's first finding fires on the fixed variant
	// too, with the same seed (so it is not this bug).
	AlsoFixed []bool
	// FixedRuns, FixedFindingSeed: the fixed campaign's runs and its first
	// finding's seed (0: none, a clean profile); FixedWall its wall time.
	FixedRuns        int
	FixedFindingSeed uint64
	FixedWall        time.Duration
}

// campaign runs one exploration campaign of the bug (its fixed variant if
// fixed) from seed first over seeds seeds, with a wall-time budget.
func (r Rediscovery) campaign(ctx context.Context, fixed bool, first uint64, seeds, workers int, budget time.Duration) (*Report, error) {
	cfg, err := r.Config(fixed, first, seeds, workers)
	if err != nil {
		return nil, err
	}
	cfg.Budget, cfg.Ctx = budget, ctx
	return Run(cfg)
}

// Measure runs the rediscovery measurement of one bug: campaigns buggy
// campaigns of up to seeds runs, each stopping at its first finding, and
// one fixed campaign of fixedSeeds runs; budget bounds each campaign's
// wall time (0: none). A bug with no oracle runs nothing. Cancelling ctx
// ends it with an error wrapping context.Canceled.
func Measure(ctx context.Context, r Rediscovery, campaigns, seeds, fixedSeeds, workers int, budget time.Duration) (Measurement, error) {
	m := Measurement{Rediscovery: r, Seeds: seeds}
	if len(r.Oracles) == 0 {
		return m, nil
	}
	for c := 1; c <= campaigns; c++ {
		rep, err := r.campaign(ctx, false, CampaignFirstSeed(c), seeds, workers, budget)
		if err != nil {
			return m, err
		}
		first, wall, alsoFixed := 0, rep.Wall, false
		if rep.Stopped == "first" {
			first, wall = rep.Runs, rep.FirstFindingWall
			// The differential check: the same seed on the fixed variant.
			fcfg, err := r.Config(true, rep.FirstFindingSeed, 1, 1)
			if err != nil {
				return m, err
			}
			fcfg.Ctx = ctx
			frep, err := Run(fcfg)
			if err != nil {
				return m, err
			}
			alsoFixed = frep.RunsWithFindings > 0
		}
		m.AlsoFixed = append(m.AlsoFixed, alsoFixed)
		m.First = append(m.First, first)
		m.Runs = append(m.Runs, rep.Runs)
		m.Wall = append(m.Wall, wall)
	}
	if fixedSeeds > 0 {
		rep, err := r.campaign(ctx, true, FixedFirstSeed, fixedSeeds, workers, budget)
		if err != nil {
			return m, err
		}
		m.FixedRuns, m.FixedFindingSeed, m.FixedWall = rep.Runs, rep.FirstFindingSeed, rep.Wall
	}
	return m, nil
}

// Median returns the median seeds to the first finding and the median
// wall time over the campaigns, ok false unless every campaign found the
// bug (a finding the fixed variant shows too is not the bug).
func (m Measurement) Median() (seeds int, wall time.Duration, ok bool) {
	if len(m.First) == 0 || slices.Contains(m.First, 0) || slices.Contains(m.AlsoFixed, true) {
		return 0, 0, false
	}
	f := slices.Clone(m.First)
	w := slices.Clone(m.Wall)
	sort.Ints(f)
	slices.Sort(w)
	return f[len(f)/2], w[len(w)/2], true
}

// TableHeader is the rediscovery table's header (markdown).
const TableHeader = "| Bug | Oracle | Buggy: seeds to first (per campaign) | Median seeds / wall | Fixed: findings / runs |\n|---|---|---|---|---|"

// Row is the measurement as one markdown table row.
func (m Measurement) Row() string {
	oracles := "—"
	if len(m.Oracles) > 0 {
		oracles = "`" + strings.Join(m.Oracles, "`, `") + "`"
	}
	if len(m.First) == 0 {
		return fmt.Sprintf("| %s | %s | not run: %s | — | — |", m.Bug, oracles, m.Unfindable)
	}
	var per []string
	for i, f := range m.First {
		switch {
		case f == 0:
			per = append(per, fmt.Sprintf("none in %d (%s)", m.Runs[i], m.Wall[i].Round(time.Second)))
		case i < len(m.AlsoFixed) && m.AlsoFixed[i]:
			per = append(per, fmt.Sprintf("%d (fires on the fixed variant too: not this bug)", f))
		default:
			per = append(per, fmt.Sprint(f))
		}
	}
	found := strings.Join(per, ", ")
	if m.Unfindable != "" {
		found += "; not expected: " + m.Unfindable
	}
	median := "— (not every campaign found the bug)"
	if s, w, ok := m.Median(); ok {
		median = fmt.Sprintf("%d / %s", s, w.Round(10*time.Millisecond))
	}
	fixed := "not run"
	if m.FixedRuns > 0 {
		if m.FixedFindingSeed == 0 {
			fixed = fmt.Sprintf("0 / %d (%s)", m.FixedRuns, m.FixedWall.Round(100*time.Millisecond))
		} else {
			fixed = fmt.Sprintf("FALSE ALARM at seed %d (after %d runs)", m.FixedFindingSeed, m.FixedRuns)
		}
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s |", m.Bug, oracles, found, median, fixed)
}
