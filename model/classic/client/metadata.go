package client

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// DefaultMetadataMaxAge is metadata.max.age.ms's default (5 minutes in
// every era, CommonClientConfigs).
const DefaultMetadataMaxAge = 5 * time.Minute

// Cluster is the brokers' topic metadata, which the harness changes
// (add-partitions faults, docs/INTERFACE.md): every change raises
// Version. A consumer sees the change at its next metadata refresh.
// Config.Metadata.Cluster nil means the metadata never changes (every scenario
// without add-partitions): no refresh is modelled at all, and
// Config.Metadata.Topics is what every member sees for ever.
type Cluster struct {
	Version int
	Topics  []assign.Topic
}

// metadataView is the consumer's Metadata plus the ConsumerCoordinator's
// snapshots: metadataSnapshot (the topics it last saw), isLeader and
// assignmentSnapshot (the metadata the leader assigned from; nil when it
// did not assign in the last rebalance).
type metadataView struct {
	version     int
	topics      []assign.Topic
	nextRefresh protocol.Instant
	isLeader    bool
	assignment  []assign.Topic
}

// topicMetadata is what the leader's assignor runs on: metadata.fetch()
// (v nil: the configuration's fixed Topics).
func (v *metadataView) topicMetadata(cfg *template) []assign.Topic {
	if v == nil {
		return cfg.Metadata.Topics
	}
	return v.topics
}

// maybeUpdateMetadata is the metadata refresh (NetworkClient's
// DefaultMetadataUpdater.maybeUpdate every metadata.max.age.ms) followed by
// ConsumerCoordinator.maybeUpdateSubscriptionMetadata (apache/kafka 3.2.0
// ConsumerCoordinator.java 471-483), at the application thread's
// coordinator poll. Deviation: the MetadataRequest is not sent over the
// simulated network; the refresh reads the cluster's metadata at the
// first poll pass at or after the age expires (the first at the process's
// first poll, as KafkaConsumer's bootstrap fetch).
//
// It returns the view to keep: v itself, or a new one at the first refresh
// (v nil until then).
func (v *metadataView) maybeUpdateMetadata(now protocol.Instant, cfg *template) *metadataView {
	c := cfg.Metadata.Cluster
	if c == nil || (v != nil && now < v.nextRefresh) {
		return v
	}
	age := cfg.Metadata.MaxAge
	if age <= 0 {
		age = DefaultMetadataMaxAge
	}
	if v == nil {
		v = &metadataView{version: -1}
	}
	v.nextRefresh = now.Add(age)
	if c.Version == v.version {
		return v
	}
	v.version = c.Version
	v.topics = slices.Clone(c.Topics)
	return v
}

// metadataChanged is ConsumerCoordinator.rejoinNeededOrPending's first
// check (apache/kafka 3.2.0 ConsumerCoordinator.java 853-858): the member
// performed the assignment (assignmentSnapshot set) and the metadata has
// changed since ("cached metadata has changed"), so it requests a rejoin
// unless one is already requested (requestRejoinIfNecessary). The
// snapshot stays until the next assignment replaces it, so a SyncGroup
// success that clears rejoinNeeded meanwhile does not lose the change: the
// next poll asks again (coordinatorPoll requests the rejoin). Only the
// leader checks: a follower's assignmentSnapshot is null (onJoinComplete).
// Deviation: Java evaluates this inside every rejoinNeededOrPending call;
// here once per coordinator poll, where Java's poll first reaches it.
func (v *metadataView) metadataChanged() bool {
	return v != nil && v.assignment != nil && !slices.Equal(v.assignment, v.topics)
}

// takeAssignmentSnapshot is onLeaderElected's `isLeader = true` and
// `assignmentSnapshot = metadataSnapshot` (3.2.0 ConsumerCoordinator.java
// 666-689: also when the coordinator says skipAssignment, KIP-814; before
// 3.2, performAssignment 636-650).
func (v *metadataView) takeAssignmentSnapshot() {
	if v == nil {
		return // no changing metadata, or not refreshed yet (then nothing to compare)
	}
	v.isLeader = true
	v.assignment = slices.Clone(v.topics)
	if v.assignment == nil {
		v.assignment = []assign.Topic{}
	}
}

// onJoinPrepare is onJoinPrepare's `isLeader = false`.
func (v *metadataView) onJoinPrepare() {
	if v != nil {
		v.isLeader = false
	}
}

// onJoinComplete is onJoinComplete's `assignmentSnapshot = null` for a
// follower: only the leader watches metadata.
func (v *metadataView) onJoinComplete() {
	if v != nil && !v.isLeader {
		v.assignment = nil
	}
}

// invariant is what holds of the view between calls: the leader holds the
// snapshot it assigned from (ConsumerCoordinator: isLeader and
// assignmentSnapshot are set together in onLeaderElected; the snapshot is
// cleared only for a follower, in onJoinComplete).
func (v *metadataView) invariant() string {
	if v != nil && v.isLeader && v.assignment == nil {
		return "the leader has no assignment snapshot"
	}
	return ""
}
