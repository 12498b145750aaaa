package scenario

import (
	"fmt"
	"time"
)

// Scenario is a parsed, validated and defaulted scenario file (INTERFACE.md).
// Every duration is a time.Duration; *.ms properties are converted.
type Scenario struct {
	// pollDefaulted[i]: Groups[i] left poll.interval to its default, which
	// depends on the timing (SetTiming).
	pollDefaulted []bool
	Name          string
	Duration      time.Duration
	Seed          uint64

	Coordinator Coordinator
	Network     Network
	Topics      []Topic
	Groups      []Group
	Faults      []Fault // sorted by At (stable: file order among equal At)
	// Swarm, when set, draws a random fault schedule from the seed
	// (docs/OBSERVABILITY.md); nil means no swarm.
	Swarm *Swarm
	// Oracles, when set, holds the anomaly oracles' thresholds (the
	// optional `oracles:` key, scenario/oracles.go); nil means defaults.
	Oracles *Oracles
	// DriverSeeds, when set, are the testbed driver's workload seeds by
	// process incarnation, "member.inc" → seed (inc 1 is a member's first
	// process), as a real repetition's meta.json records them: a classic
	// member incarnation with one draws its poll.interval, poll.timeout
	// and callback.time as the real driver did (harness/replay.go). simrun
	// calibrate sets it (Match); not a file key. Only looked up, never
	// ranged over.
	DriverSeeds map[string]int64
	// FirstRecords: for such an incarnation, how long after its first
	// non-empty assignment its first poll() returned records in the real
	// run (the driver's first_records; realkafka.FirstRecordsOf), which the
	// replay adds to its first processing step (harness/replay.go). Same
	// keys; not a file key.
	FirstRecords map[string]time.Duration

	// Warnings are "file:line: path: message" lines about input that is
	// valid but has no effect (a fault at or after the end of the run).
	// Commands print them on stderr.
	Warnings []string

	// Source is the file name (or "builtin:<name>") the scenario came from.
	Source string
	// Notes are what the parse decided for the user and says in one line
	// each, e.g. which era profile a Kafka version such as kafka-3.6.1
	// resolved to. simrun prints them on stderr.
	Notes []string

	// Timing is TimingRealistic (the default: the seed draws the phase of
	// each member's start and of each fault relative to the heartbeats) or
	// TimingExact (starts and faults at exactly the written instants, for
	// tests that need exact times). INTERFACE.md, "timing".
	Timing Timing
	// MeasureFrom starts the measurement window (measure: {from: 120s}):
	// settle episodes that start before it, and unowned partition-seconds
	// before it, are left out of the figures. 0 measures the whole run.
	MeasureFrom time.Duration
}

// Timing selects how the seed places starts and faults (Scenario.Timing).
type Timing string

const (
	TimingRealistic Timing = "realistic"
	TimingExact     Timing = "exact"
)

