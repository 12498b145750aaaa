package harness

import (
	"slices"
	"strconv"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/classic/client"
	cclient "github.com/rebalsim/rebalsim/model/consumer/client"
	ccoord "github.com/rebalsim/rebalsim/model/consumer/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// The consumer group protocol (KIP-848, group.protocol=consumer) in the
// world: a group whose cohorts set `client: {group.protocol: consumer}`
// runs its members as cclient.Process (the AsyncKafkaConsumer model) over
// the same simulated TCP network, and each broker serves
// ConsumerGroupHeartbeat from a ccoord.Coordinator living beside its
// classic coordinator. FindCoordinator is answered by the classic broker
// model (the same __consumer_offsets placement); failover, broker crashes
// and restarts move consumer groups as they move classic ones.
//
// Deviations (beside the models' own):
//   - Persistence: a consumer group's records are taken as written at once
//     (no append latency, no append errors); on failover the new coordinator
//     gets the group as it was, after coordinator.load.time, with fresh
//     session and rebalance timers (ccoord.Coordinator.Load).
//   - coordinator.request.time queues ConsumerGroupHeartbeat like any
//     request, but the consumer-group coordinator's own event-loop cost (the
//     assignor's run time) is not modelled.
//   - Online migration (kafka-consumer-protocol.md §4, migration.go): a
//     group's members may run either protocol (cohorts, or a rolling restart
//     with `set: {group.protocol: consumer}`). The group is a classic group
//     at the classic coordinator or a consumer group at the consumer-group
//     coordinator, never both; the harness hands it across on an upgrade
//     or a downgrade.

// memberProc is what a slot's process is: the classic client.Member or the
// consumer protocol's cclient.Process, each as it is. Both speak the shared
// network client's output (netclient.Output, which client.Output and
// cclient.ProcOutput name), so the harness calls either with no adapter:
// one shape per handler, as franz-go's kfake serves each request kind.
type memberProc interface {
	Start(now protocol.Instant, out *client.Output)
	Step(now protocol.Instant, broker int32, corr uint64, resp protocol.Response, out *client.Output)
	TickApp(now protocol.Instant, out *client.Output)
	TickHeartbeat(now protocol.Instant, out *client.Output)
	CatchUp(now protocol.Instant, includeNow bool)
	Connected(now protocol.Instant, broker int32, coord bool, out *client.Output)
	ConnectFailed(now protocol.Instant, broker int32, coord bool, out *client.Output)
	ConnectionClosed(now protocol.Instant, broker int32, coord bool, why string, out *client.Output)
	Pause(now protocol.Instant)
	Resume(now protocol.Instant)
	SlowPoll(now protocol.Instant, d time.Duration, out *client.Output)
	Close(now protocol.Instant, out *client.Output)
	Shutdown(now protocol.Instant, out *client.Output)
	Stopped() bool
	FatalError() protocol.ErrorCode
	NextAppDeadline() protocol.Instant
	NextHeartbeatDeadline() protocol.Instant
}

var (
	_ memberProc = (*client.Member)(nil)
	_ memberProc = (*cclient.Process)(nil)
)

// consumerState is the harness's state of a consumer group.
type consumerState struct {
	group *ccoord.Group // the group's records (nil until its first member joined, or while classic)
	// active: the group is a consumer group now (observers follow it as
	// one); pure: every member runs the consumer protocol, always (no
	// migration possible: the group never is a classic group).
	active, pure bool
	loadedAt     sim.Instant // the coordinator answers COORDINATOR_LOAD_IN_PROGRESS before
	state        string      // the last group state traced
}

// hasConsumerGroups reports whether any group entry runs the consumer
// protocol, or a rolling restart moves members to it.
func hasConsumerGroups(sc *scenario.Scenario) bool {
	for i := range sc.Groups {
		if sc.Groups[i].Consumer() {
			return true
		}
	}
	for i := range sc.Faults {
		if s := sc.Faults[i].Set; s != nil && s.GroupProtocol == scenario.ProtocolConsumer {
			return true
		}
	}
	return false
}

// groupProtocols reports whether any member of group id may run the
// consumer protocol and whether any may run the classic one.
func groupProtocols(sc *scenario.Scenario, id string) (consumer, classic bool) {
	for i := range sc.Groups {
		if sc.Groups[i].ID == id {
			if sc.Groups[i].Consumer() {
				consumer = true
			} else {
				classic = true
			}
		}
	}
	for i := range sc.Faults {
		if f := &sc.Faults[i]; f.Set != nil && f.Target == id {
			switch f.Set.GroupProtocol {
			case scenario.ProtocolConsumer:
				consumer = true
			case scenario.ProtocolClassic:
				classic = true
			}
		}
	}
	return consumer, classic
}

// newConsumerCoordinator makes broker b's consumer-group coordinator.
func (w *world) newConsumerCoordinator(b *broker) *ccoord.Coordinator {
	c := w.sc.Coordinator
	var topics []assign.Topic
	for _, t := range w.sc.Topics {
		n := int32(t.Partitions)
		if i := slices.IndexFunc(w.grown, func(g assign.Topic) bool { return g.Name == t.Name }); i >= 0 {
			n = w.grown[i].Partitions // grown by add-partitions before this broker (re)started
		}
		topics = append(topics, assign.Topic{Name: t.Name, Partitions: n})
	}
	maxSize := c.ConsumerMaxSize
	if maxSize >= 1<<31-1 {
		maxSize = 0
	}
	// The groups' configs (kafka-configs --entity-type groups), one per group id.
	var groupCfgs []ccoord.GroupConfig
	for _, g := range w.sc.Groups {
		if g.Cohort == 0 && g.Configs.Set() {
			groupCfgs = append(groupCfgs, ccoord.GroupConfig{ID: g.ID, SessionTimeout: g.Configs.SessionTimeout,
				HeartbeatInterval: g.Configs.HeartbeatInterval, AssignmentInterval: g.Configs.AssignmentInterval,
				AssignmentIntervalSet: g.Configs.AssignmentIntervalSet})
		}
	}
	cc, err := ccoord.New(ccoord.Config{
		Name:               b.name,
		Profile:            ccoord.Profile(c.ConsumerProfile),
		SessionTimeout:     c.ConsumerSessionTimeout,
		HeartbeatInterval:  c.ConsumerHeartbeatInterval,
		MaxSize:            maxSize,
		Assignors:          c.ConsumerAssignors,
		AssignmentInterval: c.ConsumerAssignmentInterval,
		MigrationPolicy:    c.ConsumerMigrationPolicy,
		ClassicMaxSize:     c.MaxSize,
		Topics:             topics,
		Groups:             groupCfgs,
		Costs: ccoord.Costs{AssignTime: c.ConsumerAssignTime, FirstTargetTime: c.ConsumerFirstTargetTime,
			AppendLatency: c.ConsumerAppendLatency, FirstAppendLatency: c.ConsumerFirstAppendLatency},
	})
	if err != nil {
		panic("harness: " + err.Error()) // the scenario layer validated the profile
	}
	return cc
}

// initConsumer sets up the consumer side of the world after newWorld built
// the classic one.
func (w *world) initConsumer() {
	if !hasConsumerGroups(w.sc) {
		return
	}
	for _, b := range w.brokers {
		b.cg = w.newConsumerCoordinator(b)
	}
	for _, g := range w.groups {
		if consumer, classic := groupProtocols(w.sc, g.id); consumer {
			g.cs = &consumerState{active: g.cohorts[0].sc.Consumer(), pure: !classic}
		}
	}
}

// newConsumerProcess is startProcess's member for a consumer-protocol slot.
func (w *world) newConsumerProcess(s *slot, c cohort) memberProc {
	g := c.sc
	id := s.name + "-" + strconv.Itoa(int(s.inc)) // the client-generated member id (KIP-1082)
	cfg := cclient.ProcessConfig{
		Member: cclient.Config{
			Name:            s.name,
			GroupID:         w.groups[s.group].id,
			MemberID:        id,
			Topics:          g.Subscribe,
			ServerAssignor:  s.remoteAssignor(g),
			MaxPollInterval: g.Client.MaxPollInterval,
			RetryBackoff:    g.Client.RetryBackoff,
			RetryBackoffMax: g.Client.RetryBackoffMax,
			// KAFKA-20332 (4.3.0): revocations start from poll() only.
			RevokeFromPollOnly: scenario.ProfileAtLeast(g.Client.Profile, 4, 3),
		},
		Brokers:               c.cfg.Brokers,
		RequestTimeout:        g.Client.RequestTimeout,
		ReconnectBackoff:      g.Client.ReconnectBackoff,
		ReconnectBackoffMax:   g.Client.ReconnectBackoffMax,
		SocketSetupTimeout:    g.Client.SocketSetupTimeout,
		SocketSetupTimeoutMax: g.Client.SocketSetupTimeoutMax,
		PollInterval:          c.cfg.PollInterval,
		PollTimeout:           c.cfg.PollTimeout,
		CallbackTime:          c.cfg.CallbackTime,
		AutoCommit:            g.Client.AutoCommit,
	}
	if g.Client.StaticMembership {
		cfg.Member.InstanceID = s.name
	}
	if w.watch.memberOf == nil {
		w.watch.memberOf = make(map[string]memberProcess)
	}
	w.watch.memberOf[id] = memberProcess{slot: s.id, inc: s.inc}
	return cclient.NewProcess(cfg, w.streams.Stream("member/"+s.name+"/"+strconv.Itoa(int(s.inc))))
}

// consumerSettled notes a consumer member that reached STABLE at its epoch
// (the metrics' "settled": reconciled to its target).
func (w *world) consumerSettled(s *slot) {
	m := s.cp().Member()
	if m.State() == cclient.Stable && s.settledGen != m.Epoch() {
		w.watch.settle(s, m.Epoch())
	}
}

// serveConsumer handles a ConsumerGroupHeartbeat at broker b.
func (w *world) serveConsumer(now sim.Instant, b *broker, env *envelope, r *protocol.ConsumerGroupHeartbeatRequest) {
	var resp *protocol.ConsumerGroupHeartbeatResponse
	replyAt := now // the coordinator's answer instant (out.ReplyAt)
	g := w.groupByID(r.GroupID)
	switch {
	case b.cg == nil || g == nil || g.cs == nil:
		// A group the scenario does not run as a consumer group.
		resp = &protocol.ConsumerGroupHeartbeatResponse{Error: protocol.GroupIDNotFound, MemberID: r.MemberID}
	case g.coord != int32(b.node):
		resp = &protocol.ConsumerGroupHeartbeatResponse{Error: protocol.NotCoordinator, MemberID: r.MemberID}
	case now < g.cs.loadedAt:
		resp = &protocol.ConsumerGroupHeartbeatResponse{Error: protocol.CoordinatorLoadInProgress, MemberID: r.MemberID}
	default:
		if code := w.maybeUpgrade(now, b, g, r); code != protocol.None {
			resp = &protocol.ConsumerGroupHeartbeatResponse{Error: code, MemberID: r.MemberID}
			break
		}
		var out ccoord.Output
		b.cg.Heartbeat(now, r, &out)
		w.flushConsumerCoord(b, &out)
		resp, replyAt = out.Resp, out.ReplyAt
	}
	reply := envelope{conn: env.conn, corr: env.corr, broker: int32(b.node), resp: resp}
	if replyAt > now {
		// Answered when the runtime answers it (the coordinator's costs:
		// its event loop, its records' commit).
		d := sim.Delivery[envelope]{Msg: reply}
		w.q.Schedule(replyAt, ev{kind: evReply, idx: int32(b.node), inc: b.epoch, di: w.putDel(&d)})
	} else {
		b.answer(w, now, reply)
	}
	w.rearm(&b.timer, w.brokerDeadline(b), ev{kind: evBrokerTick, idx: int32(b.node)})
}

// serveConsumerCommit answers an OffsetCommit from a consumer member
// (kafka-consumer-protocol.md §2.12, ≤4.2 rules: the member epoch must be
// the stored one, else STALE_MEMBER_EPOCH; an unknown member gets
// UNKNOWN_MEMBER_ID). Deviations: the offsets are not stored and the
// answer does not wait for an append (no append latency); 4.3's
// per-partition acceptance of older epochs (KIP-1251) is not modelled.
func (w *world) serveConsumerCommit(now sim.Instant, b *broker, env *envelope, r *protocol.OffsetCommitRequest) {
	g := w.groupByID(r.GroupID)
	code := protocol.None
	switch {
	case g.coord != int32(b.node):
		code = protocol.NotCoordinator
	case now < g.cs.loadedAt:
		code = protocol.CoordinatorLoadInProgress
	default:
		var m *ccoord.Member
		if cg := b.cg.Group(r.GroupID); cg != nil {
			m = cg.Member(r.MemberID)
		}
		switch {
		case m == nil:
			code = protocol.UnknownMemberID
		case m.Classic() && m.Epoch() != r.GenerationID:
			// A classic member's generation is its member epoch
			// (kafka-consumer-protocol.md §4.2).
			code = protocol.IllegalGeneration
		case m.Epoch() != r.GenerationID:
			code = protocol.StaleMemberEpoch
		}
	}
	b.answer(w, now, envelope{conn: env.conn, corr: env.corr, broker: int32(b.node), resp: &protocol.OffsetCommitResponse{Error: code}})
}

// flushConsumerCoord traces what the consumer-group coordinator did and
// the group state changes it made.
func (w *world) flushConsumerCoord(b *broker, out *ccoord.Output) {
	for i := range out.Events {
		if e := &out.Events[i]; e.Kind == protocol.EvMemberAdded {
			if owner, ok := w.watch.memberOf[e.Peer]; ok {
				e.Detail = w.slots[owner.slot].name // the process, as the classic coordinator names it
			}
		}
		w.emitModel(&out.Events[i], 0)
	}
	if out.Downgrade != nil {
		w.handleDowngrade(b, out.Downgrade)
		out.Downgrade = nil
		w.flushBroker(b)
	}
	for _, g := range w.groups {
		if g.cs == nil || g.coord != int32(b.node) {
			continue
		}
		cg := b.cg.Group(g.id)
		if cg == nil {
			continue
		}
		g.cs.group = cg
		if st := cg.State().String(); st != g.cs.state {
			prev := g.cs.state
			g.cs.state = st
			w.tev = TraceEvent{At: w.q.Now(), Event: protocol.Event{Kind: protocol.EvGroupState, Node: b.name, Group: g.id, State: st, Detail: prev, Gen: cg.Epoch}}
			protocol.TypeText(&w.tev.Event)
			w.emit(&w.tev)
		}
	}
}

// tickConsumer fires the consumer-group coordinator's timers.
func (w *world) tickConsumer(b *broker, now sim.Instant) {
	if b.cg == nil {
		return
	}
	var out ccoord.Output
	b.cg.Tick(now, &out)
	w.flushConsumerCoord(b, &out)
}

// brokerDeadline is the broker's next timer: the classic coordinator's or
// the consumer-group coordinator's.
func (w *world) brokerDeadline(b *broker) protocol.Instant {
	d := b.b.NextDeadline()
	if b.cg != nil {
		d = min(d, b.cg.NextDeadline())
	}
	return d
}

// electConsumer moves a consumer group's records to its new coordinator nb,
// which serves it after load.time.
func (w *world) electConsumer(g *groupState, nb *broker) {
	if g.cs == nil {
		return
	}
	for _, b := range w.brokers {
		if b.cg != nil {
			b.cg.Unload(g.id)
		}
	}
	now := w.q.Now()
	g.cs.loadedAt = now.Add(w.sc.Coordinator.LoadTime)
	if g.cs.group != nil {
		nb.cg.Load(g.cs.loadedAt, g.cs.group)
		// The new coordinator reports the group's state as loaded (the
		// oracles saw it Dead with its old broker).
		g.cs.state = ""
		w.flushConsumerCoord(nb, &ccoord.Output{})
	}
	w.rearm(&nb.timer, w.brokerDeadline(nb), ev{kind: evBrokerTick, idx: int32(nb.node)})
}

// restartConsumer gives a restarted broker a fresh consumer-group
// coordinator (its groups moved away when it was fenced).
func (w *world) restartConsumer(b *broker) {
	if b.cg == nil {
		return
	}
	prev := b.cg
	b.cg = w.newConsumerCoordinator(b)
	b.cg.ContinueIDs(prev)
}

// exclusiveOwnerChecker is the consumer protocol's promise
// (kafka-consumer-protocol.md §7): no partition is owned by two members at
// any instant — a partition goes to its new owner only after the previous
// owner released it. It watches the consumer groups' ownership after every
// assignment; two live processes owning one partition is a violation
// unless one of them is a zombie: a member the coordinator has already
// removed (fenced, its session expired) that has not heard it yet — the
// protocol lets it go on processing until it learns (§3.6: it keeps
// fetching while it cannot reach the coordinator).
type exclusiveOwnerChecker struct{}

func (c *exclusiveOwnerChecker) name() string { return "exclusive-ownership" }

func (c *exclusiveOwnerChecker) check(v runView, e *TraceEvent) string {
	i, ok := e.Member()
	if e.Kind != protocol.EvAssigned || !ok || !v.sharedOwnership(i) {
		return ""
	}
	for _, tp := range e.Partitions {
		if holders := v.holders(i, tp); len(holders) > 1 {
			return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) + " owned at once by " + holders[0] + " and " + holders[1] + ", both members the coordinator gave it to"
		}
	}
	return ""
}

