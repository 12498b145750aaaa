package client

import (
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/vtime"
)

// Dist draws a duration from an explicit random stream (vtime.Dist: sim's
// distributions are the same type).
type Dist = vtime.Dist

// Const is a Dist that always returns its value (vtime.Const).
type Const = vtime.Const

// Config is one consumer's configuration: Kafka consumer properties (with
// Kafka's names in the comments) plus the application workload. The harness
// fills every field; profile defaults are applied by the scenario layer, not
// here (ApplyProfileDefaults helps).
type Config struct {
	Name            string // the member's node name in traces, e.g. "payments-3"
	GroupID         string // group.id
	GroupInstanceID string // group.instance.id; "" for a dynamic member
	Topics          []string
	// Metadata the consumer sees for its subscribed topics (the leader
	// assigns from it), and whether it changes during the run.
	Metadata Metadata
	// Brokers are the bootstrap brokers' ids; FindCoordinator goes to one of them.
	Brokers []int32

	Profile           Profile
	SessionTimeout    time.Duration // session.timeout.ms
	HeartbeatInterval time.Duration // heartbeat.interval.ms
	MaxPollInterval   time.Duration // max.poll.interval.ms (the rebalance timeout)
	RetryBackoff      time.Duration // retry.backoff.ms
	RetryBackoffMax   time.Duration // retry.backoff.max.ms (3.7+)
	RequestTimeout    time.Duration // request.timeout.ms
	// Connection handling (NetworkClient; zero: Kafka's defaults).
	ReconnectBackoff      time.Duration // reconnect.backoff.ms
	ReconnectBackoffMax   time.Duration // reconnect.backoff.max.ms
	SocketSetupTimeout    time.Duration // socket.connection.setup.timeout.ms (2.7+, KIP-601)
	SocketSetupTimeoutMax time.Duration // socket.connection.setup.timeout.max.ms
	Assignors             []string      // partition.assignment.strategy, preference order
	AutoCommit            bool          // enable.auto.commit
	// auto.commit.interval.ms; zero means Kafka's default, 5 s
	// (DefaultAutoCommitInterval). Only used when AutoCommit is set.
	AutoCommitInterval time.Duration

	// Workload: the application thread's poll loop.
	PollInterval Dist // processing time after a poll() that returned records
	PollTimeout  Dist // how long poll() blocks when it returns nothing
	AssignTime   Dist // the leader's assignor run
	CallbackTime Dist // each onPartitionsRevoked/Assigned/Lost callback

	// Sim holds the simulator's own switches (not Kafka properties).
	Sim SimOptions
}

// Metadata is the consumer's topic metadata (the Java consumer's Metadata
// and metadata.max.age.ms).
type Metadata struct {
	// Topics is the metadata of the subscribed topics when Cluster is nil.
	Topics []assign.Topic
	// Cluster, when set, is metadata that changes during the run
	// (add-partitions); the consumer refreshes its view of it every
	// MaxAge (metadata.max.age.ms; zero: 5 minutes) and reads it instead
	// of Topics (metadata.go).
	Cluster *Cluster
	MaxAge  time.Duration
}

// SimOptions are a member's simulation switches that are not Kafka
// properties: how the model is replayed, not what the client does.
type SimOptions struct {
	// EagerPolls disables the lazy replay of uneventful polls (lazy.go): every
	// poll() is its own simulator event. Slower; for equivalence tests.
	EagerPolls bool
	// HeartbeatWakeCadence models the Java HeartbeatThread's wake-ups: it
	// waits retry.backoff.ms between iterations, so a due heartbeat (or an
	// expired session or poll timer) is acted on at the first wake-up at or
	// after its deadline, on a grid anchored where the thread is enabled and
	// restarted at each heartbeat sent (hbgrid.go). Off, the thread acts exactly at each deadline. The harness
	// sets it for every member (it is Kafka's behaviour,
	// AbstractCoordinator.HeartbeatThread.run @3.7.0 and @v8.0.0
	// "AbstractCoordinator.this.wait(rebalanceConfig.retryBackoffMs)");
	// harness.Options.ExactHeartbeatDeadlines turns it off for measurements.
	HeartbeatWakeCadence bool
	// WaitOvershoot is how late each of the heartbeat thread's waits
	// returns: Object.wait(retry.backoff.ms) wakes a little after its
	// timeout (the JVM's and the kernel's timer slack and scheduling), so
	// the grid's step is retry.backoff.ms + WaitOvershoot (hbgrid.go). The
	// harness sets it from the group's workload wait.overshoot.
	WaitOvershoot time.Duration
}

// Send is one request the member asks the harness to send (netclient.Send:
// broker, correlation id unique per member, request, and whether it goes on
// the coordinator connection).
type Send = netclient.Send

// Output collects what one call into the model produced, in order: requests,
// events, connections to open or close (netclient.Output). The harness owns
// the buffer and resets it between calls.
type Output = netclient.Output
