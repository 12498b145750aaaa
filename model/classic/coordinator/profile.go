package coordinator

import (
	"fmt"
	"strings"
)

// Profile selects the behaviour of one Kafka broker era.
type Profile string

// features are the broker behaviours that changed across Kafka versions
// (kafka-classic-protocol.md §16). A Profile is resolved to features once, in
// NewBroker, so the hot paths test plain booleans.
type features struct {
	// initialDelay: KIP-134 InitialDelayedJoin (0.11.0).
	initialDelay bool
	// kip394: JoinGroup v4+ from an unknown member gets MEMBER_ID_REQUIRED
	// and a pending member id (2.2.0).
	kip394 bool
	// maxSize: group.max.size / GROUP_MAX_SIZE_REACHED (KIP-389, 2.2.0).
	maxSize bool
	// newMemberTimeout: new members expire after NewMemberJoinTimeoutMs
	// while their first join is parked (KAFKA-7610, 2.2.0). Before, Scala's
	// addMemberAndRebalance arms no heartbeat expiry at all (0.11.0.0
	// GroupCoordinator.scala 634-653): a new member parked in JoinGroup is
	// never expired; its first expiry is armed when the join completes.
	newMemberTimeout bool
	// static: KIP-345 static membership, FENCED_INSTANCE_ID, static members
	// kept at join completion (KAFKA-8220), batch LeaveGroup (2.3.0).
	static bool
	// acceptJoining26: acceptJoiningMember of 2.6.0; before (2.2–2.5) the
	// capacity test is "group over capacity and member not awaiting join, or
	// new member and size >= max".
	acceptJoining26 bool
	// staticRebalanceInCompleting: a static restart in CompletingRebalance
	// triggers a rebalance (KAFKA-9801, 2.6.0); before it is answered like
	// in Stable.
	staticRebalanceInCompleting bool
	// hbInCompleting: Heartbeat in CompletingRebalance answers NONE and
	// reschedules the session (KAFKA-10134, 2.6.1/2.7.0); before,
	// REBALANCE_IN_PROGRESS without reschedule.
	hbInCompleting bool
	// staticStablePersist: a static restart in Stable persists the group and
	// rebalances if the selected protocol would change (2.7.0).
	staticStablePersist bool
	// pendingSync: pending-sync tracking and DelayedSync (KAFKA-12890,
	// 2.8.1/3.0.0).
	pendingSync bool
	// skipAssignment: KIP-814, JoinGroup v9+ static leader restart gets the
	// member list with skipAssignment=true (3.2.0).
	skipAssignment bool
	// updateTimeoutsOnRejoin: a known member's rejoin takes the request's
	// session and rebalance timeouts (KAFKA-14009, 3.3.2/3.4.0:
	// GroupMetadata.updateMember 3.3.2 527-544); before,
	// GroupMetadata.updateMember (2.8.1 521-534, 3.3.1 527-540) keeps the
	// first ones.
	updateTimeoutsOnRejoin bool
	// removeDropsPending: GroupMetadata.remove also drops a KIP-394 pending
	// id (3.0.0, commit 5dae3648abd), so a pending id rejected for
	// group.max.size is gone at once; before it stays until it expires.
	removeDropsPending bool
	// rejectRemovesStatic: a JoinGroup rejected for group.max.size also
	// drops the instance id's static mapping (group.removeStaticMember,
	// 2.3.0–2.7.x GroupCoordinator.handleJoinGroup).
	rejectRemovesStatic bool
	// commitEmptyNeedsMember: an OffsetCommit with generation -1 and a member
	// id to an Empty group goes through validateCurrentMember (→
	// UNKNOWN_MEMBER_ID) (3.0.0–3.2.x, commit 5dae3648abd); before and since
	// KAFKA-14201 (3.3.0: GroupCoordinator.validateOffsetCommit 3.3.0
	// 985-989, and 3.4.0) it is accepted as a simple commit.
	commitEmptyNeedsMember bool

	// javaClassic: classic groups are served by the Java group coordinator
	// (GroupMetadataManager's classic-group code, the default from 4.0,
	// KIP-848; Scala GroupCoordinator removed in 4.1). Where it differs from
	// the Scala coordinator (each mirrored where it happens):
	//   - the initial-rebalance extension counts new members of any
	//     rebalance started from Empty (previousState() == EMPTY), not only
	//     generation 0 (addMemberThenRebalanceOrCompleteJoin);
	//   - a member or pending-member expiry during PreparingRebalance
	//     completes the join at once when every remaining member has joined,
	//     even during the initial delay (removeMemberAndUpdateClassicGroup,
	//     removePendingMemberAndUpdateClassicGroup);
	//   - a JoinGroup rejected for group.max.size does not try to complete
	//     the join (classicGroupJoinToClassicGroup has no final
	//     checkAndComplete);
	//   - SyncGroup in Stable does not restart the session
	//     (classicGroupSyncToClassicGroup);
	//   - SyncGroup while the partition loads is answered
	//     COORDINATOR_LOAD_IN_PROGRESS (the runtime's error), not
	//     REBALANCE_IN_PROGRESS;
	//   - JoinGroup v0–v1 are gone (KIP-896, KAFKA-18269): UNSUPPORTED_VERSION;
	//   - a static member replaced while its first JoinGroup is parked is
	//     no longer new (replaceStaticMember builds a member with isNew
	//     false), so the parked JoinGroup keeps it alive;
	//   - append errors are mapped by appendGroupMetadataErrorToResponseError
	//     (Broker.mapAppendError): REQUEST_TIMED_OUT → COORDINATOR_NOT_AVAILABLE.
	javaClassic bool
	// kafka8653V0RebalanceTimeoutZero: KAFKA-8653, broker 2.3.0 only: a
	// JoinGroup v0 (no rebalance-timeout field) gets the generated schema's
	// default -1 instead of the session timeout, so its DelayedJoin expires
	// at once (apache/kafka PR #7072, fixed in 2.3.1 / 2.4.0).
	kafka8653V0RebalanceTimeoutZero bool
	// kafka9752NewExpiryNotArmed: KAFKA-9752, brokers 2.2.0–2.4.1 (fixed in
	// 2.5.0, apache/kafka PR #8339; backports to 2.2–2.4 never released):
	// onCompleteJoin reschedules a member's heartbeat expiry before it
	// clears isNew, and the pre-fix MemberMetadata.shouldKeepAlive(deadline)
	// of a new member is latestHeartbeat + NewMemberJoinTimeoutMs >
	// deadline, true for a deadline one session timeout away, so
	// tryCompleteElseWatch completes the new DelayedHeartbeat at once and
	// nothing is armed (GroupCoordinator.scala 2.4.1 1104-1106 and 912-922,
	// MemberMetadata.scala 2.4.1 88-99). A member that joined for the first
	// time in that rebalance and never heartbeats (its client died, or a
	// JoinGroup ≤ v3 retry left it behind) is never expired.
	kafka9752NewExpiryNotArmed bool
	// loadingNotOwned: brokers before 2.0.0 check ownership of the group's
	// __consumer_offsets partition before loading, and a partition becomes
	// owned only when its load ends (GroupMetadataManager.scala 1.1.0
	// 496-509), so while the group loads after a failover every group API
	// is answered NOT_COORDINATOR (GroupCoordinator.scala 1.1.0 116-118,
	// 242): the client rediscovers the coordinator again and again instead
	// of retrying. apache/kafka PR #4788 (commit 8662a022c42, 2.0.0)
	// checks loading first (COORDINATOR_LOAD_IN_PROGRESS) and answers a
	// SyncGroup REBALANCE_IN_PROGRESS.
	loadingNotOwned bool
}

