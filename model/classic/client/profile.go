package client

import (
	"fmt"
	"time"

	"github.com/rebalsim/rebalsim/model/netclient"
)

// Profile selects the behaviour of one Kafka client era (see ParseProfile and
// the profile table in doc.go). It stays a string so scenario files and
// traces carry the name the user wrote; the behaviour switches are looked up
// from it once, in NewMember.
type Profile string

// joinTimeoutRule is how sendJoinGroupRequest (template.joinGroupRequest) computes the JoinGroup request
// timeout (§2.1 of kafka-classic-protocol.md).
type joinTimeoutRule uint8

const (
	joinTimeoutRequest         joinTimeoutRule = iota // request.timeout.ms (≤1.1)
	joinTimeoutRebalance                              // rebalanceTimeout + 5 s (2.0–2.5)
	joinTimeoutMaxOfRequestAnd                        // max(request.timeout.ms, rebalanceTimeout + 5 s) (2.6+)
)

// joinRequest is the JoinGroup an era sends: its version (v0 in 0.10 has no
// rebalance timeout; v4+ answers MEMBER_ID_REQUIRED, KIP-394) and how its
// request timeout is computed.
type joinRequest struct {
	version int16
	timeout joinTimeoutRule
	reason  bool // the rejoin reason is sent (3.2, KIP-800)
}

// subscriptionVersion is the ConsumerProtocolSubscription schema version an
// era writes; each version carries everything the previous one did.
type subscriptionVersion uint8

const (
	// subscriptionV0: topics and user data.
	subscriptionV0 subscriptionVersion = iota
	// subscriptionV1 carries the owned partitions; onPartitionsLost exists and
	// the cooperative protocol is possible (2.4, KIP-429).
	subscriptionV1
	// subscriptionV2 carries the generation too (3.4, KIP-792).
	subscriptionV2
)

// ownedInSubscription: the subscription carries owned partitions (v1+).
func (b *behaviour) ownedInSubscription() bool { return b.subscription >= subscriptionV1 }

// lookupPacing is what the HeartbeatThread does when the coordinator is
// unknown (§8.2 step 4).
type lookupPacing uint8

const (
	pacing23 lookupPacing = iota // 2.3–2.7: send if none outstanding, then wait retry.backoff.ms
	pacing28                     // 2.8–3.2: outstanding → forget it and wait; none → send and loop
	pacing33                     // 3.3+ (KAFKA-13917): outstanding → forget it; none → send; then wait
)