// Coordinator is the broker side.
type Coordinator struct {
	Brokers               int
	Profile               string        // kafka-2.x, kafka-3.x, ...
	InitialRebalanceDelay time.Duration // group.initial.rebalance.delay.ms
	MinSessionTimeout     time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout     time.Duration // group.max.session.timeout.ms
	MaxSize               int           // group.max.size
	LoadTime              time.Duration // load.time
	// FailoverDelay (failover.delay) is how long after a broker dies its
	// coordinator role moves: the session of the dead broker with the
	// cluster's metadata service ends and the controller moves its
	// partition leaderships. By default it is that session timeout:
	// broker.session.timeout.ms (KRaft) or zookeeper.session.timeout.ms
	// (ZooKeeper), per MetadataMode.
	FailoverDelay time.Duration
	// FailoverDelaySet: failover.delay was written, so a broker's death
	// moves its coordinator role exactly that long after (no fencing phase,
	// harness/fence.go).
	FailoverDelaySet bool
	// MetadataMode (metadata.mode) is how the cluster keeps its metadata:
	// "zookeeper" (ZooKeeper mode: brokers register ephemeral znodes, the
	// default up to 3.2) or "kraft" (KRaft mode, KIP-500: brokers heartbeat
	// to the controller quorum; production-ready from 3.3, KIP-833, and the
	// only mode from 4.0).
	MetadataMode string
	// ZkSessionTimeout is zookeeper.session.timeout.ms (6000 until 2.4,
	// 18000 from 2.5, KIP-537); BrokerSessionTimeout is
	// broker.session.timeout.ms (9000, KRaft, 2.8+). Only the one of the
	// MetadataMode is used; the other is 0.
	ZkSessionTimeout     time.Duration
	BrokerSessionTimeout time.Duration
	// BrokerHeartbeatInterval is broker.heartbeat.interval.ms (KRaft: 2000,
	// KafkaConfig.scala @2.8.2, KRaftConfigs @3.9.0-rc3; 0 in ZooKeeper
	// mode): how often a broker heartbeats to the controller, so how long
	// before its death its last heartbeat was (harness/fence.go).
	BrokerHeartbeatInterval time.Duration

	// The group-record append to __consumer_offsets (storeGroup): how long
	// it takes (append.latency, plus the record's size over
	// append.bandwidth), when the broker gives up on it
	// (offsets.commit.timeout.ms; 0 = never), and how often it fails
	// (append.error.probability) with which log error (append.error).
	AppendLatency   Dist
	AppendBandwidth int64
	// AppendLatencySet: append.latency was written (simrun calibrate
	// feeds the testbed's measured append only where it was not).
	AppendLatencySet bool
	// AppendLinger is group.coordinator.append.linger.ms of the Java group
	// coordinator (kafka-4.0 and later): writes wait this long in a batch
	// before they are appended. 5 ms in 4.0–4.1; from 4.2 the default is
	// -1, adaptive (AppendLingerAdaptive), which the model runs as 0.
	// 0 for the Scala coordinator (≤ 3.9), which has no linger.
	AppendLinger           time.Duration
	AppendLingerAdaptive   bool
	OffsetsCommitTimeout   time.Duration
	AppendErrorProbability float64
	AppendError            string

	// Consumer groups (KIP-848, group.protocol=consumer), Kafka's broker
	// settings (GroupCoordinatorConfig): group.consumer.session.timeout.ms
	// and its min/max bounds, group.consumer.heartbeat.interval.ms and its
	// bounds, group.consumer.max.size (0 = unlimited),
	// group.consumer.assignors (the first is the default) and 4.3's
	// group.consumer.assignment.interval.ms (KIP-1263) with its bounds.
	// ConsumerProfile is the consumer-group coordinator's era: Profile
	// when it names kafka-4.0 … kafka-4.3, else "" (no consumer groups).
	ConsumerProfile              string
	ConsumerSessionTimeout       time.Duration
	ConsumerMinSessionTimeout    time.Duration
	ConsumerMaxSessionTimeout    time.Duration
	ConsumerHeartbeatInterval    time.Duration
	ConsumerMinHeartbeatInterval time.Duration
	ConsumerMaxHeartbeatInterval time.Duration
	ConsumerMaxSize              int
	ConsumerAssignors            []string
	// ConsumerMigrationPolicy is group.consumer.migration.policy:
	// bidirectional (the 4.0+ default), upgrade, downgrade or disabled.
	ConsumerMigrationPolicy       string
	ConsumerAssignmentInterval    time.Duration
	ConsumerMinAssignmentInterval time.Duration
	ConsumerMaxAssignmentInterval time.Duration
	// The consumer-group coordinator runtime's costs (not Kafka
	// properties; model/consumer/coordinator Costs, 0 by default: answered
	// at once): consumer.assign.time, the event loop's time for each
	// target computation (the assignor's run); consumer.first.target.time,
	// the coordinator's first target computation's instead (a fresh
	// broker's whole first heartbeat: the group's creation, its epoch bump
	// and a cold assignor); consumer.append.latency, a heartbeat's
	// records' append → commit (its answer waits for it, and later answers
	// of the shard too); consumer.first.append.latency, the coordinator's
	// first write's instead. ConsumerCostsSet: one of them was written
	// (simrun calibrate feeds the testbed's measured ones only where none
	// was).
	ConsumerAssignTime         time.Duration
	ConsumerFirstTargetTime    time.Duration
	ConsumerAppendLatency      time.Duration
	ConsumerFirstAppendLatency time.Duration
	ConsumerCostsSet           bool

	// RequestTime (request.time) is the time the coordinator takes to
	// serve one request; requests queue and are served one at a time.
	// Zero (the default) serves each on arrival.
	RequestTime Dist
}

