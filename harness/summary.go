package harness

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
}

// Rebalance is one rebalance as DESIGN.md defines it.
type Rebalance struct {
	Generation int32  `json:"generation"`
	StartMs    int64  `json:"start_ms"`
	EndMs      int64  `json:"end_ms"`
	DurationMs int64  `json:"duration_ms"`
	Trigger    string `json:"trigger"`
	Members    int    `json:"members"`
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
	ID                          string      `json:"id"`
	Rebalances                  []Rebalance `json:"rebalances"`
	RebalanceCount              int         `json:"rebalance_count"`
	RebalanceDurationMs         Stats       `json:"rebalance_duration_ms"`
	CoordinatorDeadMarks        int         `json:"coordinator_dead_marks"`
	FalseCoordinatorDeadMarks   int         `json:"false_coordinator_dead_marks"`
	Evictions                   int         `json:"evictions"`
	FalseEvictions              int         `json:"false_evictions"`
	MemberHours                 float64     `json:"member_hours"`
	UnownedPartitionSeconds     float64     `json:"unowned_partition_seconds"`
	DoubleOwnedPartitionSeconds float64     `json:"double_owned_partition_seconds"`
	FinalGeneration             int32       `json:"final_generation"`
	StableAtEnd                 bool        `json:"stable_at_end"`
	FatalErrors                 []string    `json:"fatal_errors,omitempty"`
}

// Violation is one invariant violation: the checker, the first violating
// event's time, and a message.
type Violation struct {
	Checker string `json:"checker"`
	AtMs    int64  `json:"at_ms"`
	Message string `json:"message"`
}
