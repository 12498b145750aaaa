// Package coordinator models one Kafka broker's classic group coordinator
// (the Scala kafka.coordinator.group.GroupCoordinator, with the parts of
// GroupMetadataManager it needs) as a pure, deterministic state machine.
//
// # Driving it
//
// A Broker hosts any number of groups. The harness calls
//
//   - Handle(now, conn, corr, req, out) for each of the six requests
//     (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
//     OffsetCommit). Immediate answers, and the answers to parked
//     JoinGroup/SyncGroup requests that this request completes, are
//     appended to out.Replies as Reply{Conn, Corr, Resp}. Timers due
//     strictly before now fire first.
//   - Tick(now, out) at NextDeadline() (safe to call early): delayed join,
//     InitialDelayedJoin, DelayedSync, per-member heartbeat expiry, KIP-394
//     pending-member expiry, load completion, group-record append
//     completion.
//   - Elect / Resign for coordinator failover, SetCoordinator for the
//     metadata FindCoordinator answers from.
//
// Group-record writes appear in out.Persist when their append completes
// successfully (the harness hands the latest to the next coordinator's
// Elect); trace events in out.Events (Node = Config.Name, Group = group
// id). Responses in Replies are read-only (the Heartbeat answers are shared
// to keep the heartbeat path allocation-free).
//
// # Profiles
//
// Behaviour that changed across Kafka versions (kafka-classic-protocol.md
// §16) is selected by Config.Profile:
//
//	| Profile     | KIP-134 initial delay | KIP-394 MEMBER_ID_REQUIRED, KIP-389 max size, 5-min new-member timeout | KIP-345 static | acceptJoiningMember 2.6, KAFKA-9801 | KAFKA-10134 heartbeat in CompletingRebalance | static restart persists (2.7) | KAFKA-12890 pending sync | KIP-814 skipAssignment |
//	|-------------|---|---|---|---|---|---|---|---|
//	| kafka-0.10  |   |   |   |   |   |   |   |   |
//	| kafka-0.11  | x |   |   |   |   |   |   |   |
//	| kafka-2.2   | x | x |   |   |   |   |   |   |
//	| kafka-2.3   | x | x | x |   |   |   |   |   |
//	| kafka-2.4   | = kafka-2.3 (no broker-side change; KIP-429 is client-side) |
//	| kafka-2.5   | x | x | x |   |   |   |   |   |
//	| kafka-2.6   | x | x | x | x |   |   |   |   |
//	| kafka-2.6.1 | x | x | x | x | x |   |   |   |
//	| kafka-2.7   | x | x | x | x | x | x |   |   |
//	| kafka-2.8   | x | x | x | x | x | x |   |   |
//	| kafka-2.x   | = kafka-2.8 (2.8.0: the KAFKA-12890 bug is present) |
//	| kafka-2.8.1 | x | x | x | x | x | x | x |   |
//	| kafka-3.0   | x | x | x | x | x | x | x |   |
//	| kafka-3.2   | x | x | x | x | x | x | x | x |
//	| kafka-3.6   | x | x | x | x | x | x | x | x |
//	| kafka-3.7   | = kafka-3.6 (the Java module stays opt-in) |
//	| kafka-3.x   | = kafka-3.6 (the Scala coordinator, default for all 3.x) |
//
// kafka-0.10 models the 0.10.1 broker: the Empty state exists, no initial
// delay, new members expire after their session timeout. In every profile
// a JoinGroup v0 uses the session timeout as the rebalance timeout.
//
// # Group-record appends
//
// GroupMetadataManager.storeGroup (an acks=all append to
// __consumer_offsets) is made by the leader's SyncGroup in
// CompletingRebalance, by a static member's restart in Stable (2.7+
// profiles) and when a join completes with no member (the Empty record).
// Config.AppendLatency, AppendBytesPerSecond (size of the record over a
// bandwidth), AppendTimeout (offsets.commit.timeout.ms) and
// AppendErrorProbability/AppendError, drawn from Config.Rand, set when and
// how an append completes; all zero: it completes synchronously and always
// succeeds. While an append is outstanding the group is left as Kafka
// leaves it: parked SyncGroups stay parked, a heartbeat still counts, and
// whatever moves the group on (a join, a leave, an expiry, DelayedSync)
// answers them. On completion the SyncGroup callback acts only if the group
// is still CompletingRebalance in the same generation (→ Stable, or on an
// error the mapped error and a rebalance with reason "append-error"); the
// static callback answers the restart's JoinGroup (or reverts the
// replacement and answers the mapped error); the Empty record is
// fire-and-forget. Resign drops outstanding appends, so a failover loads the
// last completed record. See append.go.
//
// # Deterministic rules replacing Kafka's hash-map order
//
//   - Leader after the leader leaves: the earliest-joined remaining member
//     (Kafka: members.keys.headOption).
//   - Leader when the leader did not rejoin: the earliest-joined member
//     awaiting join (Kafka: members.find).
//   - Protocol vote tie: the tied candidate that comes first in the
//     earliest-joined member's preference list (Kafka: maxBy over groupBy).
//   - Member ids: "<client.id or group.instance.id>-<broker id>-<sequence>"
//     (Kafka: a UUID suffix); unique per broker, so unique within a group
//     across failovers.
//   - Timers due at the same instant fire in the order they were armed.
//
// # Trace attribution
//
// EvRebalanceStart.Reason is the trigger: "join" (a new member, including
// a static restart that must rebalance), "metadata" (a known member
// rejoining with changed metadata, or the leader rejoining), "leave",
// "session-expired", "sync-timeout" (DelayedSync), "coordinator-failover"
// (a freshly loaded group over group.max.size, or a member-driven
// rebalance of a group loaded by a failover before all its members
// resynchronised), "append-error" (the leader's SyncGroup append failed,
// only with Config.AppendErrorProbability or AppendTimeout set).
// "rebalance-timeout" and "other" are never produced:
// in Kafka a rebalance timeout completes a join, it does not start one.
//
// # Not modelled (deliberately)
//
//   - Group-record appends are not a shared log: each append's latency is
//     drawn independently (plus size/bandwidth), only ordered behind the
//     group's earlier outstanding appends; no batching with offset commits
//     of other groups, no ISR dynamics. A timed-out append is never
//     persisted (in Kafka it may still commit later). Offset-commit appends
//     are not modelled at all (see Offsets).
//   - Offsets: OffsetCommit only has its membership effects (validation,
//     session reset); nothing is stored; no OffsetFetch, offset expiry,
//     group metadata expiry of Empty groups, DeleteGroups, DescribeGroups,
//     ListGroups.
//   - __consumer_offsets partitioning: each group has its own partition, so
//     a failover moves one group (Kafka: groups sharing abs(hash) % 50
//     move together).
//   - The coordinator is always started (no COORDINATOR_NOT_AVAILABLE from
//     isActive); FindCoordinator is answered from SetCoordinator metadata.
//   - Connections: the broker never sees a closed connection; parked
//     requests stay parked (Kafka mutes the socket).
//   - The Java group-coordinator module (3.6+ opt-in, §15), transactional
//     offset commits, KIP-848 consumer groups, authorization, request
//     quotas and throttling, JoinGroup v0–v9 wire differences other than
//     the rebalance timeout, KIP-394 and KIP-814.
//   - Known bug variants beyond the profile switches (KAFKA-9752 dangling
//     member, KAFKA-14422 serialization failure, KAFKA-8653 rebalance
//     timeout 0) — to be added as profile toggles when a scenario needs them.
package coordinator
