package coordinator

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// GroupState is the consumer group's derived state (ConsumerGroup.
// ConsumerGroupState, CG@4.3 L959-975).
type GroupState uint8

const (
	Empty GroupState = iota
	Assigning
	Reconciling
	GroupStable
)

func (s GroupState) String() string {
	switch s {
	case Empty:
		return "Empty"
	case Assigning:
		return "Assigning"
	case Reconciling:
		return "Reconciling"
	case GroupStable:
		return "Stable"
	}
	return "?"
}

// Config is the broker's consumer-group configuration.
type Config struct {
	Name               string // the broker's name, for events
	Profile            Profile
	SessionTimeout     time.Duration // group.consumer.session.timeout.ms
	HeartbeatInterval  time.Duration // group.consumer.heartbeat.interval.ms
	MaxSize            int           // group.consumer.max.size (0: unlimited)
	Assignors          []string      // group.consumer.assignors (first = default)
	AssignmentInterval time.Duration // group.consumer.assignment.interval.ms (4.3)
	// MigrationPolicy is group.consumer.migration.policy (Policies; ""
	// is the 4.0+ default, bidirectional).
	MigrationPolicy string
	// ClassicMaxSize is group.max.size, which gates a downgrade (0: unlimited).
	ClassicMaxSize int
	// Topics is the metadata image of the topics groups subscribe to.
	Topics []assign.Topic
	// Groups are the group-level configs (GroupConfig, set with
	// kafka-configs --entity-type groups): a group listed here lives by its
	// own values where they are set (0: the broker's).
	Groups []GroupConfig
	// Costs are the runtime's event-loop and append costs (runtime.go).
	Costs Costs
}

// GroupConfig is one group's dynamic config (KIP-848 GroupConfig:
// consumer.session.timeout.ms, consumer.heartbeat.interval.ms; 4.3's
// consumer.assignment.interval.ms, KAFKA-20251); 0 leaves the broker's
// group.consumer.* value (the assignment interval: unless
// AssignmentIntervalSet, as 0 is a valid interval).
type GroupConfig struct {
	ID                    string
	SessionTimeout        time.Duration
	HeartbeatInterval     time.Duration
	AssignmentInterval    time.Duration
	AssignmentIntervalSet bool
}

// groupConfig returns the group's config, or nil.
func (c *Coordinator) groupConfig(id string) *GroupConfig {
	for i := range c.cfg.Groups {
		if c.cfg.Groups[i].ID == id {
			return &c.cfg.Groups[i]
		}
	}
	return nil
}

// sessionTimeout, heartbeatInterval and assignmentInterval are the group's
// values: its GroupConfig's, else the broker's.
// Kafka: GroupMetadataManager.consumerGroupSessionTimeoutMs,
// consumerGroupHeartbeatIntervalMs @v8.0.0; consumerGroupAssignmentIntervalMs @v8.3.0
func (c *Coordinator) sessionTimeout(id string) time.Duration {
	if gc := c.groupConfig(id); gc != nil && gc.SessionTimeout > 0 {
		return gc.SessionTimeout
	}
	return c.cfg.SessionTimeout
}

func (c *Coordinator) heartbeatInterval(id string) time.Duration {
	if gc := c.groupConfig(id); gc != nil && gc.HeartbeatInterval > 0 {
		return gc.HeartbeatInterval
	}
	return c.cfg.HeartbeatInterval
}

func (c *Coordinator) assignmentInterval(id string) time.Duration {
	if gc := c.groupConfig(id); gc != nil && gc.AssignmentIntervalSet {
		return gc.AssignmentInterval
	}
	return c.cfg.AssignmentInterval
}

