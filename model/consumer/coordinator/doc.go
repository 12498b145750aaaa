// Package consumer is the broker side of the consumer group protocol
// (KIP-848, group.protocol=consumer): consumer groups as the Java group
// coordinator's GroupMetadataManager serves them, beside the classic
// coordinator of package coordinator. It is a pure state machine like the
// classic one: the caller hands it ConsumerGroupHeartbeat requests and the
// current time, and arms a timer at NextDeadline.
//
// What it mirrors (kafka-consumer-protocol.md, Kafka 4.0–4.3 sources):
//
//   - GroupMetadataManager.consumerGroupHeartbeat (§2.4): request checks,
//     group creation, member lookup and epoch validation (§2.11), the group
//     epoch bump on a subscription change or a member's removal (§2.5), the
//     target assignment recomputed when the group epoch is ahead of the
//     assignment epoch (§2.6, with 4.3's assignment batching), the
//     reconciliation of the member (CurrentAssignmentBuilder, §2.7), the
//     session and rebalance (revocation) timers (§2.9), leave with epoch −1
//     and the static temporary leave −2 (§2.10), the response (§2.8).
//   - Server-side assignors (§2.6, assignor.go, uniform_hetero.go):
//     uniform (UniformAssignor.assign: UniformHomogeneousAssignmentBuilder
//     when every member subscribes to the same topics, else
//     UniformHeterogeneousAssignmentBuilder — balanced and sticky, each
//     member given partitions of its own topics only) and range (each
//     topic's co-partitioned ranges over its own subscribers, static
//     members first by instance id, then dynamic ones by member id:
//     RangeAssignor.assignHeterogeneousGroup and sortMemberIds). Same in
//     4.0–4.3 (v8.0.0 and v8.3.0 differ in no assignment).
//   - Topic metadata changes (add-partitions): AddPartitions requests a
//     metadata refresh of the subscribed groups (onNewMetadataImage); the
//     next heartbeat recomputes the subscription metadata and bumps the
//     group epoch if it changed (updateSubscriptionMetadata; 4.1+ keeps a
//     hash of it, with the same effect here); a loaded group refreshes at
//     its first heartbeat.
//   - The online migration (§4, migration.go): the upgrade of a classic
//     group (validateOnlineUpgrade, convertToConsumerGroup), classic
//     members inside a consumer group (classicGroupJoinToConsumerGroup,
//     classicGroupSyncToConsumerGroup, classicGroupHeartbeatToConsumerGroup,
//     classicGroupLeaveToConsumerGroup, their join and sync timers) and the
//     downgrade (validateOnlineDowngradeWithFencedMembers,
//     convertToClassicGroup), under group.consumer.migration.policy.
//
// Eras (Profile): kafka-4.0 … kafka-4.4 and the patch releases with
// backports (kafka-4.0.2, kafka-4.1.1, kafka-4.1.2, kafka-4.3.2); behaviour
// that changed between them is a switch in behaviours, with the JIRA that
// changed it. Group-level configs (Config.Groups, Kafka's GroupConfig)
// override the session timeout, heartbeat interval and assignment interval
// per group. Not modelled from 4.4: KAFKA-20434 (a static member rejoining
// with another assignor bumps the group epoch), KAFKA-20442 (the
// assignment epoch follows the group epoch when the last member leaves).
//
// The runtime's costs (runtime.go, Config.Costs, 0 by default): the
// shard's event loop busy with each target computation (the assignor runs
// inside the heartbeat), so later heartbeats of the shard queue behind it,
// and a heartbeat answered when its records are committed
// (CoordinatorRuntime's deferred write events), never before an earlier
// write's commit; the first target computation and the first write of a
// fresh coordinator have costs of their own (a cold JVM).
//
// Not modelled (yet): regex subscriptions (subscriptions are fixed topic
// names), topic creation and deletion (only partition counts grow),
// rack-aware assignment, 4.3.1's policy check on classic joins
// (migration.go), the append latency of the group records on Unload and
// Load (they move a group between coordinators as written, load.go), the
// costs of classic members' requests in a migrated group and of the
// timers' writes. Deterministic deviations: Java iterates
// members in hash-map order where it assigns or ties; here members are
// visited in the order they joined; the heterogeneous uniform builder's
// last topic tie-break is the topic name, not the topic id (a Uuid).
package coordinator