// behaviour is the set of switches one profile turns on. Each field names the
// Kafka change that introduced it.
type behaviour struct {
	name string
	// heartbeatTask: 0.9/0.10 HeartbeatTask on the application thread's
	// delayed-task queue (hbtask.go); no HeartbeatThread, no
	// max.poll.interval.ms (KIP-62 came with the thread in 0.10.1).
	heartbeatTask bool
	// coordinator010: the 0.10.0 AbstractCoordinator: coordinatorDead only
	// fails unsent requests (no disconnect of the coordinator connection);
	// coordinatorUnknown holds as soon as the coordinator connection failed,
	// backoff or not; maybeLeaveGroup sends LeaveGroup only with generation > 0.
	coordinator010 bool
	// commit010: the 0.10.0 ConsumerCoordinator's commits: the AutoCommitTask
	// on the delayed-task queue (not nextAutoCommitTimer); OffsetCommit sent
	// whatever the member state (no generationIfStable); onJoinPrepare's
	// synchronous commit unbounded; OffsetCommitResponseHandler's 0.10 errors.
	commit010 bool
	// blockingJoin: poll() does not return until the group is joined
	// (0.10 ensureActiveGroup; also the deprecated poll(long)).
	blockingJoin bool
	// nonBlockingJoin: poll(Duration) joins with a zero timer and returns
	// records of still-owned partitions during a rebalance (2.5, KAFKA-8421).
	nonBlockingJoin bool
	// joinLoopReturnsOnExpiredTimer: a retriable join failure with an expired
	// timer returns instead of re-sending at once (3.5, KAFKA-12639).
	joinLoopReturnsOnExpiredTimer bool
	join                          joinRequest
	// fourStates: UNJOINED/PREPARING/COMPLETING/STABLE; heartbeat thread
	// enabled on JoinGroup success and heartbeating in COMPLETING_REBALANCE
	// (2.6.1/2.7.0, KAFKA-10134).
	fourStates bool
	// sentGenCheck: error responses only reset the generation if it is still
	// the one the request was sent with (2.6, KAFKA-9823).
	sentGenCheck bool
	// retriableJoinResetsGeneration: the KAFKA-10134 side effect: a
	// retriable JoinGroup/SyncGroup failure resets state and generation
	// (member id dropped) (2.6.1–2.7.1, 2.8.0; fixed by KAFKA-13214).
	retriableJoinResetsGeneration bool
	// subscription is the ConsumerProtocolSubscription version the era
	// sends (ConsumerProtocol.serializeSubscription).
	subscription subscriptionVersion
	// illegalGenerationKeepsID: ILLEGAL_GENERATION resets keeping the member
	// id (3.2, KAFKA-13419).
	illegalGenerationKeepsID bool
	// syncRebalanceResetsGeneration: SyncGroup REBALANCE_IN_PROGRESS resets
	// the generation keeping the member id (3.3.0–3.3.1, KAFKA-13891; reverted).
	syncRebalanceResetsGeneration bool
	// joinRebalanceInProgressRetriable: JoinGroup REBALANCE_IN_PROGRESS is
	// retried immediately (2.8, KAFKA-10870); before it was "unexpected" (fatal).
	joinRebalanceInProgressRetriable bool
	// staticMembership: group.instance.id is sent (2.3, KIP-345).
	staticMembership bool
	// exponentialBackoff: KIP-580 backoff for FindCoordinator and heartbeat
	// retries (3.7).
	exponentialBackoff bool
	// resetSetsJoinPrepare: a state/generation reset sets needsJoinPrepare
	// again (KAFKA-12983, 2.8.1 and 3.0.0).
	resetSetsJoinPrepare bool
	// protocolTypeChecked: JoinGroup/SyncGroup responses' protocol type and
	// name are checked (2.5, KIP-559).
	protocolTypeChecked bool
	// commitRebalanceRejoinOnly: OffsetCommit REBALANCE_IN_PROGRESS only
	// requests a rejoin instead of resetting the generation (2.5, KIP-447 era).
	commitRebalanceRejoinOnly bool
	// asyncJoinPrepareCommit: onJoinPrepare's auto-commit is async and waited
	// for by returning (3.2, KAFKA-13310 timer in 3.3); before, a synchronous
	// commit bounded by the rebalance timeout.
	asyncJoinPrepareCommit bool
	// stickyClaimsAllGenerations: the sticky assignors keep an older
	// generation's claim nobody else makes (3.5, KAFKA-14639); before,
	// only the highest generation's claims count.
	stickyClaimsAllGenerations bool
	pacing                     lookupPacing
	defaults                   consumerDefaults
	// net is the era of the profile's NetworkClient (reconnect backoff,
	// setup timeout, leastLoadedNode): chosen by the same row as every
	// switch above, so a profile name is resolved once (lookupBehaviour)
	// and no layer looks at the name again.
	net netclient.Era
}

// consumerDefaults are the ConsumerConfig defaults of an era that differ
// across the profiles (ApplyProfileDefaults).
type consumerDefaults struct {
	session        time.Duration // session.timeout.ms
	requestTimeout time.Duration // request.timeout.ms
	assignors      []string      // partition.assignment.strategy
}

