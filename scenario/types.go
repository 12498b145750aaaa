package scenario

import "time"

// Scenario is a parsed, validated and defaulted scenario file (INTERFACE.md).
// Every duration is a time.Duration; *.ms properties are converted.
type Scenario struct {
	Name     string
	Duration time.Duration
	Seed     uint64

	Coordinator Coordinator
	Network     Network
	Topics      []Topic
	Groups      []Group
	Faults      []Fault // sorted by At (stable: file order among equal At)

	// Source is the file name (or "builtin:<name>") the scenario came from.
	Source string
}

// Coordinator is the broker side.
type Coordinator struct {
	Brokers               int
	Profile               string        // kafka-2.x, kafka-3.x, ...
	InitialRebalanceDelay time.Duration // group.initial.rebalance.delay.ms
	MinSessionTimeout     time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout     time.Duration // group.max.session.timeout.ms
	MaxSize               int           // group.max.size
	LoadTime              time.Duration // load.time
}

// DistKind names a distribution.
type DistKind string

const (
	DistConstant    DistKind = "constant"
	DistUniform     DistKind = "uniform"
	DistExponential DistKind = "exponential"
	DistLognormal   DistKind = "lognormal"
)

// Dist is a duration distribution as written in the file: a constant
// ("1ms") or {dist: uniform, min, max} / {dist: exponential, min, mean} /
// {dist: lognormal, median, p99}.
type Dist struct {
	Kind   DistKind
	Value  time.Duration // constant
	Min    time.Duration // uniform, exponential
	Max    time.Duration // uniform
	Mean   time.Duration // exponential: mean of the exponential part added to Min
	Median time.Duration // lognormal
	P99    time.Duration // lognormal
}

// Network is the simulated network.
type Network struct {
	Latency Dist
	Loss    float64
}

// Topic is one topic.
type Topic struct {
	Name       string
	Partitions int
}

// Client holds Kafka consumer properties, profile defaults applied.
type Client struct {
	Profile           string
	SessionTimeout    time.Duration // session.timeout.ms
	HeartbeatInterval time.Duration // heartbeat.interval.ms
	MaxPollInterval   time.Duration // max.poll.interval.ms
	RetryBackoff      time.Duration // retry.backoff.ms
	RetryBackoffMax   time.Duration // retry.backoff.max.ms
	RequestTimeout    time.Duration // request.timeout.ms
	Assignors         []string      // partition.assignment.strategy
	StaticMembership  bool          // group.instance.id: true
	AutoCommit        bool          // enable.auto.commit
}

// Workload is the application's poll loop.
type Workload struct {
	PollInterval Dist // poll.interval
	PollTimeout  Dist // poll.timeout
	AssignTime   Dist // assign.time
	CallbackTime Dist // callback.time
}

// Start says when members start: member i at At + i*Stagger.
type Start struct {
	At      time.Duration
	Stagger time.Duration
}

// Group is one consumer group.
type Group struct {
	ID        string
	Members   int
	Subscribe []string
	Client    Client
	Workload  Workload
	Start     Start
}

// FaultKind names a fault action.
type FaultKind string

const (
	FaultCrash               FaultKind = "crash"
	FaultRestart             FaultKind = "restart"
	FaultPause               FaultKind = "pause"
	FaultSlowPoll            FaultKind = "slow-poll"
	FaultPartition           FaultKind = "partition"
	FaultLoss                FaultKind = "loss"
	FaultLatency             FaultKind = "latency"
	FaultCoordinatorFailover FaultKind = "coordinator-failover"
	FaultLeave               FaultKind = "leave"
	FaultJoin                FaultKind = "join"
	FaultRollingRestart      FaultKind = "rolling-restart"
)

// Fault is one timeline entry. Which fields are set depends on Kind.
type Fault struct {
	At   time.Duration
	Kind FaultKind
	// Target is a member name ("payments-3") for crash, restart, pause,
	// slow-poll, leave; a group id for join, coordinator-failover,
	// rolling-restart.
	Target string
	// Peers are the two endpoints of a partition fault: member names or
	// "coordinator".
	Peers    [2]string
	For      time.Duration // pause, slow-poll, partition, loss, latency windows
	Loss     float64       // loss window
	Latency  Dist          // latency window
	Interval time.Duration // rolling-restart
	Downtime time.Duration // rolling-restart
	// Line is the fault's line in the file, for messages.
	Line int
}
