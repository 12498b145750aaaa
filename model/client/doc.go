// Package client models one Kafka consumer's classic group membership: the
// Java client's AbstractCoordinator, ConsumerCoordinator, Heartbeat and
// HeartbeatThread, flattened into a pure, deterministic state machine with
// behaviour profiles per Kafka release.
//
// # Driving a Member
//
// Like etcd raft's Node, a Member never reads a clock, sleeps, starts a
// goroutine or touches a socket. The caller owns time and the network:
//
//	m := client.NewMember(cfg, rng)   // cfg validated (Config.Validate), rng: the member's own stream
//	m.Start(now, &out)                // the application thread's first poll()
//	for each call below: out.Reset(); call; send out.Sends; record out.Events;
//	    then re-read m.NextAppDeadline() and m.NextHeartbeatDeadline()
//	m.Step(now, broker, corr, resp, &out)  // a response arrived (corr from the Send)
//	m.Disconnected(now, broker, &out)      // the connections to broker were reset
//	m.TickApp(now, &out)                   // at or after NextAppDeadline()
//	m.TickHeartbeat(now, &out)             // at or after NextHeartbeatDeadline()
//	m.SlowPoll(now, d, &out)               // fault: application stuck for d
//	m.Close(now, &out)                     // graceful KafkaConsumer.close()
//
// Every Send carries a correlation id unique to the member; the response to
// it must be passed to Step with that id. Responses whose id is no longer in
// flight (timed out, disconnected) are ignored. Deadlines may lie at or
// before the last now (something became due at once): call the Tick again.
// Ticks are safe to call early (no-ops) or late (everything expired up to now
// is handled, in Java order). A paused process is simply not called; on
// resume, late deadlines and buffered responses are processed as they would
// be when the frozen threads wake. The two threads are separate deadlines so
// that the harness's seeded tie-break decides how they interleave at one
// instant.
//
// # Which thread handles a response
//
// In the Java client, responses are processed by whichever thread polls the
// ConsumerNetworkClient. The model follows one rule:
//
//  1. If the application thread is blocked inside poll() (the poll.timeout
//     wait, or waiting for the coordinator or the join), it handles the
//     response at once and then re-enters ConsumerCoordinator.poll, as the
//     KafkaConsumer.poll loop does after every network event.
//  2. Otherwise, if the heartbeat thread is enabled (COMPLETING_REBALANCE or
//     STABLE from 2.6.1; STABLE only before) and not blocked on the
//     coordinator monitor, it handles the response at once.
//  3. Otherwise the response is queued and handled, in arrival order, when
//     the application thread next polls (or the heartbeat thread is next
//     able to). Disconnects and request timeouts are observed the same way.
//
// Consequences, as in Java: a JoinGroup response (the heartbeat thread is
// disabled in PREPARING_REBALANCE) waits until the application finishes
// processing its current batch; the leader's assignor runs inside the
// synchronized JoinGroup handler, so during cfg.AssignTime the heartbeat
// thread cannot run; a SyncGroup response may be handled by the heartbeat
// thread (the state becomes STABLE there) but onJoinComplete and its
// callbacks always run later on the application thread; the application's
// poll() returns records as soon as the member is STABLE with partitions
// (from 2.5 also while a rebalance is pending, for still-owned partitions).
//
// The Java heartbeat thread wakes every retry.backoff.ms or when notified and
// polls the network once per wake-up; the model fires exactly at each
// deadline and handles responses as they arrive.
//
// # Ownership events
//
// Owned() changes only when a rebalance-listener callback returns (each
// non-empty callback takes cfg.CallbackTime), and each change emits one event:
// EvRevoked (Detail "revoked" or "lost", Partitions = the partitions given up)
// or EvAssigned (Partitions = the full owned set afterwards, Gen). EvAssigned is
// emitted at every onJoinComplete, even when the set is unchanged. A fatal
// error reports the remaining partitions lost (Reason "fatal").
//
// # Profiles
//
// kafka-2.x is kafka-2.8 (2.8.1+) and kafka-3.x is kafka-3.7.
//
//	| profile    | heartbeats            | HB in COMPLETING | JoinGroup v / timeout        | KIP-394 | static | sent-gen check | ILLEGAL_GEN keeps id | coop (KIP-429) | poll() during join       | retriable join error            | backoff       |
//	|------------|-----------------------|------------------|------------------------------|---------|--------|----------------|----------------------|----------------|--------------------------|---------------------------------|---------------|
//	| kafka-0.10 | HeartbeatTask in poll | —                | v0, request.timeout          | no      | no     | no             | no                   | no             | blocks until joined      | sleep retry.backoff             | fixed         |
//	| kafka-2.3  | HeartbeatThread       | no               | v5, rebalance+5s             | yes     | yes    | no             | no                   | no             | blocks (poll timeout)    | sleep retry.backoff             | fixed         |
//	| kafka-2.4  | HeartbeatThread       | no               | v6, rebalance+5s             | yes     | yes    | no             | no                   | yes            | blocks (poll timeout)    | sleep retry.backoff             | fixed         |
//	| kafka-2.5  | HeartbeatThread       | no               | v7, rebalance+5s             | yes     | yes    | no             | no                   | yes            | zero timer, records flow | re-sent at once (KAFKA-12639)   | fixed         |
//	| kafka-2.6  | HeartbeatThread       | no               | v7, max(request, rebal+5s)   | yes     | yes    | yes            | no                   | yes            | zero timer, records flow | re-sent at once                 | fixed         |
//	| kafka-2.7  | HeartbeatThread       | yes (KAFKA-10134)| v7, max(request, rebal+5s)   | yes     | yes    | yes            | no                   | yes            | zero timer, records flow | re-sent at once, member id DROPPED | fixed      |
//	| kafka-2.8  | HeartbeatThread       | yes              | v7, max(request, rebal+5s)   | yes     | yes    | yes            | no                   | yes            | zero timer, records flow | re-sent at once                 | fixed         |
//	| kafka-3.0  | as 2.8, session 45 s, default assignors [range, cooperative-sticky], reset re-runs onJoinPrepare (KAFKA-12983)                                                                                          |
//	| kafka-3.2  | as 3.0 + JoinGroup v9 (skipAssignment), rejoin reason sent (KIP-800), ILLEGAL_GENERATION keeps the member id (KAFKA-13419)                                                                               |
//	| kafka-3.3  | as 3.2 + SyncGroup REBALANCE_IN_PROGRESS resets the generation (KAFKA-13891, 3.3.0–3.3.1 only); heartbeat-thread lookup pacing of KAFKA-13917                                                           |
//	| kafka-3.4  | as 3.3 without KAFKA-13891 + the generation in the subscription (KIP-792)                                                                                                                                |
//	| kafka-3.6  | as 3.4 + retriable join error waits retry.backoff.ms (KAFKA-12639, 3.5)                                                                                                                                 |
//	| kafka-3.7  | as 3.6 + KIP-580 exponential backoff (±20 % jitter from the member's rng) for FindCoordinator and failed heartbeats                                                                                      |
//
// REBALANCE_IN_PROGRESS on JoinGroup is fatal ("unexpected") before 2.8 and an
// immediate retry from 2.8 (KAFKA-10870). ApplyProfileDefaults fills the
// era's defaults (session 30 s / 10 s / 45 s, request timeout 40 s / 30 s,
// retry.backoff.max.ms 1 s from 3.7, assignors).
//
// # Not modelled (deliberately)
//
//   - Offset commits: no auto-commit in onJoinPrepare or on the interval, no
//     commitSync/commitAsync; OffsetCommit responses are ignored.
//   - Fetching: records are always available for owned partitions; the
//     processing time of one poll()'s records is cfg.PollInterval.
//   - Subscription or metadata changes, pattern subscriptions, the leader's
//     metadata snapshot and the cooperative-assignment validation.
//   - The least-loaded node: FindCoordinator goes to cfg.Brokers round-robin.
//   - Reconnect backoff (reconnect.backoff.ms) and connection setup: a
//     coordinator whose connection failed is not "unknown while in backoff";
//     every request is sent at once (no unsent queue, no max.in.flight cap).
//   - markCoordinatorUnknown fails in-flight requests at once rather than on
//     the next network poll; a fatal FindCoordinator error seen by the
//     heartbeat thread stops the member at once rather than at the next poll().
//   - The heartbeat thread's 100 ms wake-up cadence and its notify() wake-ups
//     (deadlines fire exactly), and the metadata-refresh wait of ≤3.6
//     ensureCoordinatorReady (modelled as retry.backoff.ms).
//   - The join-prepare timer and async-commit wait of onJoinPrepare (3.2+).
//   - KafkaConsumer.close()'s wait for pending requests, the callback time in
//     close(), wakeup(), enforceRebalance(), unsubscribe().
//   - A fatal error is assumed to end the application: no close(), no
//     LeaveGroup.
//   - poll.timeout below 1 ms is raised to 1 ms so a poll(0) loop cannot
//     spin in virtual time.
//   - kafka-0.10 ignores group.instance.id; its UNKNOWN_MEMBER_ID on SyncGroup
//     resets the whole generation (0.10 kept the generation id, which it
//     never sent again before rejoining).
//   - The 0.10.1–2.2 clients (timestamp Heartbeat form) have no profile.
package client