// profileSpec is one row of the profile table (doc.go repeats it).
type profileSpec struct {
	name     string
	features features
}

// profileTable lists every profile, oldest first. Aliases ("kafka-2.x",
// "kafka-3.x") are rows of their own so ProfileNames lists them.
var profileTable = func() []profileSpec {
	v010 := features{loadingNotOwned: true}
	v011 := v010
	v011.initialDelay = true
	v22 := v011
	v22.loadingNotOwned = false // apache/kafka PR #4788 (2.0.0)
	v22.kip394, v22.maxSize, v22.newMemberTimeout = true, true, true
	v22.kafka9752NewExpiryNotArmed = true // 2.2.0 (KAFKA-7610) … 2.4.1
	v23 := v22
	v23.static, v23.rejectRemovesStatic = true, true
	v230 := v23
	v230.kafka8653V0RebalanceTimeoutZero = true
	// KAFKA-9801 shipped in 2.5.0 (commit 146811ab296; GroupCoordinator.scala
	// 2.5.0 1032-1037).
	v25 := v23
	v25.staticRebalanceInCompleting = true
	v25.kafka9752NewExpiryNotArmed = false // KAFKA-9752 fixed in 2.5.0
	v26 := v25
	v26.acceptJoining26 = true
	// 2.6.1: KAFKA-10134 (heartbeat in CompletingRebalance) and KAFKA-10284
	// (static restart in Stable persists, commit 535efa4c2cb;
	// GroupCoordinator.scala 2.6.1 1048-1056).
	v261 := v26
	v261.hbInCompleting, v261.staticStablePersist = true, true
	v28 := v261
	v28.rejectRemovesStatic = false // GroupMetadata.remove drops the static mapping itself (2.8.0)
	v281 := v28
	v281.pendingSync = true
	v30 := v281
	v30.removeDropsPending, v30.commitEmptyNeedsMember = true, true
	v32 := v30
	v32.skipAssignment = true
	v33 := v32
	v33.commitEmptyNeedsMember = false // KAFKA-14201 (3.3.0; GroupCoordinator.scala 3.3.0 985-989)
	v34 := v33
	v34.updateTimeoutsOnRejoin = true // KAFKA-14009 (3.3.2, 3.4.0; GroupMetadata.scala 3.3.2 527-544)
	// 4.0: group.coordinator.new.enable defaults to true (GroupCoordinatorConfig
	// v8.0.0 64); 3.8/3.9 keep the Scala coordinator (default false).
	v40 := v34
	v40.javaClassic = true
	return []profileSpec{
		{"kafka-0.10", v010},
		{"kafka-0.11", v011},
		{"kafka-2.2", v22},
		{"kafka-2.3.0", v230}, // KAFKA-8653 (2.3.0 only)
		{"kafka-2.3", v23},
		{"kafka-2.4", v23}, // no broker-side change in 2.4 (KIP-429 is client-side)
		{"kafka-2.5", v25},
		{"kafka-2.6", v26},
		{"kafka-2.6.1", v261},
		{"kafka-2.7", v261},
		{"kafka-2.7.2", v261}, // a client patch (KAFKA-13214); no broker change
		{"kafka-2.8", v28},
		{"kafka-2.8.1", v281},
		{"kafka-2.x", v28}, // = kafka-2.8 (2.8.0): no KAFKA-12890 fix
		{"kafka-3.0", v30},
		{"kafka-3.2", v32},
		{"kafka-3.3", v33},   // 3.3.0–3.3.1: KAFKA-14201 (and the client's KAFKA-13891)
		{"kafka-3.3.2", v34}, // 3.3.2: KAFKA-14009 too; no other group-coordinator change 3.3.2 → 3.4.0
		{"kafka-3.4", v34},
		{"kafka-3.6", v34},
		{"kafka-3.7", v34}, // the Java module is opt-in in 3.7; the Scala coordinator is the default
		{"kafka-3.8", v34}, // no classic-group change in the Scala coordinator 3.6.1 → 3.9.0
		{"kafka-3.9", v34},
		{"kafka-3.x", v34}, // = kafka-3.6 (Scala coordinator, the 3.x default)
		{"kafka-4.0", v40}, // Java GroupMetadataManager classic groups (confluentinc/kafka v8.0.0)
		{"kafka-4.1", v40}, // no classic-group change 4.0 → 4.3 (v8.1.0 … v8.3.0)
		{"kafka-4.2", v40}, // the append linger's default becomes adaptive (Config.AppendLinger; scenario defaults)
		{"kafka-4.3", v40},
		{"kafka-4.4", v40}, // no classic-group change 4.3 → 4.4 (branch 4.4: KAFKA-20662 and KAFKA-20640 touch only the migration)
		{"kafka-4.x", v40}, // = kafka-4.4
	}
}()

// ParseProfile returns the named broker profile. Names are
// case-insensitive; see ProfileNames and doc.go for the table.
func ParseProfile(name string) (Profile, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range profileTable {
		if p.name == n {
			return Profile(p.name), nil
		}
	}
	return "", fmt.Errorf("coordinator: unknown broker profile %q (known: %s)", name,
		strings.Join(ProfileNames(), ", "))
}

// ProfileNames lists every profile name, oldest first.
func ProfileNames() []string {
	names := make([]string, len(profileTable))
	for i, p := range profileTable {
		names[i] = p.name
	}
	return names
}

// features resolves the profile; ok is false for an unknown profile.
func (p Profile) features() (features, bool) {
	for _, s := range profileTable {
		if s.name == string(p) {
			return s.features, true
		}
	}
	return features{}, false
}
