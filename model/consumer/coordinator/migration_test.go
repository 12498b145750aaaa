package coordinator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Ports of GroupMetadataManagerTest's migration cases (Apache Kafka 4.0.0
// = confluentinc/kafka tag v8.0.0, group-coordinator/src/test/java/org/
// apache/kafka/coordinator/group/GroupMetadataManagerTest.java); each names
// the Java test. The Java tests' MockPartitionAssignor is replaced by the
// uniform assignor, so targets are checked for what any assignor must give
// (disjoint, complete), not for the mock's prepared partitions.
// (The Java test names ServerAssignor "range"; here the default uniform
// runs, which like the mock gives each member one partition.)

func migrationCoordinator(t *testing.T, policy string) *Coordinator {
	t.Helper()
	c, err := New(Config{Name: "broker-0", Profile: "kafka-4.0", MigrationPolicy: policy,
		Topics: []assign.Topic{{Name: "bar", Partitions: 3}, {Name: "foo", Partitions: 3}}})
	require.NoError(t, err)
	return c
}

// rangeProtocol is a JoinGroup protocol "range" subscribing to topics and
// owning owned.
func rangeProtocol(owned []protocol.TopicPartition, topics ...string) []protocol.GroupProtocol {
	return []protocol.GroupProtocol{{Name: "range", Metadata: protocol.Subscription{Topics: topics, OwnedPartitions: owned}}}
}

func stableClassicGroup(gen int32, members ...ClassicMember) *ClassicGroup {
	return &ClassicGroup{ID: "group-id", Generation: gen, ProtocolType: "consumer", ProtocolName: "range", Members: members}
}

// testConsumerGroupHeartbeatWithStableClassicGroup: a new consumer-protocol
// member joins a stable classic group; the classic member becomes a STABLE
// member at the classic generation keeping its partitions and its classic
// session timeout; the joiner bumps the epoch, gets a target and waits
// (UNRELEASED_PARTITIONS) for partitions the classic member still owns.
func TestUpgradeFromStableClassicGroup(t *testing.T) {
	c := migrationCoordinator(t, PolicyUpgrade)
	c.cfg.Topics = []assign.Topic{{Name: "bar", Partitions: 1}, {Name: "foo", Partitions: 1}} // the test's metadata image
	now := protocol.Instant(time.Second)
	cg := stableClassicGroup(0, ClassicMember{ID: "member-id-1", SessionTimeout: 5 * time.Second, RebalanceTimeout: 10 * time.Second,
		Protocols:  rangeProtocol(cat(tps("foo", 0), tps("bar", 0)), "foo", "bar"),
		Assignment: protocol.Assignment{Partitions: cat(tps("foo", 0), tps("bar", 0))}})
	code, why := c.ValidateUpgrade(cg)
	require.Equal(t, protocol.None, code, why)
	var out Output
	c.Upgrade(now, cg, &out)
	c.Heartbeat(now, &protocol.ConsumerGroupHeartbeatRequest{GroupID: "group-id", MemberID: "member-id-2", MemberEpoch: 0,
		RebalanceTimeoutMs: 5000, SubscribedTopics: []string{"foo", "bar"}, OwnedSent: true}, &out)
	require.Equal(t, protocol.None, out.Resp.Error)
	g := c.Group("group-id")
	assert.Equal(t, int32(1), g.Epoch, "the joiner's subscription bumps the epoch set to the generation")
	m1, m2 := g.Member("member-id-1"), g.Member("member-id-2")
	require.NotNil(t, m1)
	assert.True(t, m1.Classic())
	assert.Equal(t, Stable, m1.State())
	assert.Equal(t, int32(0), m1.Epoch())
	assert.Equal(t, cat(tps("bar", 0), tps("foo", 0)), m1.Assigned())
	assert.Equal(t, []string{"bar", "foo"}, m1.Topics)
	assert.Equal(t, 10*time.Second, m1.RebalanceTimeout)
	assert.False(t, m2.Classic())
	assert.Equal(t, UnreleasedPartitions, m2.State())
	assert.Equal(t, int32(1), m2.Epoch())
	assert.Empty(t, m2.Assigned())
	// context.assertSessionTimeout: the classic one, and the group's 45 s.
	assert.Equal(t, now.Add(5*time.Second), m1.sessionDeadline)
	assert.Equal(t, now.Add(45*time.Second), m2.sessionDeadline)
	assert.Len(t, m1.target, 1)
	assert.Len(t, m2.target, 1)
	assert.Empty(t, intersect(m1.target, m2.target))
}