// profileTable lists every profile in release order. Aliases (kafka-2.x,
// kafka-3.x, kafka-4.x) are resolved by profileAliases.
var profileTable = withPatchReleases(withLaterEras([]behaviour{
	{
		name: "kafka-0.10", net: netclient.Era010, heartbeatTask: true, coordinator010: true, commit010: true, blockingJoin: true,
		join: joinRequest{version: 0, timeout: joinTimeoutRequest}, pacing: pacing23,
		defaults: consumerDefaults{session: 30 * time.Second, requestTimeout: 40 * time.Second, assignors: []string{"range"}},
	},
	{
		name: "kafka-2.3", net: netclient.Era23, join: joinRequest{version: 5, timeout: joinTimeoutRebalance},
		staticMembership: true, pacing: pacing23,
		defaults: consumerDefaults{session: 10 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range"}},
	},
	{
		name: "kafka-2.4", net: netclient.Era23, join: joinRequest{version: 6, timeout: joinTimeoutRebalance},
		staticMembership: true, subscription: subscriptionV1, pacing: pacing23,
		defaults: consumerDefaults{session: 10 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range"}},
	},
	{
		name: "kafka-2.5", net: netclient.Era23, join: joinRequest{version: 7, timeout: joinTimeoutRebalance}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, pacing: pacing23,
		defaults: consumerDefaults{session: 10 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range"}},
	},
	{
		name: "kafka-2.6", net: netclient.Era23, join: joinRequest{version: 7, timeout: joinTimeoutMaxOfRequestAnd}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		pacing:   pacing23,
		defaults: consumerDefaults{session: 10 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range"}},
	},
	{
		// 2.6.1–2.6.3, 2.7.0–2.7.1, 2.8.0: KAFKA-10134 with its retriable-reset side effect.
		name: "kafka-2.7", net: netclient.Era27, join: joinRequest{version: 7, timeout: joinTimeoutMaxOfRequestAnd}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, retriableJoinResetsGeneration: true, pacing: pacing23,
		defaults: consumerDefaults{session: 10 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range"}},
	},
	{
		// 2.8.1+: KAFKA-13214 removed the retriable reset; KAFKA-10870.
		name: "kafka-2.8", net: netclient.Era28, join: joinRequest{version: 7, timeout: joinTimeoutMaxOfRequestAnd}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		// KAFKA-12983 (2.8.1): resetStateAndGeneration sets needsJoinPrepare
		// (AbstractCoordinator 2.8.1 971-975).
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true, pacing: pacing28,
		defaults: consumerDefaults{session: 10 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range"}},
	},
	{
		name: "kafka-3.0", net: netclient.Era28, join: joinRequest{version: 7, timeout: joinTimeoutMaxOfRequestAnd}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true, pacing: pacing28,
		defaults: consumerDefaults{session: 45 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range", "cooperative-sticky"}},
	},
	{
		name: "kafka-3.2", net: netclient.Era28, join: joinRequest{version: 9, timeout: joinTimeoutMaxOfRequestAnd, reason: true}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true,
		illegalGenerationKeepsID: true, asyncJoinPrepareCommit: true, pacing: pacing28,
		defaults: consumerDefaults{session: 45 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range", "cooperative-sticky"}},
	},
	{
		// 3.3.0–3.3.1: KAFKA-13891 (SyncGroup REBALANCE_IN_PROGRESS resets the generation).
		name: "kafka-3.3", net: netclient.Era28, join: joinRequest{version: 9, timeout: joinTimeoutMaxOfRequestAnd, reason: true}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV1, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true,
		illegalGenerationKeepsID: true, asyncJoinPrepareCommit: true, syncRebalanceResetsGeneration: true,
		pacing:   pacing33,
		defaults: consumerDefaults{session: 45 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range", "cooperative-sticky"}},
	},
	{
		name: "kafka-3.4", net: netclient.Era28, join: joinRequest{version: 9, timeout: joinTimeoutMaxOfRequestAnd, reason: true}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV2, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true,
		illegalGenerationKeepsID: true, asyncJoinPrepareCommit: true,
		pacing:   pacing33,
		defaults: consumerDefaults{session: 45 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range", "cooperative-sticky"}},
	},
	{
		name: "kafka-3.6", net: netclient.Era28, join: joinRequest{version: 9, timeout: joinTimeoutMaxOfRequestAnd, reason: true}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV2, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true,
		illegalGenerationKeepsID: true, asyncJoinPrepareCommit: true,
		joinLoopReturnsOnExpiredTimer: true, stickyClaimsAllGenerations: true, pacing: pacing33,
		defaults: consumerDefaults{session: 45 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range", "cooperative-sticky"}},
	},
	{
		name: "kafka-3.7", net: netclient.Era37, join: joinRequest{version: 9, timeout: joinTimeoutMaxOfRequestAnd, reason: true}, nonBlockingJoin: true,
		staticMembership: true, subscription: subscriptionV2, protocolTypeChecked: true, commitRebalanceRejoinOnly: true, sentGenCheck: true,
		fourStates: true, joinRebalanceInProgressRetriable: true, resetSetsJoinPrepare: true,
		illegalGenerationKeepsID: true, asyncJoinPrepareCommit: true,
		joinLoopReturnsOnExpiredTimer: true, stickyClaimsAllGenerations: true, exponentialBackoff: true, pacing: pacing33,
		defaults: consumerDefaults{session: 45 * time.Second, requestTimeout: 30 * time.Second, assignors: []string{"range", "cooperative-sticky"}},
	},
}))

// laterEras are the classic consumers (group.protocol=classic, the default
// through 4.3) after 3.7. Their AbstractCoordinator, ConsumerCoordinator,
// Heartbeat and ConsumerConfig defaults are the 3.7 ones for everything the
// model covers (read at apache/kafka 3.8.0 and confluentinc/kafka v7.9.0,
// v8.0.0 … v8.3.0 = Apache 3.9, 4.0 … 4.3): 3.8 moved the poll-timeout
// leave into handlePollTimeoutExpiry; 4.0 changed only offset-fetch error
// handling (KAFKA-17279) and commit locking (KAFKA-19242); 4.1 added
// CloseOptions (KIP-1092; the default keeps static members in the group on
// close). JoinGroup stays v9, session.timeout.ms 45 s, assignors [range,
// cooperative-sticky], retry.backoff.max.ms 1 s. Rack-aware assignment
// (KIP-881, 3.5+) needs client.rack and broker racks, which the model
// does not have.
//
// 4.4 (branch 4.4 of confluentinc/kafka against v8.3.0): AbstractCoordinator
// and ConsumerCoordinator changed only where the model has nothing —
// client.rack metadata comparison (KAFKA-20778), an AuthenticationException
// on the heartbeat thread (KAFKA-20253), bootstrap DNS resolution
// (KAFKA-14648, KAFKA-20939), logging; ConsumerConfig defaults unchanged.
var laterEras = []string{"kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3", "kafka-4.4"}

// withLaterEras appends laterEras to the table, each with the last row's
// (kafka-3.7) switches.
func withLaterEras(t []behaviour) []behaviour {
	last := t[len(t)-1]
	for _, name := range laterEras {
		b := last
		b.name = name
		t = append(t, b)
	}
	return t
}

// patchReleases are the patch releases whose client differs from its
// minor's row in some layer: each is a row of its own, a copy of the row
// like (the consumer behaviour) with the network era net. Adding a patch
// release whose client behaviour or network layer differs is adding a line
// here (one whose every layer equals a row is an alias instead).
var patchReleases = []struct {
	name, like string
	net        netclient.Era
}{
	// 2.6.1–2.6.3: KAFKA-10134 with its retriable-reset side effect (the
	// kafka-2.7 consumer); the network client is 2.6's: KIP-601's setup
	// timeout came in 2.7.0 (no socket.connection.setup.timeout.ms in
	// CommonClientConfigs @2.6.1 … @2.6.3).
	{"kafka-2.6.1", "kafka-2.7", netclient.Era23},
	// 2.7.2: the KAFKA-13214 fix (the kafka-2.8 consumer); the network
	// client is 2.7's: socket.connection.setup.timeout.max.ms 127 s
	// (CommonClientConfigs @2.7.2).
	{"kafka-2.7.2", "kafka-2.8", netclient.Era27},
}

// withPatchReleases inserts the patchReleases rows, each after its like
// row's predecessor in release order (before the row it copies).
func withPatchReleases(t []behaviour) []behaviour {
	for _, p := range patchReleases {
		for i := range t {
			if t[i].name == p.like {
				b := t[i]
				b.name, b.net = p.name, p.net
				t = append(t[:i], append([]behaviour{b}, t[i:]...)...)
				break
			}
		}
	}
	return t
}

// profileAliases maps the coarse era names of INTERFACE.md to a concrete profile.
var profileAliases = []struct{ alias, target string }{
	{"kafka-2.x", "kafka-2.8"},
	{"kafka-3.x", "kafka-3.7"},
	{"kafka-4.x", "kafka-4.4"},
	{"kafka-2.3.0", "kafka-2.3"}, // the 2.3.0 broker's KAFKA-8653 has no client side
	{"kafka-2.8.1", "kafka-2.8"}, // the 2.8.1 broker's KAFKA-12890; the kafka-2.8 consumer is 2.8.1's
	{"kafka-3.3.2", "kafka-3.2"}, // 3.3.2 reverted KAFKA-13891 (the broker side of 3.3.2 is KAFKA-14009)
}

// lookupBehaviour resolves a profile name (or alias) to its row: the one
// place a client profile name is resolved. Every layer of the client (the
// consumer's switches, its defaults, its network era) reads the row it
// returns.
func lookupBehaviour(name string) (*behaviour, bool) {
	for _, a := range profileAliases {
		if a.alias == name {
			name = a.target
			break
		}
	}
	for i := range profileTable {
		if profileTable[i].name == name {
			return &profileTable[i], true
		}
	}
	return nil, false
}

// ParseProfile validates a client profile name: one of ProfileNames().
func ParseProfile(name string) (Profile, error) {
	if _, ok := lookupBehaviour(name); !ok {
		return "", fmt.Errorf("client: unknown profile %q (known: %v)", name, ProfileNames())
	}
	return Profile(name), nil
}

// ProfileNames lists the accepted profile names: the coarse aliases first,
// then every concrete profile in release order.
func ProfileNames() []string {
	names := make([]string, 0, len(profileAliases)+len(profileTable))
	names = append(names, "kafka-0.10")
	for _, a := range profileAliases {
		names = append(names, a.alias)
	}
	for i := range profileTable {
		if profileTable[i].name != "kafka-0.10" {
			names = append(names, profileTable[i].name)
		}
	}
	return names
}

// ApplyProfileDefaults fills the zero-valued Kafka properties of cfg with the
// defaults of cfg.Profile (ConsumerConfig of that era, §2.1). Workload fields
// are left alone. It returns an error for an unknown profile.
func ApplyProfileDefaults(cfg *Config) error {
	b, ok := lookupBehaviour(string(cfg.Profile))
	if !ok {
		return fmt.Errorf("client: unknown profile %q", cfg.Profile)
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = b.defaults.session
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 3 * time.Second
	}
	if cfg.MaxPollInterval == 0 && !b.heartbeatTask {
		cfg.MaxPollInterval = 300 * time.Second
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	if cfg.RetryBackoffMax == 0 {
		if b.exponentialBackoff {
			cfg.RetryBackoffMax = time.Second
		} else {
			cfg.RetryBackoffMax = cfg.RetryBackoff
		}
	}
	if cfg.AutoCommitInterval == 0 {
		cfg.AutoCommitInterval = DefaultAutoCommitInterval
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = b.defaults.requestTimeout
	}
	if len(cfg.Assignors) == 0 {
		cfg.Assignors = append([]string(nil), b.defaults.assignors...)
	}
	applyNetDefaults(cfg, b)
	return nil
}
