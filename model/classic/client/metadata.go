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

// topicMetadata is what the leader's assignor runs on: metadata.fetch().
func (m *Member) topicMetadata() []assign.Topic {
	if m.meta == nil {
		return m.cfg.Metadata.Topics
	}
	return m.meta.topics
}

// maybeUpdateMetadata is the metadata refresh (NetworkClient's
// DefaultMetadataUpdater.maybeUpdate every metadata.max.age.ms) followed by
// ConsumerCoordinator.maybeUpdateSubscriptionMetadata (apache/kafka 3.2.0
// ConsumerCoordinator.java 471-483), at the application thread's
// coordinator poll. Deviation: the MetadataRequest is not sent over the
// simulated network; the refresh reads the cluster's metadata at the
// first poll pass at or after the age expires (the first at the process's
// first poll, as KafkaConsumer's bootstrap fetch).
func (m *Member) maybeUpdateMetadata(now protocol.Instant) {
	c := m.cfg.Metadata.Cluster
	if c == nil || (m.meta != nil && now < m.meta.nextRefresh) {
		return
	}
	age := m.cfg.Metadata.MaxAge
	if age <= 0 {
		age = DefaultMetadataMaxAge
	}
	if m.meta == nil {
		m.meta = &metadataView{version: -1}
	}
	m.meta.nextRefresh = now.Add(age)
	if c.Version == m.meta.version {
		return
	}
	m.meta.version = c.Version
	m.meta.topics = slices.Clone(c.Topics)
}

// metadataChanged is ConsumerCoordinator.rejoinNeededOrPending's first
// check (apache/kafka 3.2.0 ConsumerCoordinator.java 853-858): the member
// performed the assignment (assignmentSnapshot set) and the metadata has
// changed since ("cached metadata has changed"), so it requests a rejoin
// unless one is already requested (requestRejoinIfNecessary). The
// snapshot stays until the next assignment replaces it, so a SyncGroup
// success that clears rejoinNeeded meanwhile does not lose the change: the
// next poll asks again. Only the leader checks: a follower's
// assignmentSnapshot is null (onJoinComplete). Deviation: Java evaluates
// this inside every rejoinNeededOrPending call; here once per
// coordinator poll, where Java's poll first reaches it.
func (m *Member) metadataChanged(out *Output) bool {
	if m.meta == nil || m.meta.assignment == nil || slices.Equal(m.meta.assignment, m.meta.topics) {
		return false
	}
	if !m.rejoinNeeded {
		m.requestRejoin(out, RejoinMetadataChanged)
	}
	return true
}

// takeAssignmentSnapshot is onLeaderElected's `isLeader = true` and
// `assignmentSnapshot = metadataSnapshot` (3.2.0 ConsumerCoordinator.java
// 666-689: also when the coordinator says skipAssignment, KIP-814; before
// 3.2, performAssignment 636-650).
func (m *Member) takeAssignmentSnapshot() {
	if m.meta == nil {
		return // no changing metadata, or not refreshed yet (then nothing to compare)
	}
	m.meta.isLeader = true
	m.meta.assignment = slices.Clone(m.meta.topics)
	if m.meta.assignment == nil {
		m.meta.assignment = []assign.Topic{}
	}
}