// DistKind names a distribution.
type DistKind string

const (
	DistConstant    DistKind = "constant"
	DistUniform     DistKind = "uniform"
	DistExponential DistKind = "exponential"
	DistLognormal   DistKind = "lognormal"
)

// DefaultPollInterval is the default poll.interval: the time the
// application spends on the records of one poll(), lognormal with median
// 200 ms and p99 2 s, drawn per batch from each member's own stream. Real
// consumers' batch processing is right-skewed (most batches are quick; a
// slow downstream call, a large record or a GC pause makes one in a
// hundred ten times slower), and any spread at all keeps a group's members
// from polling in lock-step: with a constant every member learns of a
// rebalance and rejoins in the same millisecond, which makes eager
// rebalances look far cheaper than they are (INTERFACE.md).
// Under timing: exact the default is the constant ExactPollInterval.
var DefaultPollInterval = Dist{Kind: DistLognormal, Median: 200 * time.Millisecond, P99: 2 * time.Second}

// ExactPollInterval is the default poll.interval under timing: exact.
const ExactPollInterval = 100 * time.Millisecond

// Constant reports whether every draw of d is the same value.
func (d Dist) Constant() bool {
	switch d.Kind {
	case DistConstant, "":
		return true
	case DistUniform:
		return d.Min == d.Max
	case DistLognormal:
		return d.Median == d.P99
	}
	return false
}

// LockStepWarning is the one line a scenario gets when a comparison of
// assignors or protocols runs on a constant poll.interval.
const LockStepWarning = "a constant poll.interval keeps the group in lock-step: eager rebalances look cheaper than they are (every member learns of a rebalance and rejoins in the same millisecond); give it a distribution, e.g. {dist: lognormal, median: 200ms, p99: 2s} (the default)"

// SetTiming sets the scenario's timing. timing: exact places everything at
// the written instants: a group that does not set poll.interval then
// processes each batch in exactly ExactPollInterval (every instant as
// written); under realistic timing such a group gets DefaultPollInterval.
func (s *Scenario) SetTiming(t Timing) {
	s.Timing = t
	for i := range s.Groups {
		if i < len(s.pollDefaulted) && s.pollDefaulted[i] {
			if t == TimingExact {
				s.Groups[i].Workload.PollInterval = Dist{Kind: DistConstant, Value: ExactPollInterval}
			} else {
				s.Groups[i].Workload.PollInterval = DefaultPollInterval
			}
		}
	}
}

// LockStep reports whether a group of s polls in lock-step: realistic
// timing and a constant poll.interval (timing: exact asks for exact
// instants and stays silent).
func (s *Scenario) LockStep() bool {
	if s.Timing == TimingExact {
		return false
	}
	for i := range s.Groups {
		if s.Groups[i].Workload.PollInterval.Constant() {
			return true
		}
	}
	return false
}

// RebalanceProtocol names how a group rebalances: its group.protocol and
// assignors (or remote assignor), and static membership — what a
// comparison of assignors or protocols varies.
func (g *Group) RebalanceProtocol() string {
	c := &g.Client
	return fmt.Sprintf("%s/%v/%s/%v", c.GroupProtocol, c.Assignors, c.RemoteAssignor, c.StaticMembership)
}

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