func intersect(a, b []protocol.TopicPartition) []protocol.TopicPartition {
	var out []protocol.TopicPartition
	for _, p := range a {
		if contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

// The conditions of validateOnlineUpgrade and fromClassicGroup:
// testConsumerGroupHeartbeatWithNonEmptyClassicGroup (no consumer embedded
// protocol), testConsumerGroupHeartbeatWithCustomAssignorClassicGroup
// (assignment userData), the policy (isUpgradeEnabled) and
// group.consumer.max.size — each refuses with GROUP_ID_NOT_FOUND.
func TestValidateUpgrade(t *testing.T) {
	member := func(id, userData string) ClassicMember {
		return ClassicMember{ID: id, SessionTimeout: 5 * time.Second, Protocols: rangeProtocol(nil, "foo"),
			Assignment: protocol.Assignment{Partitions: tps("foo", 0), UserData: userData}}
	}
	cases := []struct {
		name, policy string
		maxSize      int
		g            *ClassicGroup
		ok           bool
	}{
		{"bidirectional", PolicyBidirectional, 0, stableClassicGroup(3, member("a", "")), true},
		{"upgrade", PolicyUpgrade, 0, stableClassicGroup(3, member("a", "")), true},
		{"downgrade only", PolicyDowngrade, 0, stableClassicGroup(3, member("a", "")), false},
		{"disabled", PolicyDisabled, 0, stableClassicGroup(3, member("a", "")), false},
		{"testConsumerGroupHeartbeatWithNonEmptyClassicGroup: no protocol", PolicyBidirectional, 0, &ClassicGroup{ID: "group-id"}, false},
		{"connect protocol type", PolicyBidirectional, 0, &ClassicGroup{ID: "group-id", ProtocolType: "connect", ProtocolName: "sessioned", Members: []ClassicMember{member("a", "")}}, false},
		{"testConsumerGroupHeartbeatWithCustomAssignorClassicGroup: userData", PolicyBidirectional, 0, stableClassicGroup(3, member("a", ""), member("b", "custom")), false},
		{"over group.consumer.max.size", PolicyBidirectional, 1, stableClassicGroup(3, member("a", ""), member("b", "")), false},
		{"at group.consumer.max.size", PolicyBidirectional, 2, stableClassicGroup(3, member("a", ""), member("b", "")), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := migrationCoordinator(t, tc.policy)
			c.cfg.MaxSize = tc.maxSize
			code, why := c.ValidateUpgrade(tc.g)
			if tc.ok {
				assert.Equal(t, protocol.None, code, why)
			} else {
				assert.Equal(t, protocol.GroupIDNotFound, code)
				assert.NotEmpty(t, why)
			}
		})
	}
}

// mixedGroup builds a consumer group at epoch 10 (ConsumerGroupBuilder).
func mixedGroup(c *Coordinator, ms ...*Member) *Group {
	g := &Group{ID: "group-id", Epoch: 10, AssignmentEpoch: 10, computedOnce: true, owners: map[protocol.TopicPartition]owner{}}
	for _, m := range ms {
		if m.rebalanceDL == 0 {
			m.rebalanceDL = protocol.Never
		}
		if m.target == nil {
			m.target = m.assigned
		}
		g.members = append(g.members, m)
		c.setOwners(g, m)
	}
	c.groups = append(c.groups, g)
	return g
}

func classicMember(id string, epoch int32, st MemberState, assigned, revoking []protocol.TopicPartition) *Member {
	m := &Member{ID: id, RebalanceTimeout: 10 * time.Second, Topics: []string{"foo"},
		classic: &classicMeta{sessionTimeout: 5 * time.Second, protocols: rangeProtocol(nil, "foo"), joinDL: protocol.Never, syncDL: protocol.Never}}
	m.state, m.epoch, m.prevEpoch, m.assigned, m.revoking = st, epoch, epoch-1, assigned, revoking
	return m
}

// testClassicGroupHeartbeatToConsumerGroupRebalanceInProgress: a member
// behind the group epoch, one with partitions to revoke and one whose
// awaited partitions are all free are told to rejoin; each gets its
// classic session timeout and a join timeout of its rebalance timeout.
// testClassicGroupHeartbeatToConsumerGroupMaintainsSession's stable member
// is answered NONE.
func TestClassicHeartbeatToConsumerGroup(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	m1 := classicMember("m1", 9, Stable, nil, nil)
	m2 := classicMember("m2", 10, UnrevokedPartitions, nil, tps("foo", 0))
	m3 := classicMember("m3", 10, UnreleasedPartitions, tps("bar", 0), nil)
	m4 := classicMember("m4", 10, Stable, tps("bar", 2), nil)
	mixedGroup(c, m1, m2, m3, m4)
	m3.target = tps("bar", 0, 1)
	now := protocol.Instant(time.Second)
	var out Output
	for _, m := range []*Member{m1, m2, m3} {
		e := c.ClassicHeartbeat(now, &protocol.HeartbeatRequest{GroupID: "group-id", MemberID: m.ID, GenerationID: m.epoch}, &out)
		assert.Equal(t, protocol.RebalanceInProgress, e, m.ID)
		assert.Equal(t, now.Add(5*time.Second), m.sessionDeadline, m.ID)
		assert.Equal(t, now.Add(10*time.Second), m.classic.joinDL, m.ID)
	}
	assert.Equal(t, protocol.None, c.ClassicHeartbeat(now, &protocol.HeartbeatRequest{GroupID: "group-id", MemberID: "m4", GenerationID: 10}, &out))
	assert.Equal(t, protocol.Never, m4.classic.joinDL)
	// testClassicGroupHeartbeatToConsumerWithUnknownMember, ...WithIllegalGenerationId.
	assert.Equal(t, protocol.UnknownMemberID, c.ClassicHeartbeat(now, &protocol.HeartbeatRequest{GroupID: "group-id", MemberID: "nobody", GenerationID: 10}, &out))
	assert.Equal(t, protocol.IllegalGeneration, c.ClassicHeartbeat(now, &protocol.HeartbeatRequest{GroupID: "group-id", MemberID: "m4", GenerationID: 9}, &out))
	// testClassicGroupHeartbeatToConsumerWithMemberNotUsingClassicProtocol.
	m4.classic = nil
	assert.Equal(t, protocol.UnknownMemberID, c.ClassicHeartbeat(now, &protocol.HeartbeatRequest{GroupID: "group-id", MemberID: "m4", GenerationID: 10}, &out))
}

// testClassicGroupSyncToConsumerGroupWithIllegalGeneration,
// ...RebalanceInProgress, ...WithUnknownMemberId,
// ...WithInconsistentGroupProtocol and a successful sync returning the
// assigned partitions (pending revocation excluded).
func TestClassicSyncToConsumerGroup(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	m1 := classicMember("m1", 10, UnrevokedPartitions, tps("foo", 1), tps("foo", 0))
	m2 := classicMember("m2", 9, Stable, tps("foo", 2), nil)
	mixedGroup(c, m1, m2)
	now := protocol.Instant(time.Second)
	var out Output
	sync := func(id string, gen int32, ptype, pname string) *protocol.SyncGroupResponse {
		return c.ClassicSync(now, &protocol.SyncGroupRequest{GroupID: "group-id", MemberID: id, GenerationID: gen, ProtocolType: ptype, ProtocolName: pname}, &out)
	}
	assert.Equal(t, protocol.IllegalGeneration, sync("m1", 9, "consumer", "range").Error)
	assert.Equal(t, protocol.UnknownMemberID, sync("m9", 10, "consumer", "range").Error)
	assert.Equal(t, protocol.InconsistentGroupProtocol, sync("m1", 10, "consumer", "roundrobin").Error)
	assert.Equal(t, protocol.InconsistentGroupProtocol, sync("m1", 10, "connect", "range").Error)
	r := sync("m2", 9, "consumer", "range")
	assert.Equal(t, protocol.RebalanceInProgress, r.Error, "the group epoch is ahead of the member's")
	assert.Equal(t, now.Add(10*time.Second), m2.classic.joinDL)
	m1.classic.syncDL = now.Add(time.Second)
	r = sync("m1", 10, "consumer", "range")
	require.Equal(t, protocol.None, r.Error, "an UNREVOKED member may sync")
	assert.Equal(t, tps("foo", 1), r.Assignment.Partitions, "pending revocation excluded")
	assert.Equal(t, protocol.Never, m1.classic.syncDL)
	assert.Equal(t, now.Add(5*time.Second), m1.sessionDeadline)
}

// testConsumerGroupMemberUsingClassicProtocolFencedWhenJoinTimeout: a
// classic member told to rejoin that does not is fenced at its rebalance
// timeout; it was the last member, so no downgrade: the epoch bumps to 11.
func TestClassicMemberFencedWhenJoinTimeout(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	m := classicMember("m1", 9, Stable, nil, nil)
	m.RebalanceTimeout = 500 * time.Millisecond
	g := mixedGroup(c, m)
	now := protocol.Instant(time.Second)
	var out Output
	require.Equal(t, protocol.RebalanceInProgress, c.ClassicHeartbeat(now, &protocol.HeartbeatRequest{GroupID: "group-id", MemberID: "m1", GenerationID: 9}, &out))
	assert.Equal(t, now.Add(500*time.Millisecond), c.NextDeadline())
	c.Tick(now.Add(501*time.Millisecond), &out)
	assert.Empty(t, g.Members())
	assert.Equal(t, int32(11), g.Epoch)
	assert.Nil(t, out.Downgrade)
}

// testLastConsumerProtocolMemberLeavingConsumerGroup: the last
// consumer-protocol member leaves (epoch −1); only a classic member
// remains, so the group becomes a classic group at generation = group
// epoch, protocol range, the member's assignment its target; the consumer
// group is gone. Under policy upgrade the same leave only bumps the epoch.
func TestLastConsumerProtocolMemberLeavingConsumerGroup(t *testing.T) {
	for _, policy := range []string{PolicyBidirectional, PolicyUpgrade} {
		t.Run(policy, func(t *testing.T) {
			c := migrationCoordinator(t, policy)
			all := cat(tps("foo", 0, 1, 2), tps("bar", 0, 1))
			m1 := classicMember("m1", 10, Stable, all, nil)
			m1.Topics = []string{"bar", "foo"}
			m1.classic.protocols = rangeProtocol(all, "foo", "bar")
			m2 := &Member{ID: "m2", Topics: []string{"bar", "foo"}, RebalanceTimeout: 5 * time.Second}
			m2.state, m2.epoch = Stable, 10
			mixedGroup(c, m1, m2)
			var out Output
			c.Heartbeat(protocol.Instant(time.Second), &protocol.ConsumerGroupHeartbeatRequest{GroupID: "group-id", MemberID: "m2", MemberEpoch: protocol.LeaveEpoch}, &out)
			require.Equal(t, protocol.None, out.Resp.Error)
			if policy == PolicyUpgrade {
				assert.Nil(t, out.Downgrade, "isDowngradeEnabled is false")
				assert.Equal(t, int32(11), c.Group("group-id").Epoch)
				return
			}
			require.NotNil(t, out.Downgrade)
			d := out.Downgrade
			assert.Equal(t, int32(10), d.Generation)
			assert.Equal(t, "consumer", d.ProtocolType)
			assert.Equal(t, "range", d.ProtocolName)
			require.Len(t, d.Members, 1)
			assert.Equal(t, "m1", d.Members[0].ID)
			assert.Equal(t, all, d.Members[0].Assignment.Partitions)
			assert.Equal(t, 5*time.Second, d.Members[0].SessionTimeout)
			assert.Nil(t, c.Group("group-id"), "the consumer group is tombstoned")
		})
	}
}

// testNoConversionWhenSizeExceedsClassicMaxGroupSize: the remaining
// classic members do not fit group.max.size: no downgrade.
func TestNoConversionWhenSizeExceedsClassicMaxGroupSize(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	c.cfg.ClassicMaxSize = 1
	m1 := classicMember("m1", 10, Stable, tps("foo", 0), nil)
	m2 := classicMember("m2", 10, Stable, tps("foo", 1), nil)
	m3 := &Member{ID: "m3", Topics: []string{"foo"}}
	m3.state, m3.epoch = Stable, 10
	mixedGroup(c, m1, m2, m3)
	var out Output
	c.Heartbeat(protocol.Instant(time.Second), &protocol.ConsumerGroupHeartbeatRequest{GroupID: "group-id", MemberID: "m3", MemberEpoch: protocol.LeaveEpoch}, &out)
	assert.Nil(t, out.Downgrade)
	assert.Len(t, c.Group("group-id").Members(), 2)
}

// A classic JoinGroup to a consumer group (classicGroupJoinToConsumerGroup):
// a dynamic member without id gets MEMBER_ID_REQUIRED; with it, it joins
// at once (generation = member epoch, no leader); its session and sync
// timers are its classic ones; an unsupported protocol is
// INCONSISTENT_GROUP_PROTOCOL.
func TestClassicJoinToConsumerGroup(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	m1 := &Member{ID: "m1", Topics: []string{"foo"}, RebalanceTimeout: 5 * time.Second}
	m1.state, m1.epoch = Stable, 10
	m1.assigned = tps("foo", 0, 1, 2)
	m1.target = m1.assigned
	g := mixedGroup(c, m1)
	now := protocol.Instant(time.Second)
	var out Output
	req := &protocol.JoinGroupRequest{GroupID: "group-id", ClientID: "c", SessionTimeout: 6 * time.Second, RebalanceTimeout: 30 * time.Second,
		ProtocolType: "consumer", Protocols: rangeProtocol(nil, "foo"), Version: 9}
	r := c.ClassicJoin(now, req, &out)
	require.Equal(t, protocol.MemberIDRequired, r.Error)
	require.NotEmpty(t, r.MemberID)
	req.MemberID = r.MemberID
	r = c.ClassicJoin(now, req, &out)
	require.Equal(t, protocol.None, r.Error)
	assert.Equal(t, int32(11), g.Epoch, "the new member's subscription bumps")
	assert.Equal(t, "range", r.ProtocolName)
	assert.Equal(t, "", r.Leader)
	m := g.Member(r.MemberID)
	assert.Equal(t, m.Epoch(), r.GenerationID)
	assert.True(t, m.Classic())
	assert.Equal(t, now.Add(6*time.Second), m.sessionDeadline)
	assert.Equal(t, now.Add(30*time.Second), m.classic.syncDL)
	assert.Equal(t, protocol.Never, m.rebalanceDL, "no rebalance timer for a classic member")
	bad := *req
	bad.MemberID, bad.Protocols = "", []protocol.GroupProtocol{{Name: "roundrobin", Metadata: protocol.Subscription{Topics: []string{"foo"}}}}
	assert.Equal(t, protocol.InconsistentGroupProtocol, c.ClassicJoin(now, &bad, &out).Error)
}

// testConsumerGroupHeartbeatFromExistingClassicStaticMember: a static
// member restarted with the consumer protocol replaces its classic
// incarnation at once (no UNRELEASED_INSTANCE_ID: the check applies only
// between consumer-protocol members), keeps its assignment, and with the
// same subscription causes no epoch bump: it is STABLE at the group epoch,
// its classic metadata gone.
func TestConsumerGroupHeartbeatFromExistingClassicStaticMember(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	m1 := classicMember("member-1", 10, Stable, tps("foo", 0, 1, 2), nil)
	m1.InstanceID = "instance-id-1"
	m2 := classicMember("member-2", 10, Stable, cat(tps("bar", 0, 1, 2)), nil)
	m2.InstanceID, m2.Topics = "instance-id-2", []string{"bar"}
	g := mixedGroup(c, m1, m2)
	var out Output
	c.Heartbeat(protocol.Instant(time.Second), &protocol.ConsumerGroupHeartbeatRequest{GroupID: "group-id", MemberID: "member-1-new",
		InstanceID: "instance-id-1", MemberEpoch: 0, RebalanceTimeoutMs: 5000, SubscribedTopics: []string{"foo"}, OwnedSent: true}, &out)
	require.Equal(t, protocol.None, out.Resp.Error)
	assert.Equal(t, "member-1-new", out.Resp.MemberID)
	assert.Equal(t, int32(10), out.Resp.MemberEpoch)
	assert.Equal(t, int32(10), g.Epoch, "same subscription: no bump")
	m := g.Member("member-1-new")
	require.NotNil(t, m)
	assert.Nil(t, g.Member("member-1"))
	assert.False(t, m.Classic())
	assert.Equal(t, Stable, m.State())
	assert.Equal(t, tps("foo", 0, 1, 2), m.Assigned())
	assert.Equal(t, 5*time.Second, m.RebalanceTimeout)
	// A second consumer-protocol incarnation may not take the instance id
	// while this one holds it (throwIfInstanceIdIsUnreleased).
	out = Output{}
	c.Heartbeat(protocol.Instant(2*time.Second), &protocol.ConsumerGroupHeartbeatRequest{GroupID: "group-id", MemberID: "member-1-newer",
		InstanceID: "instance-id-1", MemberEpoch: 0, RebalanceTimeoutMs: 5000, SubscribedTopics: []string{"foo"}, OwnedSent: true}, &out)
	assert.Equal(t, protocol.UnreleasedInstanceID, out.Resp.Error)
}

// testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember: a
// classic static member (unknown member id) replaces the last
// consumer-protocol member, which was static: the group becomes a classic
// group at the group epoch, Stable — no rebalance (4.0) — each member
// holding its target. (The Java test's joiner also narrows its
// subscription; ≤4.1 then keeps the old epoch and targets, KAFKA-19546's
// stale assignment. Here the subscription is unchanged: see ClassicJoin.)
func TestLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember(t *testing.T) {
	c := migrationCoordinator(t, PolicyBidirectional)
	m1 := classicMember("member-1", 10, Stable, tps("foo", 0, 1), nil)
	m2 := &Member{ID: "member-2", InstanceID: "instance-id", Topics: []string{"foo"}, RebalanceTimeout: 5 * time.Second}
	m2.state, m2.epoch = Stable, 10
	m2.assigned = tps("foo", 2)
	mixedGroup(c, m1, m2)
	var out Output
	r := c.ClassicJoin(protocol.Instant(time.Second), &protocol.JoinGroupRequest{GroupID: "group-id", GroupInstanceID: "instance-id",
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 30 * time.Second, ProtocolType: "consumer", Protocols: rangeProtocol(nil, "foo"), Version: 9}, &out)
	require.Equal(t, protocol.None, r.Error)
	require.NotNil(t, out.Downgrade)
	d := out.Downgrade
	assert.False(t, d.Rebalance, "the classic group starts Stable")
	assert.Equal(t, int32(10), d.Generation)
	assert.Equal(t, int32(10), r.GenerationID)
	assert.Equal(t, "range", d.ProtocolName)
	require.Len(t, d.Members, 2)
	assert.Equal(t, tps("foo", 2), d.Members[1].Assignment.Partitions)
	assert.Equal(t, r.MemberID, d.Members[1].ID)
	assert.Nil(t, c.Group("group-id"))
}

// A classic static member rejoining (a new JoinGroup, unknown member id) a
// consumer group at group.consumer.max.size: rejected GROUP_MAX_SIZE_REACHED
// before 4.4 (classicGroupJoinToConsumerGroup calls
// throwIfConsumerGroupIsFull(group, memberId) @v8.0.0, @v8.3.0); from 4.4 its
// instance id lets it through to the static replacement (KAFKA-20601,
// e6919341bb on branch 4.4: GroupMetadataManagerTest.
// testStaticMemberCanRejoinConsumerGroupWithClassicProtocolWhenGroupIsFull).
func TestClassicStaticRejoinIntoFullConsumerGroup(t *testing.T) {
	for _, c := range []struct {
		profile string
		want    protocol.ErrorCode
	}{{"kafka-4.0", protocol.GroupMaxSizeReached}, {"kafka-4.3", protocol.GroupMaxSizeReached}, {"kafka-4.4", protocol.None}} {
		co, err := New(Config{Name: "broker-0", Profile: Profile(c.profile), MaxSize: 1,
			Topics: []assign.Topic{{Name: "bar", Partitions: 3}, {Name: "foo", Partitions: 3}}})
		require.NoError(t, err)
		m1 := classicMember("member-1", 10, Stable, tps("foo", 0, 1, 2), nil)
		m1.InstanceID = "instance-id-1"
		mixedGroup(co, m1)
		req := &protocol.JoinGroupRequest{GroupID: "group-id", ClientID: "c", GroupInstanceID: "instance-id-1", SessionTimeout: 5 * time.Second,
			RebalanceTimeout: 10 * time.Second, ProtocolType: "consumer", Protocols: rangeProtocol(nil, "foo"), Version: 9}
		var out Output
		assert.Equal(t, c.want, co.ClassicJoin(protocol.Instant(time.Second), req, &out).Error, c.profile)
	}
}
