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
//	| Profile     | KIP-134 | KIP-394, KIP-389, new-member timeout | KIP-345 | KAFKA-9801 | acceptJoiningMember | KAFKA-10134, KAFKA-10284 | KAFKA-12890 | pending id dropped on reject | KIP-814 | KAFKA-14009 | manual commit to Empty | Java classic |
//	|-------------|---|---|---|---|---|---|---|---|---|---|---|---|
//	| kafka-0.10  |   |   |   |   |   |   |   |   |   |   | ok  |   |
//	| kafka-0.11  | x |   |   |   |   |   |   |   |   |   | ok  |   |
//	| (0.10–0.11) | before 2.0.0 (PR #4788): a loading partition is not owned, every group API answers NOT_COORDINATOR while it loads |
//	| kafka-2.2   | x | x |   |   |   |   |   |   |   |   | ok  |   |
//	| kafka-2.3.0 | = kafka-2.3, plus KAFKA-8653: JoinGroup v0 rebalance timeout -1 (0), not the session timeout |
//	| kafka-2.3   | x | x | x |   |   |   |   |   |   |   | ok  |   |
//	| kafka-2.4   | = kafka-2.3 (no broker-side change; KIP-429 is client-side) |
//	| (2.2–2.4)   | KAFKA-9752: a member new in a rebalance gets no heartbeat expiry when it completes (fixed in 2.5.0) |
//	| kafka-2.5   | x | x | x | x |   |   |   |   |   |   | ok  |   |
//	| kafka-2.6   | x | x | x | x | x |   |   |   |   |   | ok  |   |
//	| kafka-2.6.1 | x | x | x | x | x | x |   |   |   |   | ok  |   |
//	| kafka-2.7   | = kafka-2.6.1 |
//	| kafka-2.8   | = kafka-2.6.1, GroupMetadata.remove drops the static mapping itself |
//	| kafka-2.x   | = kafka-2.8 (2.8.0: the KAFKA-12890 bug is present) |
//	| kafka-2.8.1 | x | x | x | x | x | x | x |   |   |   | ok  |   |
//	| kafka-3.0   | x | x | x | x | x | x | x | x |   |   | UNKNOWN_MEMBER_ID |   |
//	| kafka-3.2   | x | x | x | x | x | x | x | x | x |   | UNKNOWN_MEMBER_ID |   |
//	| kafka-3.3   | x | x | x | x | x | x | x | x | x |   | ok (KAFKA-14201, 3.3.0) |   |
//	| kafka-3.3.2 | = kafka-3.4 (KAFKA-14009 is in 3.3.2) |
//	| kafka-3.4   | x | x | x | x | x | x | x | x | x | x | ok (KAFKA-14201) |   |
//	| kafka-3.6 … kafka-3.9, kafka-3.x | = kafka-3.4 (the Scala coordinator; the Java module stays opt-in) |
//	| kafka-4.0 … kafka-4.4, kafka-4.x | as kafka-3.4 + the Java classic-group coordinator (features.javaClassic) |
//
// kafka-0.10 models the 0.10.1 broker: the Empty state exists, no initial
// delay, and (as through 2.1) a new member parked in its first JoinGroup is
// never expired: addMemberAndRebalance arms no heartbeat (0.11.0.0
// GroupCoordinator.scala 634-653); its first expiry is armed when the join
// completes. In every profile a JoinGroup v0 uses the session timeout as the
// rebalance timeout.
//
// The 4.x profiles follow GroupMetadataManager's classic-group code
// (confluentinc/kafka v8.0.0 … v8.3.0 = Apache 4.0 … 4.3) where it differs
// from Scala; profile.go (javaClassic) lists each difference and the code
// that mirrors it.
//
// # Group-record appends
//
// GroupMetadataManager.storeGroup (an acks=all append to
// __consumer_offsets) is made by the leader's SyncGroup in
// CompletingRebalance, by a static member's restart in Stable (2.6.1+
// profiles, KAFKA-10284) and when a join completes with no member (the Empty record).
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
// The Java coordinator (4.x) batches writes: with Config.AppendLinger
// (group.coordinator.append.linger.ms) a write opens a batch flushed one
// linger later; the group-record append starts at the flush, a successful
// OffsetCommit is answered then, and a Heartbeat, LeaveGroup or failed
// OffsetCommit that arrives while a batch is open waits for it. See
// linger.go.
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
//   - The Java coordinator's runtime (its event loop, the empty-group
//     record it appends when a JoinGroup creates a group, and that append's
//     error reply), OffsetCommit v9's GROUP_ID_NOT_FOUND for an unknown
//     group (the client's OffsetCommit version is not modelled), classic
//     to consumer group conversion (KIP-848 online migration); transactional
//     offset commits, KIP-848 consumer groups, authorization, request
//     quotas and throttling, JoinGroup v0–v9 wire differences other than
//     the rebalance timeout, KIP-394 and KIP-814.
//   - Known bug variants beyond the profile switches (KAFKA-14422
//     serialization failure) — to be added as profile toggles when a
//     scenario needs them (KAFKA-8653 and KAFKA-9752 are profile toggles).
package coordinator