// Network is the simulated network: TCP connections over links with a
// latency distribution and packet loss.
type Network struct {
	Latency Dist
	// Loss is the probability that one TCP transmission (a segment, or its
	// retransmission) is lost; TCP retransmits it after the RTO. With
	// LossDirectional, Loss applies to broker → member packets and
	// LossToBroker to member → broker ones (loss: {to-broker, from-broker}).
	Loss            float64
	LossToBroker    float64
	LossDirectional bool
	// BandwidthBytesPerSecond is each node's egress bandwidth (bandwidth;
	// 0 = unlimited): messages take size/bandwidth to send, one at a time.
	BandwidthBytesPerSecond int64
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
	// GroupProtocol is group.protocol: ProtocolClassic (the default) or
	// ProtocolConsumer (KIP-848); RemoteAssignor is group.remote.assignor
	// ("" = the broker's default), consumer protocol only.
	GroupProtocol  string
	RemoteAssignor string
	AutoCommit     bool // enable.auto.commit
	// AutoCommitInterval is auto.commit.interval.ms (5000 in every era).
	AutoCommitInterval time.Duration
	// Connection handling (NetworkClient): reconnect.backoff.ms,
	// reconnect.backoff.max.ms, socket.connection.setup.timeout.ms and
	// socket.connection.setup.timeout.max.ms (KIP-601, 2.7+); zero means
	// the profile's default.
	ReconnectBackoff      time.Duration
	ReconnectBackoffMax   time.Duration
	SocketSetupTimeout    time.Duration
	SocketSetupTimeoutMax time.Duration
	// MetadataMaxAge is metadata.max.age.ms (300000 in every era): how
	// often a client refreshes topic metadata. Only a scenario with an
	// add-partitions fault changes metadata, so only there does it matter.
	MetadataMaxAge time.Duration
}

// ClientChange is what a rolling restart's `set:` changes in the
// restarted members' client config: group.protocol and
// group.remote.assignor ("" = unchanged).
type ClientChange struct {
	GroupProtocol  string
	RemoteAssignor string
}

// group.protocol values.
const (
	ProtocolClassic  = "classic"
	ProtocolConsumer = "consumer"
)

// Consumer reports whether the group entry runs the consumer protocol.
func (g *Group) Consumer() bool { return g.Client.GroupProtocol == ProtocolConsumer }

// Workload is the application's poll loop.
type Workload struct {
	PollInterval Dist // poll.interval
	PollTimeout  Dist // poll.timeout
	AssignTime   Dist // assign.time
	CallbackTime Dist // callback.time
	// AssignTimeSet: assign.time was written (simrun calibrate feeds the
	// testbed's measured assignment time only where it was not).
	AssignTimeSet bool
	// WaitOvershoot (wait.overshoot) is how late each Object.wait of the
	// classic client's heartbeat thread returns (a measured physical cost,
	// not a Kafka property); WaitOvershootSet: written. Unwritten it is
	// DefaultWaitOvershoot under realistic timing and 0 under timing:
	// exact (Group.HeartbeatWaitOvershoot).
	WaitOvershoot    time.Duration
	WaitOvershootSet bool
}

// Start says when members start: member i at At + i*Stagger.
type Start struct {
	At      time.Duration
	Stagger time.Duration
	// Exact starts the members at exactly these instants under realistic
	// timing too (no phase drawn): the instants are measured facts (simrun
	// calibrate feeds each real member's first JoinGroup instant). Not a
	// file key.
	Exact bool
}

// Group is one `groups:` entry: a consumer group, or one cohort of one.
// Entries with the same ID are cohorts of ONE consumer group (INTERFACE.md,
// "Cohorts"): members with their own client configuration, workload,
// subscription and start, numbered on from the previous cohort's last
// member. Nothing but the ID is shared between cohorts.
type Group struct {
	ID        string
	Members   int
	Subscribe []string
	Client    Client
	Workload  Workload
	Start     Start // member i of this entry (counted from 0 within it) starts at At + i*Stagger
	// Configs are the group's dynamic configs (`configs:`; every entry of
	// one group id has the same).
	Configs GroupConfigs

	// Cohort is the entry's position among the entries with its ID, in file
	// order (0 for a group's first, or only, entry).
	Cohort int
	// FirstIndex is the member index of the entry's first member: 0 for
	// cohort 0, the sum of the earlier cohorts' Members otherwise. Its
	// members are <ID>-FirstIndex … <ID>-(FirstIndex+Members-1); members
	// that join faults add belong to the group's last cohort.
	FirstIndex int
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
	// FaultHostDown: a member's or broker's host goes silent for a while
	// (power, kernel panic, a vanished pod) and then boots again.
	FaultHostDown FaultKind = "host-down"
	// FaultFilter drops or delays chosen messages for a window (extension,
	// docs/OBSERVABILITY.md).
	FaultFilter FaultKind = "filter"
	// FaultAddPartitions raises a topic's partition count (kafka-topics.sh
	// --alter --partitions N): Target is the topic, Partitions the new
	// count. Clients see it at their next metadata refresh
	// (metadata.max.age.ms).
	FaultAddPartitions FaultKind = "add-partitions"
)