// Member is one consumer-protocol member (ConsumerGroupMember).
type Member struct {
	ID, InstanceID   string
	assignment                        // state, epochs, assigned, pending revocation
	RebalanceTimeout time.Duration    // the client's max.poll.interval.ms
	Topics           []string         // subscribed topic names, sorted
	Assignor         string           // ServerAssignor, "" for the group default
	sessionDeadline  protocol.Instant // session timer
	rebalanceDL      protocol.Instant // rebalance (revocation) timer, Never when unarmed
	rebalanceEpoch   int32            // the epoch the rebalance timer was armed at
	target           []protocol.TopicPartition
	classic          *classicMeta // a classic-protocol member (migration.go), else nil
}

// State is the member's reconciliation state; Epoch its member epoch.
func (m *Member) State() MemberState { return m.state }

// Epoch is the member epoch.
func (m *Member) Epoch() int32 { return m.epoch }

// Assigned are the partitions the member may use (sorted; shared).
func (m *Member) Assigned() []protocol.TopicPartition { return m.assigned }

// Revoking are the partitions the member must still give up.
func (m *Member) Revoking() []protocol.TopicPartition { return m.revoking }

type owner struct {
	member string
	epoch  int32
}

// Group is one consumer group (ConsumerGroup).
type Group struct {
	ID              string
	Epoch           int32 // groupEpoch
	AssignmentEpoch int32 // the target assignment's epoch
	assignedAt      protocol.Instant
	computedOnce    bool
	members         []*Member // in join order
	owners          map[protocol.TopicPartition]owner
	// metadata is the group's subscription metadata as of its last epoch
	// bump (the ConsumerGroupPartitionMetadata record ≤ 4.0, the
	// metadataHash of 4.1+); metadataExpired is ModernGroup.
	// hasMetadataExpired: a refresh was requested (requestMetadataRefresh,
	// a topic it subscribes to changed) or the group was just loaded.
	metadata        []assign.Topic
	metadataExpired bool
}

// Members lists the group's members in join order (shared, do not mutate).
func (g *Group) Members() []*Member { return g.members }

