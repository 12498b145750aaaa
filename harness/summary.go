package harness

import "encoding/json"

// Summary is the JSON object `simrun run --json` prints (INTERFACE.md). Field
// order and names are a contract with users' scripts.
type Summary struct {
	Scenario            string         `json:"scenario"`
	Seed                uint64         `json:"seed"`
	SimulatedMs         int64          `json:"simulated_ms"`
	Events              int64          `json:"events"`
	TraceSHA256         string         `json:"trace_sha256"`
	Groups              []GroupSummary `json:"groups"`
	InvariantViolations []Violation    `json:"invariant_violations"`
	// Valid is false when the run cannot be trusted as a measurement of the
	// configuration: a member stopped on a fatal error, a group never
	// reached Stable, or the event budget or livelock guard ended the run.
	// InvalidReason says which (empty when valid).
	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalid_reason,omitempty"`
	// MeasureFromMs is the start of the measurement window (scenario
	// measure.from): the groups' counts, episodes and integrals cover
	// [measure_from_ms, simulated_ms]. Omitted when 0 (the whole run).
	MeasureFromMs int64 `json:"measure_from_ms,omitempty"`
	// FaultPhaseWindows says what realistic timing drew for the faults:
	// one line per distinct window a fault's phase was drawn uniformly
	// over ("uniform over 15 s (least common period of heartbeat 3 s,
	// auto-commit 5 s)"). Omitted under timing: exact or without faults.
	FaultPhaseWindows []string `json:"fault_phase_windows,omitempty"`
}

// Stats summarises a sample of durations in milliseconds.
type Stats struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// GroupSummary holds one group's figures.
type GroupSummary struct {
	ID                        string      `json:"id"`
	Rebalances                []Rebalance `json:"rebalances"`
	RebalanceCount            int         `json:"rebalance_count"`
	RebalanceDurationMs       Stats       `json:"rebalance_duration_ms"`
	CoordinatorDeadMarks      int         `json:"coordinator_dead_marks"`
	FalseCoordinatorDeadMarks int         `json:"false_coordinator_dead_marks"`
	Evictions                 int         `json:"evictions"`
	FalseEvictions            int         `json:"false_evictions"`
	MemberHours               float64     `json:"member_hours"`
	// Rates per member-hour of simulated time (DESIGN.md: "rates are per
	// member-hour, with the number of member-hours beside them"); 0 when no
	// member-hours were simulated. Filled by FillRates.
	CoordinatorDeadMarksPerMemberHour      float64 `json:"coordinator_dead_marks_per_member_hour"`
	FalseCoordinatorDeadMarksPerMemberHour float64 `json:"false_coordinator_dead_marks_per_member_hour"`
	EvictionsPerMemberHour                 float64 `json:"evictions_per_member_hour"`
	FalseEvictionsPerMemberHour            float64 `json:"false_evictions_per_member_hour"`
	RebalancesPerMemberHour                float64 `json:"rebalances_per_member_hour"`
	UnownedPartitionSeconds                float64 `json:"unowned_partition_seconds"`
	// UnownedPartitionSecondsAfterFirstFault counts only from the first
	// fault on, so a fault's cost is not mixed with the startup join.
	UnownedPartitionSecondsAfterFirstFault float64 `json:"unowned_partition_seconds_after_first_fault"`
	// PartitionsMoved counts handovers: a member starts owning a partition
	// whose previous owner was another member (slot); a member getting
	// back what it had (eager revoke-all then the same assignment, a
	// restarted static member) is not a move. In the measurement window;
	// ...AfterFirstFault only from the first fault of any kind on.
	PartitionsMoved                int     `json:"partitions_moved"`
	PartitionsMovedAfterFirstFault int     `json:"partitions_moved_after_first_fault"`
	DoubleOwnedPartitionSeconds    float64 `json:"double_owned_partition_seconds"`
	// Failovers lists each coordinator failover of the group and how long
	// the group took to recover from it.
	Failovers       []Failover `json:"failovers,omitempty"`
	FinalGeneration int32      `json:"final_generation"`
	StableAtEnd     bool       `json:"stable_at_end"`
	FatalErrors     []string   `json:"fatal_errors,omitempty"`
	// Three counts of "rebalances" that must not be confused (DESIGN.md):
	// SettleEpisodes = RebalanceCount, the episodes above (what users feel);
	// Generations, the coordinator's generation bumps (what the broker logs
	// as "Stabilized group ... generation N"); ClientRebalances, completed
	// rebalances summed over members (the Java client's rebalance-total).
	SettleEpisodes   int `json:"settle_episodes"`
	Generations      int `json:"generations"`
	ClientRebalances int `json:"client_rebalances"`
	// Leaves are LeaveGroup removals that are not evictions (a close);
	// Fences static members replaced by a new process (KIP-345).
	Leaves int `json:"leaves"`
	Fences int `json:"fences"`
	// FirstFaultMs is when the first fault of any kind (explicit, swarm,
	// rolling) started; -1 without faults. Fault-relative figures count
	// from it.
	FirstFaultMs int64 `json:"first_fault_ms"`
}

// Failover is one coordinator failover of a group. RecoveryMs runs from the
// failover to the moment the new coordinator has the group Stable and has
// answered every live member a successful Heartbeat or SyncGroup after
// loading (answers during loading do not count: Kafka answers NONE without
// looking at the group); -1 when that did not happen before the run ended.
type Failover struct {
	AtMs       int64 `json:"at_ms"`
	RecoveryMs int64 `json:"recovery_ms"`
}

// Violation is one invariant violation: the checker, the first violating
// event's time, and a message.
type Violation struct {
	Checker string `json:"checker"`
	AtMs    int64  `json:"at_ms"`
	Message string `json:"message"`
	// Event is the violating trace event as one JSON line of docs/TRACE.md
	// (empty for checks made at the end of the run).
	Event string `json:"event,omitempty"`
}

// FillRates sets the per-member-hour rates from the counts and MemberHours.
func (g *GroupSummary) FillRates() {
	rate := func(n int) float64 {
		if g.MemberHours <= 0 {
			return 0
		}
		return Round(float64(n)/g.MemberHours, 6)
	}
	g.CoordinatorDeadMarksPerMemberHour = rate(g.CoordinatorDeadMarks)
	g.FalseCoordinatorDeadMarksPerMemberHour = rate(g.FalseCoordinatorDeadMarks)
	g.EvictionsPerMemberHour = rate(g.Evictions)
	g.FalseEvictionsPerMemberHour = rate(g.FalseEvictions)
	g.RebalancesPerMemberHour = rate(g.RebalanceCount)
}

// MarshalJSON writes the group with its rates filled in, so every JSON
// summary carries them whether or not the producer called FillRates.
func (g GroupSummary) MarshalJSON() ([]byte, error) {
	type plain GroupSummary // no MarshalJSON method: no recursion
	g.FillRates()
	return json.Marshal(plain(g))
}