// Partition directions.
const (
	DirectionBoth   = "both"    // messages both ways are lost (the default)
	DirectionOneWay = "one-way" // only messages from the first endpoint to the second are lost
)

// Filter directions and actions.
const (
	FilterRequest  = "request"
	FilterResponse = "response"
	FilterBoth     = "both"
	FilterDrop     = "drop"
	FilterDelay    = "delay"
)

// APINames are the Kafka API names a filter may select (ApiKeys.java names).
var APINames = []string{"FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"}

// MessageFilter selects messages on the wire and what happens to them. An
// empty API or Member matches every API or member.
type MessageFilter struct {
	API       string        // a Kafka API name (APINames), or "" for all
	Member    string        // the member at one end of the message, or "" for all
	Direction string        // FilterRequest (member → broker), FilterResponse, FilterBoth
	Action    string        // FilterDrop or FilterDelay
	Delay     time.Duration // extra one-way delay when Action is FilterDelay
}

// Swarm is a random fault schedule drawn from the run's seed. Rates are per
// simulated minute for the whole scenario (a Poisson process each); the
// window is [From, Until). Each kind draws from its own stream, so changing
// one rate leaves the other kinds' schedules unchanged.
type Swarm struct {
	From, Until time.Duration

	Crash         float64 // a random member crashes ...
	CrashDowntime Dist    // ... and restarts this much later
	Pause         float64 // a random member is paused (GC) ...
	PauseFor      Dist    // ... for this long
	Partition     float64 // a random member is cut from its coordinator (both ways) ...
	PartitionFor  Dist    // ... for this long
	Loss          float64 // a network-wide loss window ...
	LossRate      float64 // ... with this loss probability ...
	LossFor       Dist    // ... for this long
	Latency       float64 // a network-wide latency window ...
	LatencyValue  Dist    // ... with this latency ...
	LatencyFor    Dist    // ... for this long
	Failover      float64 // a random group's coordinator moves
}

// Fault is one timeline entry. Which fields are set depends on Kind.
type Fault struct {
	At   time.Duration
	Kind FaultKind
	// Target is a member name ("payments-3") for crash, restart, pause,
	// slow-poll, leave; a member or broker name ("broker-0", or
	// "coordinator": the first group's coordinator when the fault starts)
	// for crash and host-down; a group id for join, coordinator-failover,
	// rolling-restart.
	Target string
	// Peers are the two endpoints of a partition fault: member names or
	// "coordinator".
	Peers    [2]string
	For      time.Duration // pause, slow-poll, partition, loss, latency windows; host-down; crash (optional: restart after)
	Loss     float64       // loss window
	Latency  Dist          // latency window
	Interval time.Duration // rolling-restart
	Downtime time.Duration // rolling-restart
	// Jitter is the window the fault's phase is drawn over under timing:
	// realistic, when the file names one (`jitter: 15s`; 0s: exactly at
	// At); JitterSet says it did. Otherwise the window is the least common
	// period of the periodic timers of what the fault touches (heartbeat,
	// auto-commit, a constant poll interval): harness jitterFaults.
	Jitter    time.Duration
	JitterSet bool
	// Set is a rolling restart's new client settings (`set:`): each
	// member's new process runs with them — a rolling upgrade from the
	// classic to the consumer protocol (or back). nil: unchanged.
	Set *ClientChange
	// Direction of a partition: DirectionBoth (or "", the default) or
	// DirectionOneWay (Peers[0] → Peers[1] lost, the other way delivered).
	Direction string
	// Filter is the filter fault's selection and action.
	Filter *MessageFilter
	// Partitions is add-partitions' new partition count of the topic.
	Partitions int
	// Swarm is true for a fault drawn by the swarm (not in the file).
	Swarm bool
	// Line is the fault's line in the file, for messages.
	Line int
}
