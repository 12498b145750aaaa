package scenario

import (
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Oracle names (docs/INTERFACE.md, "oracles:"). Each is one predicate over a
// run (harness/oracles.go); `simrun explore` reports a run that fires one.
const (
	OracleGroupStuck       = "group-stuck"
	OracleRebalanceStorm   = "rebalance-storm"
	OracleNeverRejoins     = "never-rejoins"
	OracleUnownedAtEnd     = "unowned-at-end"
	OracleUnbalanced       = "unbalanced-assignment"
	OracleDoubleOwnedAtEnd = "double-owned-at-end"
	OracleMemberLeak       = "member-leak"
	OracleCPUSpin          = "cpu-spin"
	OracleMemberIDLeak     = "member-id-leak"
	OracleClientFatal      = "client-fatal"
	// Promises the protocol makes, and the symptoms of their breaking by
	// KAFKA-14639, KAFKA-13891 and apache/kafka PR #4788
	// (harness/oracles_promise.go).
	OracleHandoverBeforeRevoke = "handover-before-revoke"
	OracleOverRevocation       = "over-revocation"
	OracleFalseNotCoordinator  = "false-not-coordinator"
	// The symptoms of KAFKA-13214 / KAFKA-13419 (a client that drops its
	// member id) and KAFKA-12890 (a sync phase nothing bounds):
	// harness/oracles_ids.go.
	OracleAbandonedMemberID = "abandoned-member-id"
	OracleSyncOverrun       = "sync-overrun"
)

// OracleNames lists every oracle, in docs/INTERFACE.md order.
var OracleNames = []string{
	OracleGroupStuck, OracleRebalanceStorm, OracleNeverRejoins, OracleUnownedAtEnd,
	OracleUnbalanced, OracleDoubleOwnedAtEnd, OracleMemberLeak, OracleCPUSpin,
	OracleMemberIDLeak, OracleClientFatal,
	OracleHandoverBeforeRevoke, OracleOverRevocation, OracleFalseNotCoordinator,
	OracleAbandonedMemberID, OracleSyncOverrun,
}

// Oracles holds the thresholds a scenario sets for the anomaly oracles (the
// optional `oracles:` key). A zero field means the oracle's default, which
// harness/oracles.go derives from the group's timeouts.
type Oracles struct {
	// Settle (settle): how long after the last fault a healthy group is
	// Stable again; the end-state oracles judge a run only when it lasted
	// this long after its last fault. Zero: harness.settleBound.
	Settle time.Duration
	// GroupStuck (group-stuck): a group with live members is not Stable at
	// the end and has not been for longer than this after the last fault.
	GroupStuck time.Duration
	// StormGenerations and StormWindow (rebalance-storm,
	// rebalance-storm.window): more than StormGenerations generations
	// complete within StormWindow while no fault is active or recent.
	StormGenerations int
	StormWindow      time.Duration
	// NeverRejoins (never-rejoins): a live process has no member id in its
	// group for longer than this after the last fault.
	NeverRejoins time.Duration
	// MemberIDLeak (member-id-leak): the group has more member ids at its
	// coordinator than live processes, continuously for longer than this
	// (at any time of the run, not only at its end). Zero: the settle bound.
	MemberIDLeak time.Duration
	// CPUSpin (cpu-spin): requests per second one member sends, averaged
	// over 10 s windows, above which the oracle fires.
	CPUSpin float64
	// Handover (handover-before-revoke): in a cooperative group, a
	// partition is assigned to a process while another live process still
	// owns it and is still a member of the group at the coordinator; the
	// oracle fires when that double ownership lasts longer than this.
	// Zero: any.
	Handover time.Duration
	// OverRevocation (over-revocation): a cooperative member gives up at
	// least this many partitions as lost at once while it is still a
	// member of the group at the coordinator, in the generation the
	// coordinator is at, and did not leave. Zero: 1.
	OverRevocation int
	// FalseNotCoordinator and FalseNotCoordinatorWindow
	// (false-not-coordinator, false-not-coordinator.window): more than
	// this many false coordinator-dead marks caused by a NOT_COORDINATOR
	// answer (docs/DESIGN.md's "false": the broker was alive and still the
	// coordinator) in one group within the window. Zero: 5 and 1 minute.
	FalseNotCoordinator       int
	FalseNotCoordinatorWindow time.Duration
	// Disable lists oracles turned off for this scenario.
	Disable []string
}

// Enabled reports whether the oracle named name is on.
func (o *Oracles) Enabled(name string) bool {
	return o == nil || !slices.Contains(o.Disable, name)
}

var oraclesSchema = &mapSchema{keys: leaves(
	"settle", "group-stuck", "rebalance-storm", "rebalance-storm.window", "never-rejoins", "member-id-leak", "cpu-spin",
	"handover-before-revoke", "over-revocation", "false-not-coordinator", "false-not-coordinator.window", "disable")}

// maxStormGenerations bounds rebalance-storm (a limit on everything).
const maxStormGenerations = 1_000_000

// oracles decodes the `oracles:` mapping.
func (d *decoder) oracles(n *yaml.Node) (*Oracles, error) {
	const path = "oracles"
	f, err := d.mapping(n, path, oraclesSchema)
	if err != nil {
		return nil, err
	}
	o := &Oracles{}
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"settle", &o.Settle}, {"group-stuck", &o.GroupStuck}, {"rebalance-storm.window", &o.StormWindow}, {"never-rejoins", &o.NeverRejoins}, {"member-id-leak", &o.MemberIDLeak},
		{"false-not-coordinator.window", &o.FalseNotCoordinatorWindow}} {
		if v := f.get(k.key); v != nil {
			if *k.dst, err = d.duration(v, sub(path, k.key)); err != nil {
				return nil, err
			}
			if *k.dst == 0 {
				return nil, d.errf(v, sub(path, k.key), "must be positive (turn the oracle off with disable: [...])")
			}
		}
	}
	if v := f.get("rebalance-storm"); v != nil {
		x, err := d.integer(v, sub(path, "rebalance-storm"), 1, maxStormGenerations)
		if err != nil {
			return nil, err
		}
		o.StormGenerations = int(x)
	}
	if v := f.get("handover-before-revoke"); v != nil {
		// Zero is the default (any double ownership); a positive duration
		// tolerates shorter ones.
		if o.Handover, err = d.duration(v, sub(path, "handover-before-revoke")); err != nil {
			return nil, err
		}
	}
	for _, k := range []struct {
		key string
		dst *int
	}{{"over-revocation", &o.OverRevocation}, {"false-not-coordinator", &o.FalseNotCoordinator}} {
		if v := f.get(k.key); v != nil {
			x, err := d.integer(v, sub(path, k.key), 1, MaxPartitions)
			if err != nil {
				return nil, err
			}
			*k.dst = int(x)
		}
	}
	if v := f.get("cpu-spin"); v != nil {
		var x float64
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || v.Decode(&x) != nil ||
			math.IsNaN(x) || x <= 0 || math.IsInf(x, 0) {
			return nil, d.errf(v, sub(path, "cpu-spin"), "expected a positive number of requests per second, got %s", kindName(v))
		}
		o.CPUSpin = x
	}
	if v := f.get("disable"); v != nil {
		names, err := d.stringList(v, sub(path, "disable"))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if !slices.Contains(OracleNames, name) {
				return nil, d.errf(v, sub(path, "disable"), "unknown oracle %q; oracles: %s", name, strings.Join(OracleNames, ", "))
			}
		}
		o.Disable = names
	}
	return o, nil
}
