package coordinator

import (
	"errors"
	"fmt"
	"time"
)

// Profile names a Kafka release whose consumer-group coordinator the model
// follows: kafka-4.0 … kafka-4.4 and the patch profiles (ProfileNames).
type Profile string

// behaviour is what changed across releases (kafka-consumer-protocol.md
// version timeline); each switch names its change.
type behaviour struct {
	name string
	// unrevokedEpochPlusOne: an UNREVOKED_PARTITIONS member that revoked
	// everything is reconciled at memberEpoch+1 (3.8–4.1; KAFKA-19974 fixed
	// it in 4.2).
	unrevokedEpochPlusOne bool
	// ownRevocationNotUnreleased: a partition the member itself is revoking
	// does not count as unreleased for it (4.2, KAFKA-19449).
	ownRevocationNotUnreleased bool
	// epochZeroAccepted: a heartbeat with epoch 0 from an existing member is
	// accepted without epoch validation (4.2 backport and 4.3, KAFKA-19233);
	// before, it was fenced like any smaller epoch.
	epochZeroAccepted bool
	// epochStartsAtOne: a new group starts at epoch 1 (4.3, KAFKA-20268).
	epochStartsAtOne bool
	// batching: group.consumer.assignment.interval.ms gates target
	// computations (4.3, KIP-1263).
	batching bool
	// staticDowngradeRebalances: a downgrade by a classic static member
	// replacing the last consumer-protocol one rebalances when the joiner
	// changed its subscription (KAFKA-19546: 4.0.2, 4.1.1, 4.2.0).
	staticDowngradeRebalances bool
	// staticRejoinWhenFull: a static member whose instance id is in the
	// group passes the group.consumer.max.size check
	// (throwIfConsumerGroupIsFull; KAFKA-20601: 4.4, the 4.3 branch after
	// 4.3.1). Before, a restarted static member (a new member id) is
	// rejected GROUP_MAX_SIZE_REACHED by a full group.
	staticRejoinWhenFull bool
}

// profiles: the minors' first releases, and the patch releases that got
// backports (scenario's consumerPatches picks them from a version string;
// the Bump-version commits of confluentinc/kafka's 4.0, 4.1 and 4.3
// branches date each fix).
var profiles = []behaviour{
	{name: "kafka-4.0", unrevokedEpochPlusOne: true},
	{name: "kafka-4.0.2", unrevokedEpochPlusOne: true, ownRevocationNotUnreleased: true, staticDowngradeRebalances: true},
	{name: "kafka-4.1", unrevokedEpochPlusOne: true},
	{name: "kafka-4.1.1", unrevokedEpochPlusOne: true, staticDowngradeRebalances: true},
	{name: "kafka-4.1.2", unrevokedEpochPlusOne: true, ownRevocationNotUnreleased: true, staticDowngradeRebalances: true},
	{name: "kafka-4.2", ownRevocationNotUnreleased: true, epochZeroAccepted: true, staticDowngradeRebalances: true},
	{name: "kafka-4.3", ownRevocationNotUnreleased: true, epochZeroAccepted: true, epochStartsAtOne: true, batching: true, staticDowngradeRebalances: true},
	{name: "kafka-4.3.2", ownRevocationNotUnreleased: true, epochZeroAccepted: true, epochStartsAtOne: true, batching: true, staticDowngradeRebalances: true, staticRejoinWhenFull: true},
	{name: "kafka-4.4", ownRevocationNotUnreleased: true, epochZeroAccepted: true, epochStartsAtOne: true, batching: true, staticDowngradeRebalances: true, staticRejoinWhenFull: true},
}

// ProfileNames lists the profiles in release order.
func ProfileNames() []string {
	out := make([]string, len(profiles))
	for i := range profiles {
		out[i] = profiles[i].name
	}
	return out
}

func lookup(p Profile) (*behaviour, error) {
	for i := range profiles {
		if profiles[i].name == string(p) {
			return &profiles[i], nil
		}
	}
	return nil, fmt.Errorf("consumer: unknown profile %q (known: %v)", p, ProfileNames())
}

// Broker defaults (GroupCoordinatorConfig@4.3, kafka-consumer-protocol.md §1.1).
const (
	DefaultSessionTimeout     = 45 * time.Second // group.consumer.session.timeout.ms
	DefaultHeartbeatInterval  = 5 * time.Second  // group.consumer.heartbeat.interval.ms
	DefaultAssignmentInterval = time.Second      // group.consumer.assignment.interval.ms (4.3)
)

var errFenced = errors.New("FENCED_MEMBER_EPOCH")