func (c *exclusiveOwnerChecker) final(runView) string { return "" }

// brokerBelieves reports whether the group's coordinator has tp in the
// slot's member's assigned or pending-revocation partitions.
func (w *world) brokerBelieves(g *groupState, s *slot, tp protocol.TopicPartition) bool {
	if g.cs == nil || g.cs.group == nil {
		return false
	}
	var m *ccoord.Member
	if s.cp() != nil {
		m = g.cs.group.Member(s.cp().Member().ID())
	} else {
		// A classic member: its id is the one the coordinator gave this
		// process (noteMemberIDs).
		for _, x := range g.cs.group.Members() {
			if o, ok := w.watch.memberOf[x.ID]; ok && o.slot == s.id && o.inc == s.inc && x.Classic() {
				m = x
				break
			}
		}
	}
	if m == nil {
		return false
	}
	return slicesContains(m.Assigned(), tp) || slicesContains(m.Revoking(), tp)
}

func slicesContains(l []protocol.TopicPartition, tp protocol.TopicPartition) bool {
	for _, x := range l {
		if x == tp {
			return true
		}
	}
	return false
}

// consumerMembers lists the member ids of a consumer group at its
// coordinator now (for the oracles), in join order.
func (w *world) consumerMembers(g *groupState) []string {
	b := w.brokers[g.coord]
	if b.cg == nil {
		return nil
	}
	cg := b.cg.Group(g.id)
	if cg == nil {
		return nil
	}
	var ids []string
	for _, m := range cg.Members() {
		ids = append(ids, m.ID)
	}
	return ids
}