// Member finds a member by id.
func (g *Group) Member(id string) *Member {
	for _, m := range g.members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (g *Group) static(instance string) *Member {
	for _, m := range g.members {
		if m.InstanceID == instance {
			return m
		}
	}
	return nil
}

// State derives the group state.
func (g *Group) State() GroupState {
	switch {
	case len(g.members) == 0:
		return Empty
	case g.Epoch > g.AssignmentEpoch:
		return Assigning
	}
	for _, m := range g.members {
		if m.state != Stable || m.epoch != g.AssignmentEpoch {
			return Reconciling
		}
	}
	return GroupStable
}

// Output collects what one call produced.
type Output struct {
	Resp   *protocol.ConsumerGroupHeartbeatResponse
	Events []protocol.Event
	// Downgrade is the classic group a downgrade produced (the consumer
	// group is gone): the caller hands it to the classic coordinator,
	// which prepares a rebalance (migration.go).
	Downgrade *ClassicGroup
	// ReplyAt is when Heartbeat's answer leaves (Costs, runtime.go): the
	// call's instant unless the coordinator has costs.
	ReplyAt protocol.Instant
}

// Coordinator holds the consumer groups of one broker.
type Coordinator struct {
	cfg    Config
	b      *behaviour
	groups []*Group
	nextID int
	rt     runtime
}

// New returns a coordinator; it fails on an unknown profile.
func New(cfg Config) (*Coordinator, error) {
	b, err := lookup(cfg.Profile)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if len(cfg.Assignors) == 0 {
		cfg.Assignors = []string{Uniform, Range}
	}
	if cfg.MigrationPolicy == "" {
		cfg.MigrationPolicy = PolicyBidirectional
	}
	if b.batching && cfg.AssignmentInterval == 0 {
		cfg.AssignmentInterval = DefaultAssignmentInterval
	}
	return &Coordinator{cfg: cfg, b: b}, nil
}

// Group returns a group by id, or nil.
func (c *Coordinator) Group(id string) *Group {
	for _, g := range c.groups {
		if g.ID == id {
			return g
		}
	}
	return nil
}

func (c *Coordinator) emit(out *Output, g *Group, ev protocol.Event) {
	ev.Node, ev.Group = c.cfg.Name, g.ID
	out.Events = append(out.Events, ev)
}

func (c *Coordinator) respond(out *Output, group string, err protocol.ErrorCode, id string, epoch int32) {
	out.Resp = &protocol.ConsumerGroupHeartbeatResponse{Error: err, MemberID: id, MemberEpoch: epoch,
		HeartbeatIntervalMs: int32(c.heartbeatInterval(group).Milliseconds())}
}

// Heartbeat is GroupMetadataManager.consumerGroupHeartbeat (§2.3–2.11),
// answered when the runtime would answer it (out.ReplyAt, runtime.go).
func (c *Coordinator) Heartbeat(now protocol.Instant, r *protocol.ConsumerGroupHeartbeatRequest, out *Output) {
	c.rt.cost, c.rt.wrote, c.rt.chargeCosts = 0, false, true
	c.heartbeat(now, r, out)
	c.release(now, out)
}

func (c *Coordinator) heartbeat(now protocol.Instant, r *protocol.ConsumerGroupHeartbeatRequest, out *Output) {
	// §2.3 request validation (GCS@4.3 L438-477).
	switch {
	case r.GroupID == "", r.MemberEpoch < protocol.StaticLeaveEpoch,
		r.MemberEpoch == protocol.StaticLeaveEpoch && r.InstanceID == "",
		r.MemberEpoch == protocol.JoinEpoch && (r.RebalanceTimeoutMs < 0 || r.SubscribedTopics == nil ||
			(r.OwnedSent && len(r.Owned) > 0)),
		r.MemberEpoch != protocol.JoinEpoch && r.MemberID == "":
		c.respond(out, r.GroupID, protocol.InvalidRequest, r.MemberID, r.MemberEpoch)
		return
	}
	if r.ServerAssignor != "" && !slices.Contains(c.cfg.Assignors, r.ServerAssignor) {
		c.respond(out, r.GroupID, protocol.UnsupportedAssignor, r.MemberID, r.MemberEpoch)
		return
	}
	g := c.Group(r.GroupID)
	if r.MemberEpoch < 0 {
		c.leave(now, g, r, out)
		return
	}
	if g == nil {
		if r.MemberEpoch != protocol.JoinEpoch {
			c.respond(out, r.GroupID, protocol.GroupIDNotFound, r.MemberID, r.MemberEpoch)
			return
		}
		// A new group's refresh deadline is DeadlineAndEpoch.EMPTY: expired.
		g = &Group{ID: r.GroupID, owners: map[protocol.TopicPartition]owner{}, metadataExpired: true}
		if c.b.epochStartsAtOne {
			g.Epoch, g.AssignmentEpoch = 1, 1
		}
		c.groups = append(c.groups, g)
	}
	if c.full(g, r.MemberID, r.InstanceID) {
		c.respond(out, r.GroupID, protocol.GroupMaxSizeReached, r.MemberID, r.MemberEpoch)
		return
	}
	m, err := c.lookupMember(now, g, r, out)
	if err != protocol.None {
		c.respond(out, r.GroupID, err, r.MemberID, r.MemberEpoch)
		return
	}
	// Update the member from the request's non-null fields (§2.4 step 4-6).
	if r.RebalanceTimeoutMs >= 0 {
		m.RebalanceTimeout = time.Duration(r.RebalanceTimeoutMs) * time.Millisecond
	}
	if r.ServerAssignor != "" {
		m.Assignor = r.ServerAssignor
	}
	m.classic = nil // the member speaks the consumer protocol now (§2.4 step 4)
	if r.SubscribedTopics != nil {
		topics := slices.Clone(r.SubscribedTopics)
		slices.Sort(topics)
		if !slices.Equal(topics, m.Topics) {
			m.Topics = topics
			c.bump(g, out, "subscription")
		}
	}
	c.maybeRefreshMetadata(g, out)
	// §2.6 target assignment.
	c.maybeComputeTarget(now, g, out)
	// §2.7 reconciliation.
	before := m.assigned
	if !(m.state == Stable && m.epoch == g.AssignmentEpoch) || r.MemberEpoch == protocol.JoinEpoch {
		next, err := c.b.reconcile(m.assignment, m.target, g.AssignmentEpoch, g.ownerEpoch, r.Owned, r.OwnedSent)
		if err != nil {
			c.respond(out, r.GroupID, protocol.FencedMemberEpoch, m.ID, r.MemberEpoch)
			return
		}
		c.setAssignment(g, m, next, out)
	}
	if m.state == UnrevokedPartitions {
		if m.rebalanceDL == protocol.Never || m.rebalanceEpoch != m.epoch {
			m.rebalanceDL, m.rebalanceEpoch = now.Add(m.RebalanceTimeout), m.epoch
		}
	} else {
		m.rebalanceDL = protocol.Never
	}
	m.sessionDeadline = now.Add(c.sessionTimeout(g.ID))
	c.checkMember(g, m, out) // what the response hands the member
	c.respond(out, r.GroupID, protocol.None, m.ID, m.epoch)
	full := r.RebalanceTimeoutMs >= 0 && r.SubscribedTopics != nil && r.OwnedSent
	if r.MemberEpoch == protocol.JoinEpoch || full || !slices.Equal(before, m.assigned) {
		out.Resp.Assignment, out.Resp.HasAssignment = slices.Clone(m.assigned), true
	}
}

// lookupMember finds or creates the member and validates its epoch (§2.10, §2.11).
func (c *Coordinator) lookupMember(now protocol.Instant, g *Group, r *protocol.ConsumerGroupHeartbeatRequest, out *Output) (*Member, protocol.ErrorCode) {
	if r.InstanceID != "" {
		old := g.static(r.InstanceID)
		if r.MemberEpoch == protocol.JoinEpoch {
			// throwIfInstanceIdIsUnreleased applies only when the member it
			// would replace speaks the consumer protocol too: a classic
			// static member is replaced at once (the rolling upgrade of a
			// static member; GMM.getOrMaybeSubscribeStaticConsumerGroupMember,
			// v8.0.0).
			if old != nil && old.epoch != protocol.StaticLeaveEpoch && old.classic == nil {
				return nil, protocol.UnreleasedInstanceID
			}
			if old == nil {
				return c.addMember(now, g, r, out)
			}
			// A new incarnation takes the old one's place, assignment and
			// target: no rebalance if the subscription is the same. The
			// old member id is gone (its record replaced): traced as a
			// fence (KIP-345's word for it) and the new id as added.
			prev := old.ID
			if r.MemberID != "" {
				old.ID = r.MemberID
			} else {
				old.ID = c.newID(r.InstanceID)
			}
			c.emit(out, g, protocol.Event{Kind: protocol.EvMemberRemoved, Peer: prev, Reason: protocol.RemovalFenced.String(), Removal: protocol.RemovalFenced, Gen: g.Epoch})
			c.emit(out, g, protocol.Event{Kind: protocol.EvMemberAdded, Peer: old.ID, Gen: g.Epoch})
			old.epoch, old.prevEpoch = 0, 0
			c.setOwners(g, old)
			return old, protocol.None
		}
		if old == nil {
			return nil, protocol.UnknownMemberID
		}
		if old.ID != r.MemberID {
			return nil, protocol.FencedInstanceID
		}
		return old, c.validateEpoch(old, r)
	}
	m := g.Member(r.MemberID)
	if m == nil {
		if r.MemberEpoch != protocol.JoinEpoch {
			return nil, protocol.UnknownMemberID
		}
		return c.addMember(now, g, r, out)
	}
	return m, c.validateEpoch(m, r)
}

// validateEpoch is GroupMetadataManager.throwIfMemberEpochIsInvalid (§2.11).
func (c *Coordinator) validateEpoch(m *Member, r *protocol.ConsumerGroupHeartbeatRequest) protocol.ErrorCode {
	e := r.MemberEpoch
	switch {
	case e == protocol.JoinEpoch && c.b.epochZeroAccepted:
		return protocol.None
	case e > m.epoch:
		return protocol.FencedMemberEpoch
	case e < m.epoch:
		if e != m.prevEpoch || (r.OwnedSent && !subset(r.Owned, m.assigned)) {
			return protocol.FencedMemberEpoch
		}
	}
	return protocol.None
}

func subset(a, b []protocol.TopicPartition) bool {
	for _, p := range a {
		if !contains(b, p) {
			return false
		}
	}
	return true
}

func (c *Coordinator) newID(base string) string {
	c.nextID++
	return base + "-" + strconv.Itoa(c.nextID)
}

// full is throwIfConsumerGroupIsFull: group.consumer.max.size reached and
// the member id (client-generated from 4.0, KIP-1082) not in the group. A
// static member restarting has a new member id, so before KAFKA-20601 a
// full group rejects it even though it replaces its old incarnation; from
// 4.4 an instance id already in the group passes (the replacement, or
// UNRELEASED_INSTANCE_ID, follows).
// Kafka: GroupMetadataManager.throwIfConsumerGroupIsFull @v8.0.0, @v8.3.0;
// 4.4 branch (e6919341bb, GroupMetadataManagerTest.
// testStaticMemberCanRejoinWhenConsumerGroupIsFull)
func (c *Coordinator) full(g *Group, memberID, instanceID string) bool {
	if c.b.staticRejoinWhenFull && instanceID != "" && g.static(instanceID) != nil {
		return false
	}
	return c.cfg.MaxSize > 0 && len(g.members) >= c.cfg.MaxSize && (memberID == "" || g.Member(memberID) == nil)
}

func (c *Coordinator) addMember(now protocol.Instant, g *Group, r *protocol.ConsumerGroupHeartbeatRequest, out *Output) (*Member, protocol.ErrorCode) {
	if c.cfg.MaxSize > 0 && len(g.members) >= c.cfg.MaxSize {
		return nil, protocol.GroupMaxSizeReached
	}
	id := r.MemberID
	if id == "" {
		base := r.InstanceID
		if base == "" {
			base = g.ID
		}
		id = c.newID(base)
	}
	return c.newMember(g, id, r.InstanceID, out), protocol.None
}

// bump is a group epoch bump (a group-epoch record), written with the
// subscription metadata of the group as it is now
// (GMM.updateSubscriptionMetadata, v8.0.0; the metadata hash in 4.1+).
func (c *Coordinator) bump(g *Group, out *Output, why string) {
	g.metadata = c.subscriptionMetadata(g)
	g.Epoch++
	c.wrote() // the group epoch record
	c.emit(out, g, protocol.Event{Kind: protocol.EvRebalanceStart, Reason: why, Gen: g.Epoch, Count: int32(len(g.members))})
}

// computeTarget is the TargetAssignmentBuilder run: the group's assignor
// (the members' most common ServerAssignor, else the first configured)
// over every member, in join order, with each member's subscription
// (assignTarget picks the homogeneous or heterogeneous path).
func (c *Coordinator) computeTarget(now protocol.Instant, g *Group, out *Output) {
	in := make([]assignInput, len(g.members))
	for i, m := range g.members {
		in[i] = assignInput{id: m.ID, instance: m.InstanceID, topics: m.Topics, prev: m.target}
	}
	c.chargeTarget() // the assignor runs on the shard's event loop (runtime.go)
	c.wrote()        // the target assignment records
	res := assignTarget(c.groupAssignor(g), in, c.subscriptionMetadata(g))
	for i, m := range g.members {
		m.target = res[i]
	}
	g.AssignmentEpoch, g.assignedAt, g.computedOnce = g.Epoch, now, true
	c.emit(out, g, protocol.Event{Kind: protocol.EvGenerationComplete, Gen: g.Epoch, Count: int32(len(g.members))})
}

// maybeRefreshMetadata is the metadata half of the heartbeat's group epoch
// step (GMM.consumerGroupHeartbeat → updateSubscriptionMetadata, v8.0.0;
// the same with computeMetadataHash in v8.3.0): when the group's metadata
// has expired, recompute its subscription metadata from the broker's
// metadata image and bump the group epoch if it changed — a topic a
// member subscribes to gained partitions, so the target is recomputed
// over them. A bump of this heartbeat (a subscription change) already
// wrote the new metadata, so it never bumps twice.
func (c *Coordinator) maybeRefreshMetadata(g *Group, out *Output) {
	if !g.metadataExpired {
		return
	}
	g.metadataExpired = false
	if !slices.Equal(c.subscriptionMetadata(g), g.metadata) {
		c.bump(g, out, "metadata")
	}
}

// AddPartitions raises topic's partition count in this broker's metadata
// image to n (kafka-topics.sh --alter --partitions; a KRaft topic delta)
// and requests a metadata refresh of every group subscribed to it
// (GMM.onNewMetadataImage → groupsSubscribedToTopic →
// ModernGroup.requestMetadataRefresh, v8.0.0 and v8.3.0): the group's
// epoch is bumped at its next heartbeat (maybeRefreshMetadata). Deviation:
// Java finds the groups by subscribed topic name, regular expressions
// included; subscriptions here are names only.
func (c *Coordinator) AddPartitions(topic string, n int32) {
	i := slices.IndexFunc(c.cfg.Topics, func(t assign.Topic) bool { return t.Name == topic })
	if i < 0 || c.cfg.Topics[i].Partitions >= n {
		return
	}
	c.cfg.Topics = slices.Clone(c.cfg.Topics) // the caller's slice may be shared
	c.cfg.Topics[i].Partitions = n
	for _, g := range c.groups {
		for _, m := range g.members {
			if slices.Contains(m.Topics, topic) {
				g.metadataExpired = true
				break
			}
		}
	}
}

// subscriptionMetadata is ConsumerGroup.computeSubscriptionMetadata
// (v8.0.0; 4.1+ keeps a hash of the same, computeMetadataHash): the
// topics of the metadata image some member subscribes to, with their
// partition counts, in configuration order. Racks are not modelled.
func (c *Coordinator) subscriptionMetadata(g *Group) []assign.Topic {
	var topics []assign.Topic
	for _, t := range c.cfg.Topics {
		for _, m := range g.members {
			if slices.Contains(m.Topics, t.Name) {
				topics = append(topics, t)
				break
			}
		}
	}
	return topics
}

func (c *Coordinator) groupAssignor(g *Group) string {
	best, bestN := c.cfg.Assignors[0], 0
	for _, name := range c.cfg.Assignors {
		n := 0
		for _, m := range g.members {
			if m.Assignor == name {
				n++
			}
		}
		if n > bestN {
			best, bestN = name, n
		}
	}
	return best
}

func (g *Group) ownerEpoch(p protocol.TopicPartition) int32 {
	if o, ok := g.owners[p]; ok {
		return o.epoch
	}
	return -1
}

// setAssignment replaces the member's assignment and currentPartitionEpoch
// entries (CG@4.3 L1085-1130).
func (c *Coordinator) setAssignment(g *Group, m *Member, next assignment, out *Output) {
	c.clearOwners(g, m)
	prev := m.state
	if !equalAssignment(m.assignment, next) {
		c.wrote() // the member's current assignment record
	}
	m.assignment = next
	c.setOwners(g, m)
	c.checkMember(g, m, out)
	c.checkStable(g, m, g.AssignmentEpoch, out)
	if prev != m.state {
		c.emit(out, g, protocol.Event{Kind: protocol.EvMemberState, Peer: m.ID, State: m.state.String(), Detail: prev.String(), Gen: m.epoch})
	}
}

func (c *Coordinator) clearOwners(g *Group, m *Member) {
	for _, l := range [][]protocol.TopicPartition{m.assigned, m.revoking} {
		for _, p := range l {
			if o, ok := g.owners[p]; ok && o.member == m.ID {
				delete(g.owners, p)
			}
		}
	}
}

func (c *Coordinator) setOwners(g *Group, m *Member) {
	for _, l := range [][]protocol.TopicPartition{m.assigned, m.revoking} {
		for _, p := range l {
			g.owners[p] = owner{member: m.ID, epoch: m.epoch}
		}
	}
}

// leave is the epoch −1 / −2 path (§2.10).
func (c *Coordinator) leave(now protocol.Instant, g *Group, r *protocol.ConsumerGroupHeartbeatRequest, out *Output) {
	if g == nil {
		c.respond(out, r.GroupID, protocol.UnknownMemberID, r.MemberID, r.MemberEpoch)
		return
	}
	if r.MemberEpoch == protocol.StaticLeaveEpoch {
		m := g.static(r.InstanceID)
		switch {
		case m == nil:
			c.respond(out, r.GroupID, protocol.UnknownMemberID, r.MemberID, r.MemberEpoch)
		case m.ID != r.MemberID:
			c.respond(out, r.GroupID, protocol.FencedInstanceID, r.MemberID, r.MemberEpoch)
		default:
			// Kept with epoch −2 and its partitions; no bump; the session
			// timer keeps running from the last regular heartbeat.
			c.clearOwners(g, m)
			m.epoch, m.revoking, m.rebalanceDL = protocol.StaticLeaveEpoch, nil, protocol.Never
			c.setOwners(g, m)
			c.respond(out, r.GroupID, protocol.None, m.ID, protocol.StaticLeaveEpoch)
		}
		return
	}
	m := g.Member(r.MemberID)
	if m == nil {
		c.respond(out, r.GroupID, protocol.UnknownMemberID, r.MemberID, r.MemberEpoch)
		return
	}
	c.fence(g, m, "leave", out)
	c.respond(out, r.GroupID, protocol.None, r.MemberID, protocol.LeaveEpoch)
}

// fence removes a member (session or rebalance expiry, leave): its
// partitions are free at once and the group epoch is bumped
// (GMM@4.3 L4326-4395) — or, if only classic members remain, the group is
// downgraded (fenceMembers).
func (c *Coordinator) fence(g *Group, m *Member, why string, out *Output) {
	c.fenceMembers(g, []*Member{m}, why, out)
}

// Tick fires the session and rebalance timers due at now, and a classic
// member's join and sync timers (migration.go).
func (c *Coordinator) Tick(now protocol.Instant, out *Output) {
	for gi := 0; gi < len(c.groups); gi++ {
		g := c.groups[gi]
		for i := 0; i < len(g.members); {
			m := g.members[i]
			why := ""
			switch {
			case m.sessionDeadline <= now:
				why = "session-expired"
			case m.rebalanceDL <= now && m.rebalanceEpoch == m.epoch:
				why = "rebalance-timeout"
			case m.rebalanceDL <= now:
				m.rebalanceDL = protocol.Never // armed at an older epoch: ignored (GMM L4768-4800)
			case m.classic != nil && m.classic.joinDL <= now:
				why = "join-timeout"
			case m.classic != nil && m.classic.syncDL <= now:
				why = "sync-timeout"
			}
			if why == "" {
				i++
				continue
			}
			c.fence(g, m, why, out)
			if out.Downgrade != nil && out.Downgrade.ID == g.ID {
				gi--
				break // the group became classic
			}
		}
	}
}

// NextDeadline is the earliest armed timer, or protocol.Never.
func (c *Coordinator) NextDeadline() protocol.Instant {
	d := protocol.Never
	for _, g := range c.groups {
		for _, m := range g.members {
			d = min(d, m.sessionDeadline, m.rebalanceDL)
			if m.classic != nil {
				d = min(d, m.classic.joinDL, m.classic.syncDL)
			}
		}
	}
	return d
}

// String summarises a group for tests and traces.
func (g *Group) String() string {
	return fmt.Sprintf("%s epoch %d target %d %v", g.ID, g.Epoch, g.AssignmentEpoch, g.State())
}
