package coordinator

import (
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Online migration between classic and consumer groups
// (kafka-consumer-protocol.md §4), as GroupMetadataManager does it. Cited
// methods are those of confluentinc/kafka tag v8.0.0 (= Apache Kafka
// 4.0.0), group-coordinator/.../GroupMetadataManager.java (GMM) and
// modern/consumer/ConsumerGroup.java (CG), classic/ClassicGroup.java (CLG).
//
// The classic group itself lives in the classic coordinator
// (package coordinator); the harness hands a classic group over as a
// ClassicGroup (its last synced state) and takes one back on a downgrade.

// Migration policies (group.consumer.migration.policy,
// ConsumerGroupMigrationPolicy).
const (
	PolicyBidirectional = "bidirectional"
	PolicyUpgrade       = "upgrade"
	PolicyDowngrade     = "downgrade"
	PolicyDisabled      = "disabled"
)

// Policies lists the valid group.consumer.migration.policy values.
var Policies = []string{PolicyBidirectional, PolicyUpgrade, PolicyDowngrade, PolicyDisabled}

func (c *Coordinator) upgradeEnabled() bool {
	return c.cfg.MigrationPolicy == PolicyBidirectional || c.cfg.MigrationPolicy == PolicyUpgrade
}

func (c *Coordinator) downgradeEnabled() bool {
	return c.cfg.MigrationPolicy == PolicyBidirectional || c.cfg.MigrationPolicy == PolicyDowngrade
}

// ClassicGroup is a classic group as it crosses between the two
// coordinators: its generation, protocol and each member's last synced
// assignment (the classic GroupMetadataValue record).
type ClassicGroup struct {
	ID           string
	Generation   int32
	ProtocolType string
	ProtocolName string
	Members      []ClassicMember
	// Rebalance: the classic coordinator prepares a rebalance when it
	// takes the group (a downgrade after a removal; after a static
	// replacement only when the target is stale, see ClassicJoin).
	Rebalance bool
}

// ClassicMember is one classic member of a ClassicGroup.
type ClassicMember struct {
	ID, InstanceID   string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	Protocols        []protocol.GroupProtocol
	Assignment       protocol.Assignment
}

// classicMeta is ConsumerGroupMemberMetadataValue.ClassicMemberMetadata
// plus the classic member's join and sync timers (GMM
// scheduleConsumerGroupJoinTimeoutIfAbsent, scheduleConsumerGroupSyncTimeout).
type classicMeta struct {
	sessionTimeout time.Duration
	protocols      []protocol.GroupProtocol
	joinDL         protocol.Instant
	syncDL         protocol.Instant
}

// Classic reports whether the member speaks the classic protocol
// (ConsumerGroupMember.useClassicProtocol).
func (m *Member) Classic() bool { return m.classic != nil }

// ValidateUpgrade is GMM.validateOnlineUpgrade plus the checks of
// ConsumerGroup.fromClassicGroup: a non-empty classic group converts only
// if the policy allows upgrade, it uses the consumer embedded protocol, it
// fits group.consumer.max.size and no member's assignment carries userData
// (a custom assignor's, KAFKA-18134). Otherwise the joining member gets
// GROUP_ID_NOT_FOUND; the second result says why.
func (c *Coordinator) ValidateUpgrade(cg *ClassicGroup) (protocol.ErrorCode, string) {
	switch {
	case !c.upgradeEnabled():
		return protocol.GroupIDNotFound, "online upgrade is disabled (group.consumer.migration.policy " + c.cfg.MigrationPolicy + ")"
	case cg.ProtocolType != "consumer": // ClassicGroup.usesConsumerGroupProtocol
		return protocol.GroupIDNotFound, "the group does not use the consumer embedded protocol"
	case c.cfg.MaxSize > 0 && len(cg.Members) > c.cfg.MaxSize:
		return protocol.GroupIDNotFound, "the group size exceeds group.consumer.max.size"
	}
	for i := range cg.Members {
		if cg.Members[i].Assignment.UserData != "" {
			return protocol.GroupIDNotFound, "an unsupported custom assignor is in use (assignment userData)"
		}
	}
	return protocol.None, ""
}

// Upgrade is GMM.convertToConsumerGroup → ConsumerGroup.fromClassicGroup
// (v8.0.0): the group epoch and the target assignment epoch are the
// classic generation; every classic member becomes a STABLE member at that
// epoch whose assigned partitions and target are its last synced
// assignment, keeping its classic session timeout and protocols; each gets
// a session timer with its classic session timeout. The caller has
// validated (ValidateUpgrade) and removed the classic group (completing
// its parked JoinGroup and SyncGroup with REBALANCE_IN_PROGRESS). With
// 4.3's batching, the new group has no assignment timestamp, so the
// joining member's heartbeat computes a target at once.
func (c *Coordinator) Upgrade(now protocol.Instant, cg *ClassicGroup, out *Output) *Group {
	g := &Group{ID: cg.ID, Epoch: cg.Generation, AssignmentEpoch: cg.Generation, owners: map[protocol.TopicPartition]owner{}}
	for i := range cg.Members {
		cm := &cg.Members[i]
		m := &Member{ID: cm.ID, InstanceID: cm.InstanceID, RebalanceTimeout: cm.RebalanceTimeout, rebalanceDL: protocol.Never}
		m.state, m.epoch, m.prevEpoch = Stable, cg.Generation, cg.Generation
		m.assigned = sortedTPs(cm.Assignment.Partitions)
		m.target = m.assigned
		m.Topics = subscriptionTopics(cm.Protocols, cg.ProtocolName)
		m.classic = &classicMeta{sessionTimeout: cm.SessionTimeout, protocols: slices.Clone(cm.Protocols), joinDL: protocol.Never, syncDL: protocol.Never}
		m.sessionDeadline = now.Add(cm.SessionTimeout)
		g.members = append(g.members, m)
		c.setOwners(g, m)
		c.emit(out, g, protocol.Event{Kind: protocol.EvMemberAdded, Peer: m.ID, Gen: g.Epoch, Reason: "upgrade"})
	}
	// fromClassicGroup sets the subscription metadata from the image; the
	// refresh deadline starts expired (DeadlineAndEpoch.EMPTY).
	g.metadata, g.metadataExpired = c.subscriptionMetadata(g), true
	c.groups = append(c.groups, g)
	return g
}

// subscriptionTopics are the sorted topics of the protocol named name (the
// group's selected one), else of the first. Deviation: a group that never
// completed a generation has no protocol name, and Java's fromClassicGroup
// (protocolName().get()) would fail the conversion with an unexpected
// error; here the member's first protocol is read.
func subscriptionTopics(ps []protocol.GroupProtocol, name string) []string {
	if len(ps) == 0 {
		return nil
	}
	sub := ps[0].Metadata
	for _, p := range ps {
		if p.Name == name {
			sub = p.Metadata
			break
		}
	}
	t := slices.Clone(sub.Topics)
	slices.Sort(t)
	return t
}

func sortedTPs(l []protocol.TopicPartition) []protocol.TopicPartition {
	out := slices.Clone(l)
	slices.SortFunc(out, cmpTP)
	return slices.Compact(out)
}

// DeleteEmpty removes group id if it is an empty consumer group (a classic
// JoinGroup converts an empty consumer group to a classic group under any
// policy, GMM.classicGroupJoin → maybeDeleteEmptyConsumerGroup). It
// reports whether it did.
func (c *Coordinator) DeleteEmpty(id string) bool {
	g := c.Group(id)
	if g == nil || len(g.members) > 0 {
		return false
	}
	c.Unload(id)
	return true
}

// supportsClassicProtocols is ConsumerGroup.supportsClassicProtocols: the
// protocol type is consumer and, when the group has classic members, one
// of the request's protocol names is supported by every one of them.
func (g *Group) supportsClassicProtocols(ptype string, ps []protocol.GroupProtocol) bool {
	if ptype != "consumer" || len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		all := true
		for _, m := range g.members {
			if m.classic != nil && !slices.ContainsFunc(m.classic.protocols, func(q protocol.GroupProtocol) bool { return q.Name == p.Name }) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// ClassicJoin is GMM.classicGroupJoinToConsumerGroup (v8.0.0): a classic
// JoinGroup to a non-empty consumer group. The member is created or
// updated from the embedded subscription (topics, owned partitions), the
// group epoch bumps if its topics changed, the target is recomputed if the
// epoch is ahead (under 4.3's batching gate as for a heartbeat), and the
// member is reconciled with CurrentAssignmentBuilder against the owned
// partitions it reports; no rebalance timer is armed for a classic member.
// The response is immediate: generation = member epoch, protocol = its
// first supported one, no leader. The session timer is then its classic
// session timeout and the sync timer its rebalance timeout.
//
// Not modelled: the 4.3.1 INCONSISTENT_GROUP_PROTOCOL under policy
// disabled (KAFKA-20640). Deviation: a downgrade by static replacement
// takes the group epoch and targets after this join's own changes; Java
// builds the classic group before the join's records are replayed, so ≤4.1
// (KAFKA-19546) kept the old epoch and targets.
func (c *Coordinator) ClassicJoin(now protocol.Instant, r *protocol.JoinGroupRequest, out *Output) *protocol.JoinGroupResponse {
	fail := func(e protocol.ErrorCode, id string) *protocol.JoinGroupResponse {
		return &protocol.JoinGroupResponse{Error: e, GenerationID: protocol.NoGeneration, MemberID: id}
	}
	g := c.Group(r.GroupID)
	id := r.MemberID
	unknown := id == ""
	if unknown {
		base := r.ClientID
		if base == "" {
			base = g.ID
		}
		id = c.newID(base)
	}
	// throwIfConsumerGroupIsFull (a static member's exemption from 4.4, KAFKA-20601).
	if c.full(g, id, r.GroupInstanceID) {
		return fail(protocol.GroupMaxSizeReached, r.MemberID)
	}
	if !g.supportsClassicProtocols(r.ProtocolType, r.Protocols) {
		return fail(protocol.InconsistentGroupProtocol, r.MemberID)
	}
	// JoinGroupRequest.requiresKnownMemberId (v4+ dynamic members).
	if unknown && r.GroupInstanceID == "" && r.Version >= 4 {
		return fail(protocol.MemberIDRequired, id)
	}
	var m *Member
	replacedConsumer := false // a consumer-protocol static member was replaced
	if r.GroupInstanceID == "" {
		if m = g.Member(id); m == nil {
			m = c.newMember(g, id, "", out)
		}
	} else {
		// getOrMaybeSubscribeStaticConsumerGroupMember with
		// createIfNotExists = the member id is unknown: a known id must
		// belong to the instance (throwIfStaticMemberIsUnknown,
		// throwIfInstanceIdIsFenced); an unknown one replaces whatever
		// member holds the instance id, with no unreleased check.
		old := g.static(r.GroupInstanceID)
		switch {
		case old == nil && !unknown:
			return fail(protocol.UnknownMemberID, r.MemberID)
		case old == nil:
			m = c.newMember(g, id, r.GroupInstanceID, out)
		case old.ID == id:
			m = old
		case !unknown:
			return fail(protocol.FencedInstanceID, r.MemberID)
		default:
			// A new incarnation of the static member replaces the old one
			// and inherits its assignment (getOrMaybeSubscribeStaticConsumerGroupMember).
			replacedConsumer = old.classic == nil
			c.emit(out, g, protocol.Event{Kind: protocol.EvMemberRemoved, Peer: old.ID, Reason: protocol.RemovalFenced.String(), Removal: protocol.RemovalFenced, Gen: g.Epoch})
			c.clearOwners(g, old)
			old.ID = id
			old.epoch, old.prevEpoch = 0, 0
			old.rebalanceDL = protocol.Never // the old member id's timers are gone
			c.setOwners(g, old)
			c.emit(out, g, protocol.Event{Kind: protocol.EvMemberAdded, Peer: id, Gen: g.Epoch})
			m = old
		}
	}
	sub := r.Protocols[0].Metadata // deserializeSubscription: the first protocol
	m.RebalanceTimeout = r.RebalanceTimeout
	if m.classic == nil {
		m.classic = &classicMeta{joinDL: protocol.Never, syncDL: protocol.Never}
	}
	m.classic.sessionTimeout, m.classic.protocols = r.SessionTimeout, slices.Clone(r.Protocols)
	topics := slices.Clone(sub.Topics)
	slices.Sort(topics)
	subscriptionChanged := !slices.Equal(topics, m.Topics)
	if subscriptionChanged {
		m.Topics = topics
		c.bump(g, out, "subscription")
	}
	// GMM.classicGroupJoinToConsumerGroup (v8.0.0) refreshes the
	// subscription metadata as the consumer heartbeat does.
	c.maybeRefreshMetadata(g, out)
	c.maybeComputeTarget(now, g, out)
	next, err := c.b.reconcile(m.assignment, m.target, g.AssignmentEpoch, g.ownerEpoch, sortedTPs(sub.OwnedPartitions), true)
	if err == nil {
		c.setAssignment(g, m, next, out)
	}
	// No rebalance timer is scheduled for a classic member (one armed on
	// load, GMM.onLoaded, runs on and is ignored once its epoch moved).
	resp := &protocol.JoinGroupResponse{MemberID: m.ID, GenerationID: m.epoch, ProtocolType: "consumer", ProtocolName: m.classic.protocols[0].Name}
	// The downgrade when the last consumer-protocol static member is
	// replaced by this classic one (validateOnlineDowngradeWithReplacedMember,
	// convertToClassicGroup with a joining member): the classic group
	// starts Stable with no rebalance, unless the target is stale (4.3:
	// the assignment epoch is behind, KAFKA-20273) or, since 4.2
	// (KAFKA-19546), the joiner changed its subscription.
	if replacedConsumer && c.canDowngrade(g, nil) {
		c.downgrade(g, nil, out)
		out.Downgrade.Rebalance = g.AssignmentEpoch < g.Epoch || (c.b.staticDowngradeRebalances && subscriptionChanged)
		return resp
	}
	m.classic.joinDL = protocol.Never
	m.sessionDeadline = now.Add(m.classic.sessionTimeout)
	m.classic.syncDL = now.Add(r.RebalanceTimeout)
	return resp
}

func (c *Coordinator) newMember(g *Group, id, instance string, out *Output) *Member {
	m := &Member{ID: id, InstanceID: instance, rebalanceDL: protocol.Never}
	m.state = Stable
	g.members = append(g.members, m)
	c.wrote() // the member's metadata record
	c.emit(out, g, protocol.Event{Kind: protocol.EvMemberAdded, Peer: id, Gen: g.Epoch})
	return m
}

// maybeComputeTarget recomputes the target when the group epoch is ahead,
// under 4.3's batching gate (§2.6).
func (c *Coordinator) maybeComputeTarget(now protocol.Instant, g *Group, out *Output) {
	if iv := c.assignmentInterval(g.ID); g.Epoch > g.AssignmentEpoch && (!c.b.batching || !g.computedOnce || iv == 0 ||
		now >= g.assignedAt.Add(iv)) {
		c.computeTarget(now, g, out)
	}
}

// classicMember is GMM.validateConsumerGroupMember followed by
// throwIfMemberDoesNotUseClassicProtocol.
func (g *Group) classicMember(id, instance string) (*Member, protocol.ErrorCode) {
	var m *Member
	if instance == "" {
		m = g.Member(id)
	} else {
		m = g.static(instance)
		if m != nil && m.ID != id {
			return nil, protocol.FencedInstanceID
		}
	}
	if m == nil || m.classic == nil {
		return nil, protocol.UnknownMemberID
	}
	return m, protocol.None
}

// rejoinEpoch is the epoch a classic member is compared with to tell it to
// rejoin: the group epoch up to 4.2, the target assignment epoch in 4.3
// (KAFKA-20272).
func (c *Coordinator) rejoinEpoch(g *Group) int32 {
	if c.b.batching {
		return g.AssignmentEpoch
	}
	return g.Epoch
}

func (c *Coordinator) armJoin(now protocol.Instant, m *Member) {
	if m.classic.joinDL == protocol.Never {
		m.classic.joinDL = now.Add(m.RebalanceTimeout)
	}
}

// ClassicSync is GMM.classicGroupSyncToConsumerGroup (v8.0.0): validate
// the member, its generation (= member epoch) and protocol; answer
// REBALANCE_IN_PROGRESS (arming the join timer) if a newer epoch exists
// and the member is not revoking (throwIfRebalanceInProgress); else
// cancel the sync timer, restart the session timer and return the
// member's assigned partitions — pending revocations and unreleased
// partitions excluded (prepareAssignment).
func (c *Coordinator) ClassicSync(now protocol.Instant, r *protocol.SyncGroupRequest, out *Output) *protocol.SyncGroupResponse {
	g := c.Group(r.GroupID)
	m, e := g.classicMember(r.MemberID, r.GroupInstanceID)
	switch {
	case e != protocol.None:
	case m.epoch != r.GenerationID:
		e = protocol.IllegalGeneration
	case (r.ProtocolType != "" && r.ProtocolType != "consumer") || (r.ProtocolName != "" && r.ProtocolName != m.classic.protocols[0].Name):
		e = protocol.InconsistentGroupProtocol
	case c.rejoinEpoch(g) > m.epoch && m.state != UnrevokedPartitions:
		c.armJoin(now, m)
		e = protocol.RebalanceInProgress
	}
	if e != protocol.None {
		return &protocol.SyncGroupResponse{Error: e}
	}
	m.classic.syncDL = protocol.Never
	m.sessionDeadline = now.Add(m.classic.sessionTimeout)
	return &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: m.classic.protocols[0].Name,
		Assignment: protocol.Assignment{Partitions: slices.Clone(m.assigned)}}
}

// ClassicHeartbeat is GMM.classicGroupHeartbeatToConsumerGroup (v8.0.0):
// validate, restart the session timer, and answer REBALANCE_IN_PROGRESS
// (arming the join timer if absent) when the member is behind the group
// (epoch < group epoch; 4.3: < assignment epoch), must revoke
// (UNREVOKED_PARTITIONS), or waits for partitions that are all free now
// (UNRELEASED_PARTITIONS and !waitingOnUnreleasedPartition).
func (c *Coordinator) ClassicHeartbeat(now protocol.Instant, r *protocol.HeartbeatRequest, out *Output) protocol.ErrorCode {
	g := c.Group(r.GroupID)
	m, e := g.classicMember(r.MemberID, r.GroupInstanceID)
	if e != protocol.None {
		return e
	}
	if m.epoch != r.GenerationID {
		return protocol.IllegalGeneration
	}
	m.sessionDeadline = now.Add(m.classic.sessionTimeout)
	if m.epoch < c.rejoinEpoch(g) || m.state == UnrevokedPartitions ||
		(m.state == UnreleasedPartitions && !g.waitingOnUnreleased(m)) {
		c.armJoin(now, m)
		return protocol.RebalanceInProgress
	}
	return protocol.None
}

// waitingOnUnreleased is ConsumerGroup.waitingOnUnreleasedPartition: a
// partition of the member's target it does not have yet is still owned by
// another member.
func (g *Group) waitingOnUnreleased(m *Member) bool {
	for _, p := range m.target {
		if contains(m.assigned, p) {
			continue
		}
		if o, ok := g.owners[p]; ok && o.member != m.ID {
			return true
		}
	}
	return false
}

// ClassicLeave is GMM.classicGroupLeaveToConsumerGroup (v8.0.0): each
// identified member is fenced (consumerGroupFenceMembers: an epoch bump,
// or the downgrade when only classic members remain).
func (c *Coordinator) ClassicLeave(now protocol.Instant, r *protocol.LeaveGroupRequest, out *Output) *protocol.LeaveGroupResponse {
	g := c.Group(r.GroupID)
	resp := &protocol.LeaveGroupResponse{}
	var valid []*Member
	for _, lm := range r.Members {
		mr := protocol.LeaveGroupMemberResponse{MemberID: lm.MemberID, GroupInstanceID: lm.GroupInstanceID}
		var m *Member
		if lm.GroupInstanceID == "" {
			if m = g.Member(lm.MemberID); m == nil {
				mr.Error = protocol.UnknownMemberID
			}
		} else {
			m = g.static(lm.GroupInstanceID)
			switch {
			case m == nil:
				mr.Error = protocol.UnknownMemberID
			case lm.MemberID != "" && m.ID != lm.MemberID:
				mr.Error, m = protocol.FencedInstanceID, nil
			}
		}
		if m != nil && !slices.Contains(valid, m) {
			valid = append(valid, m)
		}
		resp.Members = append(resp.Members, mr)
	}
	c.fenceMembers(g, valid, "leave", out)
	return resp
}

// fenceMembers is GMM.consumerGroupFenceMembers: if only classic members
// would remain (at least one), the policy allows downgrade and they fit
// group.max.size (validateOnlineDowngradeWithFencedMembers), the group is
// converted back to a classic group (convertToClassicGroup): Output.Downgrade
// carries it and the consumer group is gone. Otherwise the members are
// removed and the group epoch bumps.
func (c *Coordinator) fenceMembers(g *Group, ms []*Member, why string, out *Output) {
	if len(ms) == 0 {
		return
	}
	c.wrote() // the members' tombstones
	if c.canDowngrade(g, ms) {
		for _, m := range ms {
			c.emitRemoved(g, m, why, out)
		}
		c.downgrade(g, ms, out)
		return
	}
	for _, m := range ms {
		c.clearOwners(g, m)
		g.members = slices.DeleteFunc(g.members, func(x *Member) bool { return x == m })
		c.emitRemoved(g, m, why, out)
	}
	c.bump(g, out, why)
}

// canDowngrade is GMM.validateOnlineDowngradeWithFencedMembers (v8.0.0);
// with no leaving member it is validateOnlineDowngradeWithReplacedMember
// for a replacement already made (every member classic).
func (c *Coordinator) canDowngrade(g *Group, leaving []*Member) bool {
	remaining := 0
	for _, m := range g.members {
		if slices.Contains(leaving, m) {
			continue
		}
		if m.classic == nil {
			return false
		}
		remaining++
	}
	return remaining > 0 && c.downgradeEnabled() && (c.cfg.ClassicMaxSize <= 0 || remaining <= c.cfg.ClassicMaxSize)
}

// downgrade is GMM.convertToClassicGroup → ClassicGroup.fromConsumerGroup
// (v8.0.0): a STABLE classic group at generation = group epoch, protocol
// type consumer, whose members (the remaining ones) get their *target*
// assignment. The caller (the classic coordinator) selects the protocol,
// reschedules the members' heartbeats and prepares a rebalance so every
// member rejoins.
func (c *Coordinator) downgrade(g *Group, leaving []*Member, out *Output) {
	cg := &ClassicGroup{ID: g.ID, Generation: g.Epoch, ProtocolType: "consumer"}
	for _, m := range g.members {
		if slices.Contains(leaving, m) {
			continue
		}
		cg.Members = append(cg.Members, ClassicMember{ID: m.ID, InstanceID: m.InstanceID,
			SessionTimeout: m.classic.sessionTimeout, RebalanceTimeout: m.RebalanceTimeout,
			Protocols: slices.Clone(m.classic.protocols), Assignment: protocol.Assignment{Partitions: slices.Clone(m.target)}})
	}
	cg.ProtocolName = selectProtocol(cg.Members)
	cg.Rebalance = true
	c.Unload(g.ID)
	out.Downgrade = cg
}

// selectProtocol is ClassicGroup.selectProtocol (protocol.SelectProtocol,
// the vote both coordinators share).
func selectProtocol(ms []ClassicMember) string {
	return protocol.SelectProtocol(len(ms), func(i int) []protocol.GroupProtocol { return ms[i].Protocols }, func(name string) bool {
		for _, m := range ms {
			if !slices.ContainsFunc(m.Protocols, func(q protocol.GroupProtocol) bool { return q.Name == name }) {
				return false
			}
		}
		return true
	})
}

func (c *Coordinator) emitRemoved(g *Group, m *Member, why string, out *Output) {
	ev := protocol.Event{Kind: protocol.EvMemberRemoved, Peer: m.ID, Reason: why, Gen: g.Epoch}
	switch {
	case why == "session-expired":
		ev.Removal = protocol.RemovalSessionExpired
	case why == "rebalance-timeout", strings.HasSuffix(why, "-timeout"):
		ev.Removal = protocol.RemovalRebalanceTimeout
	case why == "leave":
		ev.Removal = protocol.RemovalLeave
	}
	c.emit(out, g, ev)
}
