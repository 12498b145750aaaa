// Package client models one Kafka consumer's classic group membership: the
// Java client's AbstractCoordinator, ConsumerCoordinator, Heartbeat and
// HeartbeatThread, as a pure, deterministic state machine with behaviour
// profiles per Kafka release.
//
// # Parts
//
// A Member is held in Kafka's parts, one file each, and each part owns the
// rules that read and write its state and an invariant() (what always holds
// of it between calls, with the Java field or method it comes from):
//
//	| part                     | file                  | Kafka                                                | its own rules                                            |
//	|--------------------------|-----------------------|------------------------------------------------------|----------------------------------------------------------|
//	| coordinatorLookup        | lookup.go             | coordinator, findCoordinatorFuture                   | findDone, backoff, stale futures, checkAndGetCoordinator |
//	| joinFuture               | join.go               | joinFuture, onJoinComplete's progress                | fail                                                     |
//	| appThread                | app.go, lazy.go       | KafkaConsumer.poll's loop (the application thread)   | the poll loop, busy periods, deadlines, lazy poll replay |
//	| heartbeat                | heartbeat.go          | Heartbeat (timers, 0.10 timestamps)                  | every Heartbeat method                                   |
//	| heartbeatThread / Task   | hbthread.go, hbtask.go| HeartbeatThread (0.10.1+), 0.9/0.10 HeartbeatTask    | picked once in NewMember (heartbeater)                   |
//	| autoCommitState          | commit.go             | nextAutoCommitTimer, 0.10 AutoCommitTask, onJoinPrepare's commit | timers, the task, onJoinPrepare's commit progress |
//	| metadataView             | metadata.go           | Metadata, metadataSnapshot, assignmentSnapshot       | refresh, change check, snapshots                         |
//	| netClient                | netclient.go          | NetworkClient, ConsumerNetworkClient (model/netclient) | pending completions, least-loaded node                 |
//	| generation               | state.go              | Generation                                           | reset forms, generationUnchanged, its Heartbeat request  |
//
// The Member itself is AbstractCoordinator and ConsumerCoordinator: the
// rules that read or change more than one part (ensureCoordinatorReady,
// joinGroupIfNeeded, the response handlers, onJoinPrepare/onJoinComplete,
// maybeLeaveGroup, close()), the state transitions (become*, the only
// place the state changes), requestRejoin and the resets, and the public
// API; TestMemberMethodBudget keeps it so. The application thread's methods
// take the Member they call into, as KafkaConsumer holds its coordinator.
// The configuration shared by a Template's members builds the requests
// (template.go). Era switches live in the profile table (profile.go). Every
// entry point ends by checking each part's invariant through one helper
// (assert.go, assertInvariants): a failed check is a violation of the run
// (EvAssertFailed, the member stops), never a silently wrong state.
//
// # Driving a Member
//
// Like etcd raft's Node, a Member never reads a clock, sleeps, starts a
// goroutine or touches a socket. The caller owns time and the network:
//
//	m := client.NewMember(cfg, rng)   // cfg validated (Config.Validate), rng: the member's own stream
//	    // or, for many members of one configuration (one copy of it, not one each):
//	    // t, err := client.NewTemplate(cfg); m := t.NewMember(name, instanceID, rng)
//	m.Start(now, &out)                // the application thread's first poll()
//	for each call below: out.Reset(); call; send out.Sends; record out.Events;
//	    then re-read m.NextAppDeadline() and m.NextHeartbeatDeadline()
//	m.Step(now, broker, corr, resp, &out)  // a response arrived (corr from the Send)
//	m.Disconnected(now, broker, &out)      // the connections to broker were reset
//	m.TickApp(now, &out)                   // at or after NextAppDeadline()
//	m.TickHeartbeat(now, &out)             // at or after NextHeartbeatDeadline()
//	m.SlowPoll(now, d, &out)               // fault: application stuck for d
//	m.Close(now, &out)                     // graceful KafkaConsumer.close(): the member
//	                                       // stops when close() is done (Stopped); keep
//	                                       // ticking it and passing its responses until then
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
//     coordinator monitor, it handles the response at its next wake-up
//     (hbthread.go awake): the end of its wait(retry.backoff.ms), on the
//     grid of hbgrid.go, or of a lookup pass's wait; at once if it is awake
//     at that instant, or without HeartbeatWakeCadence. Then, as the rest of
//     that loop iteration, it checks the coordinator
//     (coordinatorUnknown → checkAndGetCoordinator: a connection in
//     reconnect backoff marks it unknown; hbthread.go networkPolled). Inside
//     its retry.backoff.ms sleep after a lookup pass the check waits for the
//     wake-up, where Java's thread would read the response.
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
// polls the network once per wake-up (AbstractCoordinator.HeartbeatThread.run
// @3.9.0-rc3); so does the model (HeartbeatWakeCadence): a member whose
// application thread is processing reads its heartbeat's response at the
// thread's first wake-up after it arrives, retry.backoff.ms (plus the wait's
// overshoot) after the send. Deviation: a heartbeat-thread tick off that grid
// (a request timeout, HandleTimeouts) reads the queue there too.
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
// kafka-2.x is kafka-2.8 (2.8.1+), kafka-3.x is kafka-3.7 and kafka-4.x is
// kafka-4.4.
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
//	|            | (2.8.1: a reset re-runs onJoinPrepare, KAFKA-12983: a cooperative member reset mid-rebalance reports its partitions lost)                                                                        |
//	| kafka-3.0  | as 2.8, session 45 s, default assignors [range, cooperative-sticky], reset re-runs onJoinPrepare (KAFKA-12983)                                                                                          |
//	| kafka-3.2  | as 3.0 + JoinGroup v9 (skipAssignment), rejoin reason sent (KIP-800), ILLEGAL_GENERATION keeps the member id (KAFKA-13419)                                                                               |
//	| kafka-3.3  | as 3.2 + SyncGroup REBALANCE_IN_PROGRESS resets the generation (KAFKA-13891, 3.3.0–3.3.1 only); heartbeat-thread lookup pacing of KAFKA-13917                                                           |
//	| kafka-3.4  | as 3.3 without KAFKA-13891 + the generation in the subscription (KIP-792)                                                                                                                                |
//	| kafka-3.6  | as 3.4 + retriable join error waits retry.backoff.ms (KAFKA-12639, 3.5)                                                                                                                                 |
//	| kafka-3.7  | as 3.6 + KIP-580 exponential backoff (±20 % jitter from the member's rng) for FindCoordinator and failed heartbeats                                                                                      |
//	| kafka-3.8 … kafka-4.4 | as 3.7: the classic consumer's AbstractCoordinator/ConsumerCoordinator/ConsumerConfig are unchanged for every modelled path (profile.go, laterEras)                                          |
//
// FindCoordinator (all profiles): the application thread's wait after a
// failed lookup is bounded by its poll() timer and starts afresh in every
// poll() call (3.7: retryBackoff.backoff(attempts++) with attempts a local of
// ensureCoordinatorReady); a lookup failure handled by the heartbeat thread
// does not pace the application thread. From 2.8 the completed
// findCoordinatorFuture stays referenced until ensureCoordinatorReady or the
// heartbeat thread clears it, so from 3.3 a heartbeat thread alone sends a
// lookup every 2 x retry.backoff.ms (2.8–3.2 and ≤2.7: every retry.backoff.ms).
//
// Auto-commit (Config.AutoCommit = enable.auto.commit, Config.AutoCommitInterval
// = auto.commit.interval.ms, 5 s when zero; commit.go):
//
//	| profile        | interval commit                              | onJoinPrepare commit                           | UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION       | REBALANCE_IN_PROGRESS  |
//	|----------------|----------------------------------------------|------------------------------------------------|----------------------------------------------|------------------------|
//	| kafka-0.10     | AutoCommitTask, a delayed task run in poll() | sync, unbounded, retry.backoff between retries | rejoin flag only (generation, id kept)       | rejoin flag only       |
//	| kafka-2.3, 2.4 | nextAutoCommitTimer in ConsumerCoordinator.poll | sync, bounded by the rebalance timeout      | reset (id dropped) + rejoin                  | reset + rejoin         |
//	| kafka-2.5      | as 2.3                                       | as 2.3                                         | reset (id dropped) + rejoin                  | rejoin only            |
//	| kafka-2.6–3.0  | as 2.3                                       | as 2.3                                         | as 2.5, unless stale and PREPARING (KAFKA-9823) | rejoin only         |
//	| kafka-3.2+     | as 2.3                                       | async, waited for by returning, join-prepare timer | as 2.6, ILLEGAL_GENERATION keeps the id (KAFKA-13419) | rejoin only |
//
// Every commit-triggered rejoin emits EvRejoinRequested with reason
// "commit-failed". COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR and
// REQUEST_TIMED_OUT mark the coordinator unknown; they, COORDINATOR_LOAD_IN_PROGRESS,
// UNKNOWN_TOPIC_OR_PARTITION (2.x+) and disconnects are retriable (2.x+:
// next interval commit after retry.backoff.ms; 0.10: the task runs again one
// interval after its previous run, failure or not, as in 0.10.0). An async
// commit answered FENCED_INSTANCE_ID stops the member at the next poll()
// (asyncCommitFenced); every other failure is only logged. From 2.x a commit
// is only sent while STABLE (generationIfStable), never with no owned
// partitions (voidSuccess); the OffsetCommit request names the owned
// partitions and is reused while generation and ownership are unchanged.
// Kafka 0.10's poll() ran the delayed tasks in deadline order; in the
// KIP-62 experiment the AutoCommitTask's commit after an eviction is what
// tells a 0.10 member it must rejoin (the HeartbeatTask only sees its local
// session expire).
//
// # Profiles and eras
//
// A profile name is resolved once (lookupBehaviour) to one row of the
// profile table, and every layer reads that row: the consumer's switches,
// its defaults, and its network era (netclient.Era010/23/27/28/37, the
// row's net field). Patch releases whose client differs in one layer are
// rows of their own (kafka-2.6.1: the 2.7 consumer on the 2.6 network client;
// kafka-2.7.2: the 2.8 consumer on the 2.7 network client); the others are
// aliases (kafka-2.3.0, kafka-2.8.1). The network eras: the jittered
// reconnect backoff and setup timeout are capped at their max only from
// 3.7.0 (2.7–3.6 reach 1.2 × max); the setup timeout exists from 2.7 (max
// 127 s in 2.7.x); leastLoadedNode starts at a random offset on every call
// and, from 2.7, prefers the connectable node whose last attempt is oldest.
//
// REBALANCE_IN_PROGRESS on JoinGroup is fatal ("unexpected") before 2.8 and an
// immediate retry from 2.8 (KAFKA-10870). ApplyProfileDefaults fills the
// era's defaults (session 30 s / 10 s / 45 s, request timeout 40 s / 30 s,
// retry.backoff.max.ms 1 s from 3.7, assignors).
//
// # Not modelled (deliberately)
//
//   - Offsets themselves and the application's commitSync/commitAsync: only
//     auto-commit is modelled; a commit's response carries one error for all
//     partitions. Async-commit callbacks run when the response is handled, not
//     at the next poll(). 3.2.x is
//     modelled with 3.3's join-prepare timer, and 3.2+ retries a retriable
//     onJoinPrepare commit after retry.backoff.ms (Java: at the next poll()).
//     With a commit of the 0.10 AutoCommitTask in flight, onJoinComplete's
//     reschedule and the callback's keep one schedule (the earlier); equal
//     deadlines run the HeartbeatTask before the AutoCommitTask. ≤3.1's
//     sync commit is waited for even when the JoinGroup timer of 2.3/2.4's
//     poll(Duration) expires (Java: same, its timer is the rebalance timeout).
//   - Fetching: records are always available for owned partitions; the
//     processing time of one poll()'s records is cfg.PollInterval.
//   - Subscription changes, pattern subscriptions and the
//     cooperative-assignment validation. Metadata changes are modelled only
//     when the scenario has an add-partitions fault (metadata.go): the
//     refresh every metadata.max.age.ms is read from the harness's cluster
//     metadata, not fetched over the network, and only the leader's
//     assignment snapshot reacts to it.
//   - Connections (model/netclient): the least-loaded node is chosen from this
//     member's own connections (Fetch and metadata connections are not
//     modelled); there is no max.in.flight cap and no partially written
//     send; ApiVersions is part of the harness's connection setup and is
//     never lost; requests stuck in a connection the client closes are not
//     retransmitted by an orphaned socket (network-model.md T10, B9).
//   - markCoordinatorUnknown fails in-flight requests at once rather than on
//     the next network poll; a fatal FindCoordinator error seen by the
//     heartbeat thread stops the member at once rather than at the next poll().
//   - The heartbeat thread's wake-up cadence is modelled (the default;
//     Config.Sim.HeartbeatWakeCadence off makes the thread act exactly at
//     each deadline):
//     Java waits retry.backoff.ms (or until notify()) between iterations
//     and acts on a due heartbeat, session or poll timer at the first
//     wake-up at or after its deadline (AbstractCoordinator.HeartbeatThread.run
//     @3.7.0 and @v8.0.0, "wait(rebalanceConfig.retryBackoffMs)").
//     Config.Sim.HeartbeatWakeCadence: a grid of retry.backoff.ms plus
//     Config.Sim.WaitOvershoot (how late each wait returns), restarted at
//     each heartbeat sent and anchored where the thread is enabled
//     (HeartbeatThread.enable @3.9.0-rc3 notifies it: hbthread.go); the
//     other notify() wake-ups are not modelled. harness
//     TestHeartbeatWakeCadenceChangesNoFigure measures it over 20 seeds
//     (small-crash at heartbeat 3 s / session 10 s and at heartbeat
//     100 ms / session 1 s, bug-kafka-13419): identical rebalance,
//     eviction, false-eviction and generation counts and unowned
//     partition-seconds (within 2.1 % before the grid was anchored at
//     enable).
//   - The metadata-refresh wait of ≤3.6 ensureCoordinatorReady (modelled as
//     retry.backoff.ms).
//   - 0.10's wait for in-flight coordinator requests before each JoinGroup
//     (AbstractCoordinator 0.10.0.1 219-224: ensureActiveGroup polls until
//     pending requests to the coordinator complete); the model sends the
//     JoinGroup at once. It matters only with an auto-commit or heartbeat
//     in flight at rejoin time; 0.10's join is blocking anyway.
//   - ≤2.6.0: when the generation was reset (by a late heartbeat error)
//     between the SyncGroup response and onJoinComplete,
//     joinGroupIfNeeded returns false (AbstractCoordinator 2.5.0 435-453)
//     and the rejoin waits for the next poll(); the model rejoins in the
//     same poll() (the 2.6.1+ behaviour). The window is one
//     response-handling pass; no scenario we ship reaches it.
//   - wakeup(), enforceRebalance(), unsubscribe(); close() with a timeout
//     other than the default 30 s, and 4.1's CloseOptions (KIP-1092) other
//     than the default (close.go has the order close() follows); a close()
//     called while the application thread is in a callback or the leader's
//     assignor takes that as finished.
//   - A fatal error is assumed to end the application: no close(), no
//     LeaveGroup.
//   - poll.timeout below 1 ms is raised to 1 ms so a poll(0) loop cannot
//     spin in virtual time.
//   - kafka-0.10 ignores group.instance.id; its UNKNOWN_MEMBER_ID on SyncGroup
//     resets the whole generation (0.10 kept the generation id, which it
//     never sent again before rejoining).
//   - The 0.10.1–2.2 clients (timestamp Heartbeat form) have no profile.
package client
