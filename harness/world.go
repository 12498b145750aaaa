package harness

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/classic/client"
	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	cclient "github.com/rebalsim/rebalsim/model/consumer/client"
	ccoord "github.com/rebalsim/rebalsim/model/consumer/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// evKind is the kind of a queue event.
type evKind uint8

const (
	evDeliver    evKind = iota // a network delivery comes due
	evAppTick                  // a member's application-thread deadline
	evHBTick                   // a member's heartbeat-thread deadline
	evBrokerTick               // a broker's next deadline
	evStart                    // a member process starts
	evFault                    // a fault (index into world.faults) starts
	evFaultEnd                 // a fault's window ends
	evResume                   // a paused member resumes
	evServe                    // a broker finishes serving a queued request (coordinator.request.time)
	evFence                    // the controller fences a dead broker (coordinator.failover.delay)
	evReply                    // a consumer-group coordinator's deferred answer leaves (consumer.go)
)

// ev is one queue event. idx is a member slot, broker or fault index; inc is
// the member's process incarnation (stale ticks for a dead process are
// ignored). A network delivery (evDeliver, evServe) is kept in the world's
// delivery table (world.dels) under di; an evDeliver's endpoints are copied
// here for the tie-break, in idx (from) and inc (to): the queue's slots
// hold an ev of payload (evSize) instead of a whole Delivery, so sifting and
// firing touch less memory (a queue slot is a pointer and an ev: evSize).
type ev struct {
	kind evKind
	idx  int32
	inc  uint32
	di   uint32
}

// evSize is ev's size: a queue slot is a pointer and an ev, 24 bytes, and
// the queue holds a few events per member; change it deliberately.
const evSize = 16

var _ [evSize - unsafe.Sizeof(ev{})]struct{} // fails to compile if ev grows

// deliverySize is the size of an entry of the delivery table (world.dels),
// one per message in flight.
const deliverySize = 96

var _ [deliverySize - unsafe.Sizeof(sim.Delivery[envelope]{})]struct{} // fails to compile if a Delivery grows

// deliverEv is the queue event of delivery d stored at di.
func deliverEv(d *sim.Delivery[envelope], di uint32) ev {
	return ev{kind: evDeliver, idx: int32(d.From), inc: uint32(d.To), di: di}
}

// to is an evDeliver's receiving node.
func (e *ev) to() sim.NodeID { return sim.NodeID(e.inc) }

// putDel stores a delivery for a queue event and returns its index.
func (w *world) putDel(d *sim.Delivery[envelope]) uint32 {
	if n := len(w.delFree); n > 0 {
		i := w.delFree[n-1]
		w.delFree = w.delFree[:n-1]
		w.dels[i] = *d
		return i
	}
	w.dels = append(w.dels, *d)
	return uint32(len(w.dels) - 1)
}

// takeDel moves the delivery of a fired queue event from the table to d.
// (d is the caller's: a Delivery (deliverySize) is copied once, not
// returned and passed on by value, which measured slower.)
func (w *world) takeDel(i uint32, d *sim.Delivery[envelope]) {
	*d = w.dels[i]
	w.dels[i] = sim.Delivery[envelope]{}
	w.delFree = append(w.delFree, i)
}

// scheduleDelivery schedules a network event (sim.Network's scheduler).
func (w *world) scheduleDelivery(d sim.Delivery[envelope]) {
	w.q.Schedule(d.At, deliverEv(&d, w.putDel(&d)))
}

// evIdentity names who an event is for and what it is, for the queue's
// seeded tie-break (sim.Queue.SetKeyer): simultaneous events are ordered by a
// hash of the seed and this identity, so the interleaving of two members'
// events does not depend on how many other events exist. Deliveries on one
// connection direction share an identity, so they keep their FIFO order.
func evIdentity(_ sim.Instant, e ev) uint64 {
	id := uint64(e.kind) << 56
	if e.kind == evDeliver { // idx, inc: the endpoints from, to
		return id ^ (uint64(uint32(e.idx))<<32 | uint64(e.inc))
	}
	return id | uint64(uint32(e.idx))<<16
}

// envelopeBytes is a message's estimated size on the wire.
func envelopeBytes(e envelope) int {
	if e.req != nil {
		return protocol.RequestBytes(e.req)
	}
	return protocol.ResponseBytes(e.resp)
}

// envelope is what travels on the simulated network (envelopeSize: the two
// 4-byte fields side by side; one per message in flight).
type envelope struct {
	conn   coordinator.Conn // the TCP connection's id (world.conns)
	broker int32
	corr   uint64
	req    protocol.Request
	resp   protocol.Response
}

// envelopeSize is envelope's size on 64-bit platforms.
const envelopeSize = 48

var _ [envelopeSize - unsafe.Sizeof(envelope{})]struct{} // fails to compile if envelope grows

// Channels of a member's connections to one broker: the ordinary one
// (FindCoordinator) and the coordinator connection (node id
// Integer.MAX_VALUE − broker id).
const (
	chNode  uint8 = 0
	chCoord uint8 = 1
)

func chOf(coord bool) uint8 {
	if coord {
		return chCoord
	}
	return chNode
}

// connInfo is one TCP connection a member process opened: the broker model
// answers on its Conn id, and the reply goes back on it only while it is
// the same connection (epoch).
//
// connInfoSize: the broker it goes to, never read, is not kept, and the
// channel is the top bit of the incarnation (the table holds two ids per
// member process ever started).
type connInfo struct {
	slot  int32
	epoch uint32
	incCh uint32 // the slot's process incarnation that opened it (observe.go), and the channel in bit 31
}

// connInfoSize is connInfo's size: world.conns holds two per member
// process ever started.
const connInfoSize = 12

var _ [connInfoSize - unsafe.Sizeof(connInfo{})]struct{} // fails to compile if connInfo grows

func newConnInfo(slot int32, epoch, inc uint32, ch uint8) connInfo {
	if inc>>31 != 0 || ch > 1 {
		panic("harness: connInfo: incarnation or channel out of range")
	}
	return connInfo{slot: slot, epoch: epoch, incCh: inc | uint32(ch)<<31}
}

// inc is the incarnation of the slot's process that opened the connection.
func (c connInfo) inc() uint32 { return c.incCh &^ (1 << 31) }

// ch is the connection's channel (chNode, chCoord).
func (c connInfo) ch() uint8 { return uint8(c.incCh >> 31) }

// link is a member process's current connection to a broker on a channel.
type link struct {
	broker int32
	ch     uint8
	conn   coordinator.Conn
}

// held is a message (outcome sim.Deliver) or a connection event that
// reached a paused process.
type held struct {
	outcome sim.Outcome
	d       sim.Delivery[envelope]
	broker  int32
	coord   bool
	why     string
}

// slot is one member position in a group ("payments-3"). Its process may
// crash and restart; each incarnation gets a new client.Member and a new
// connection id.
type slot struct {
	id     int32 // index in world.slots
	node   sim.NodeID
	name   string
	group  int32 // index in world.groups
	cohort int32 // index in the group's cohorts: whose client config and workload the process runs
	inc    uint32
	alive  bool // a process exists (started, not crashed, not closed)
	paused bool
	m      memberProc // the process's member: *client.Member, or *cclient.Process (consumer.go)
	// links are the process's connections (newest per broker and
	// channel): the first two here (a used one has a non-zero conn), any
	// more in rare.more (a member that followed its coordinator); see
	// link, setLink, allLinks.
	links [2]link
	app   sim.Timer
	hb    sim.Timer
	// rare is what few slots ever need (nil until then).
	rare *slotRare
	// spinWin is the spin guard's count (world.spinning).
	spinWin uint64
	// slotMetrics is what the watchers (metrics.go, observe.go) keep of
	// the slot's processes; the fields above are the process's wiring.
	slotMetrics
	// slotSize bounds the whole: mind the padding when adding fields.
}

// slotSize is slot's size on 64-bit platforms, a Go size class: the
// per-member budget of the engine (its wiring, and the slotMetrics the
// watcher keeps), which keeps a 100,000-member run in memory; change it
// deliberately.
const slotSize = 176

var _ [slotSize - unsafe.Sizeof(slot{})]struct{} // fails to compile if slot grows

// slotRare is the part of a slot that few slots ever use.
type slotRare struct {
	buf  []held // what arrived while paused
	more []link // links beyond the slot's two
	// set is the client change a rolling restart's `set:` made for this
	// slot's later processes (migration.go); nil: the cohort's config.
	set *scenario.ClientChange
	// startAfterClose: a rolling restart's start step came while the old
	// process was still inside close(); the new one starts when it ends.
	startAfterClose bool
}

// rareState is s.rare, made on first use.
func (s *slot) rareState() *slotRare {
	if s.rare == nil {
		s.rare = &slotRare{}
	}
	return s.rare
}

// clientChange is s's rolling-restart client change (nil: none).
func (s *slot) clientChange() *scenario.ClientChange {
	if s.rare == nil {
		return nil
	}
	return s.rare.set
}

// allLinks are the process's links, in the order they were added.
func (s *slot) allLinks() iter.Seq[link] {
	return func(yield func(link) bool) {
		for _, l := range s.links {
			if l.conn == 0 || !yield(l) {
				return
			}
		}
		if s.rare != nil {
			for _, l := range s.rare.more {
				if !yield(l) {
					return
				}
			}
		}
	}
}

// setLink makes conn the process's connection to broker on ch.
func (s *slot) setLink(broker int32, ch uint8, conn coordinator.Conn) {
	for i := range s.links {
		if l := &s.links[i]; l.conn == 0 || (l.broker == broker && l.ch == ch) {
			*l = link{broker: broker, ch: ch, conn: conn}
			return
		}
	}
	r := s.rareState()
	for i := range r.more {
		if r.more[i].broker == broker && r.more[i].ch == ch {
			r.more[i].conn = conn
			return
		}
	}
	r.more = append(r.more, link{broker: broker, ch: ch, conn: conn})
}

// clearProcess forgets the process's links and what it was holding.
func (s *slot) clearProcess() {
	s.links = [2]link{}
	if s.rare != nil {
		s.rare.buf = s.rare.buf[:0]
		s.rare.more = s.rare.more[:0]
	}
}

// cp is the slot's consumer-protocol process (m's), or nil when the slot
// runs the classic protocol or no process yet.
func (s *slot) cp() *cclient.Process {
	p, _ := s.m.(*cclient.Process)
	return p
}

// slotMetrics is the measuring half of a slot: what the metrics and the
// observation classifier know of its processes. Nothing in it drives the
// simulation.
type slotMetrics struct {
	aliveSince sim.Instant // when the current process started (aliveSeconds)
	owned      []protocol.TopicPartition
	settledGen int32                // generation at which the member last completed onJoinComplete while STABLE; -1 none
	coordSeen  int32                // broker the client last found as coordinator; -1 none
	leaveInc   uint32               // incarnation of lastLeave
	lastLeave  protocol.LeaveReason // the last maybeLeaveGroup's reason, of incarnation leaveInc (classifyRemoval)
	confirmed  bool                 // answered by the new coordinator since a failover
}

// slotMetricsSize is slotMetrics' share of slotSize.
const slotMetricsSize = 48

var _ [slotMetricsSize - unsafe.Sizeof(slotMetrics{})]struct{} // fails to compile if slotMetrics grows

type broker struct {
	name   string
	node   sim.NodeID
	b      *coordinator.Broker
	cg     *ccoord.Coordinator // consumer groups (consumer.go); nil when no group runs the consumer protocol
	cfg    coordinator.Config
	down   bool   // the broker process is not running (crash or host down)
	epoch  uint32 // deaths so far
	fenced uint32 // the death whose fencing was done
	timer  sim.Timer
	// service, when set, is the time to serve one request
	// (coordinator.request.time); busyUntil is when the broker is free.
	service   sim.Dist
	rng       *rand.Rand
	busyUntil sim.Instant
	// mute: the broker reads one request at a time per connection (mute.go).
	mute connMutes
}

// world is one simulated world built from a scenario for one seed.
type world struct {
	// phaseNotes: what realistic timing drew for the faults
	// (Summary.FaultPhaseWindows).
	phaseNotes []string
	sc         *scenario.Scenario
	seed       uint64
	streams    sim.Streams
	q          *sim.Queue[ev]
	net        *sim.Network[envelope]
	brokers    []*broker
	slots      []*slot
	groups     []*groupState
	conns      []connInfo // conn id → the connection (ids never reused)
	// dels holds the deliveries of pending evDeliver and evServe events
	// and the answers of pending evReply events (ev.di), delFree its free
	// entries. Its size is the run's peak. In
	// the steady state the pending deliveries come in bursts of up to
	// about one a member, every few seconds (measured in a 1,000-member
	// run: the members' timers start together at a rebalance), so a table
	// that released its empty part between bursts allocates it again at
	// each one (tried: 130 MB allocated per 1,000-member hour).
	dels      []sim.Delivery[envelope]
	delFree   []uint32
	faults    []scenario.Fault
	rec       *recorder
	cout      client.Output
	bout      coordinator.Output
	tev       TraceEvent
	checks    []checker
	view      runView // what the checkers see of the world (view.go)
	viol      []Violation
	instant   sim.Instant // the instant being fired and how many events it had (livelock guard)
	atInstant int
	// watch computes the figures and observations from the trace
	// (metrics.go, observe.go).
	watch watcher
	// ext holds the fault extensions' state (faults.go, filter.go).
	ext faultExt
	// maxEvents and each slot's spinWin keep every run finite (limits.go).
	maxEvents int64
	// grown is every topic an add-partitions fault grew, at its current
	// count (faults.go addPartitions): a consumer-group coordinator made
	// later (a broker restart) starts from it.
	grown []assign.Topic
}

// groupState is the harness's view of one group (one distinct group id,
// all its cohorts): where its coordinator is, the last persisted record, and
// metric accumulators.
type groupState struct {
	id         string
	cohorts    []cohort // the group's `groups:` entries, in file order
	members    int      // initial members over all cohorts (join faults add more)
	coord      int32    // current coordinator broker
	record     *coordinator.GroupRecord
	slots      []int32 // slot indexes, in member-index order
	joins      int     // join faults applied so far
	partitions []partRun
	nparts     int
	m          *groupMetrics
	cs         *consumerState // the consumer protocol's state (consumer.go); nil for a classic group
	// cluster is the group's topic metadata when an add-partitions fault
	// changes one of its topics (faults.go addPartitions); nil otherwise,
	// and then the clients never refresh metadata.
	cluster *client.Cluster
}

// partRun is partitions first..first+n-1 of topic: a group keeps its
// partition list (groupState.partitions, nparts in all; partitionList) as
// runs, one partRun a topic (partRunSize), not a TopicPartition (as large)
// a partition: a 100,000-partition group's list is a few runs, not 2.4 MB.
type partRun struct {
	topic    string
	first, n int32
}

// partRunSize is partRun's size on 64-bit platforms.
const partRunSize = 24

var _ [partRunSize - unsafe.Sizeof(partRun{})]struct{} // fails to compile if partRun grows

// addPartitions appends partitions first..first+n-1 of topic to the group's
// partition list.
func (g *groupState) addPartitions(topic string, first, n int32) {
	if n > 0 {
		g.partitions = append(g.partitions, partRun{topic: topic, first: first, n: n})
		g.nparts += int(n)
	}
}

// partitionList is the group's partitions, in order: every subscribed
// topic's 0..n-1 in order of first subscription, then any an add-partitions
// fault added. A new slice at each call.
func (g *groupState) partitionList() []protocol.TopicPartition {
	out := make([]protocol.TopicPartition, 0, g.nparts)
	for _, r := range g.partitions {
		for p := r.first; p < r.first+r.n; p++ {
			out = append(out, protocol.TopicPartition{Topic: r.topic, Partition: p})
		}
	}
	return out
}

// cohort is one `groups:` entry of a group: its members' client
// configuration (without name and instance id) and workload.
type cohort struct {
	sc  *scenario.Group
	cfg *client.Config
	// tmpl is cfg prepared once for the classic members of the cohort
	// (client.Template: one copy of the configuration, not one per
	// member); built at the first start.
	tmpl *client.Template
}

const connBase = 1

func newWorld(sc *scenario.Scenario, seed uint64, opts Options) (*world, error) {
	w := &world{sc: sc, seed: seed, streams: sim.NewStreams(seed)}
	w.q = sim.NewQueue[ev]()
	w.q.SetKeyer(seed, evIdentity)
	w.net = sim.NewNetwork[envelope](w.streams.Stream("network"), toSimDist(sc.Network.Latency), sc.Network.Loss)
	w.net.SetScheduler(w.scheduleDelivery)
	w.setLoss(sc.Network.Loss, sc.Network.LossToBroker)
	if sc.Network.BandwidthBytesPerSecond > 0 {
		w.net.SetBandwidth(sc.Network.BandwidthBytesPerSecond, envelopeBytes)
	}
	w.rec = newRecorder(opts.TraceJSONL, opts.KeepTrace, opts.Observe)
	w.faults = expandFaults(sc, seed) // a copy: faults are resolved in place while running

	cprof, err := coordinator.ParseProfile(sc.Coordinator.Profile)
	if err != nil {
		return nil, fmt.Errorf("coordinator.profile: %w", err)
	}
	brokerIDs := make([]int32, sc.Coordinator.Brokers)
	for i := range brokerIDs {
		brokerIDs[i] = int32(i)
	}
	for i := 0; i < sc.Coordinator.Brokers; i++ {
		name := "broker-" + strconv.Itoa(i)
		br := &broker{name: name, node: sim.NodeID(i)}
		if d := sc.Coordinator.RequestTime; d.Kind != scenario.DistConstant || d.Value > 0 {
			br.service = toSimDist(d)
			br.rng = w.streams.Stream("broker/" + name + "/service")
		}
		w.brokers = append(w.brokers, br)
		br.cfg = coordinator.Config{
			BrokerID:               int32(i),
			Name:                   name,
			Profile:                cprof,
			InitialRebalanceDelay:  sc.Coordinator.InitialRebalanceDelay,
			MinSessionTimeout:      sc.Coordinator.MinSessionTimeout,
			MaxSessionTimeout:      sc.Coordinator.MaxSessionTimeout,
			MaxSize:                sc.Coordinator.MaxSize,
			NewMemberJoinTimeout:   5 * time.Minute,
			AppendLatency:          toSimDist(sc.Coordinator.AppendLatency),
			AppendBytesPerSecond:   sc.Coordinator.AppendBandwidth,
			AppendTimeout:          sc.Coordinator.OffsetsCommitTimeout,
			AppendLinger:           sc.Coordinator.AppendLinger,
			AppendErrorProbability: sc.Coordinator.AppendErrorProbability,
			AppendError:            errorByName(sc.Coordinator.AppendError),
			Rand:                   w.streams.Stream("broker/" + name + "/append"),
		}
		br.b = coordinator.NewBroker(br.cfg)
	}
	topics := map[string]int{}
	for _, t := range sc.Topics {
		topics[t.Name] = t.Partitions
	}
	w.conns = make([]connInfo, connBase) // conn 0 unused
	for _, id := range sc.GroupIDs() {
		entries := sc.Cohorts(id)
		gs := &groupState{id: id, coord: coordinatorFor(id, sc.Coordinator.Brokers)}
		// The group's partitions: every topic any cohort subscribes to, in
		// order of first appearance (cohort 0's subscription first).
		var subscribed []string
		var meta []assign.Topic
		for _, g := range entries {
			gs.members += g.Members
			for _, name := range g.Subscribe {
				if slices.Contains(subscribed, name) {
					continue
				}
				subscribed = append(subscribed, name)
				n := topics[name]
				meta = append(meta, assign.Topic{Name: name, Partitions: int32(n)})
				gs.addPartitions(name, 0, int32(n))
			}
		}
		gs.m = newGroupMetrics(gs.nparts)
		for _, f := range sc.Faults {
			if f.Kind == scenario.FaultAddPartitions && slices.Contains(subscribed, f.Target) {
				gs.cluster = &client.Cluster{Topics: slices.Clone(meta)}
				break
			}
		}
		w.groups = append(w.groups, gs)
		for _, b := range w.brokers {
			b.b.SetCoordinator(id, gs.coord)
		}
		w.brokers[gs.coord].b.Elect(0, id, 0, nil, &w.bout)
		w.flushBroker(w.brokers[gs.coord])
		joins := 0
		for _, f := range sc.Faults {
			if f.Kind == scenario.FaultJoin && f.Target == id {
				joins++
			}
		}
		for _, g := range entries {
			cprofile, err := client.ParseProfile(g.Client.Profile)
			if err != nil {
				return nil, fmt.Errorf("groups[%d].client.profile: %w", entryIndex(sc, g), err)
			}
			// One client configuration per cohort; each process gets a
			// copy with its own name (and instance id) when it starts.
			// Metadata covers every topic of the group, whichever
			// cohort's member leads. Deviation: a Java leader whose own
			// subscription lacks a topic other members subscribe to fetches
			// its metadata first (ConsumerCoordinator.performAssignment →
			// updateGroupSubscription, a metadata update, and a rejoin when
			// the snapshot changed); here it has it from the start.
			cfg := &client.Config{
				GroupID:            id,
				Topics:             g.Subscribe,
				Metadata:           client.Metadata{Topics: meta, Cluster: gs.cluster, MaxAge: g.Client.MetadataMaxAge},
				Brokers:            brokerIDs,
				Profile:            cprofile,
				SessionTimeout:     g.Client.SessionTimeout,
				HeartbeatInterval:  g.Client.HeartbeatInterval,
				MaxPollInterval:    g.Client.MaxPollInterval,
				RetryBackoff:       g.Client.RetryBackoff,
				RetryBackoffMax:    g.Client.RetryBackoffMax,
				RequestTimeout:     g.Client.RequestTimeout,
				Assignors:          g.Client.Assignors,
				AutoCommit:         g.Client.AutoCommit,
				AutoCommitInterval: g.Client.AutoCommitInterval,
				PollInterval:       pollDist(g.Workload.PollInterval), // at least MinPollCost (limits.go)
				PollTimeout:        pollDist(g.Workload.PollTimeout),
				AssignTime:         toSimDist(g.Workload.AssignTime),
				CallbackTime:       toSimDist(g.Workload.CallbackTime),
				Sim: client.SimOptions{EagerPolls: opts.EagerPolls, HeartbeatWakeCadence: !opts.ExactHeartbeatDeadlines,
					WaitOvershoot: g.HeartbeatWaitOvershoot(sc.Timing)},
				ReconnectBackoff:      g.Client.ReconnectBackoff,
				ReconnectBackoffMax:   g.Client.ReconnectBackoffMax,
				SocketSetupTimeout:    g.Client.SocketSetupTimeout,
				SocketSetupTimeoutMax: g.Client.SocketSetupTimeoutMax,
			}
			gs.cohorts = append(gs.cohorts, cohort{sc: g, cfg: cfg})
		}
		gi := len(w.groups) - 1
		last := len(gs.cohorts) - 1
		newSlot := func(ci, i int) *slot {
			s := &slot{id: int32(len(w.slots)), name: id + "-" + strconv.Itoa(i), group: int32(gi), cohort: int32(ci), slotMetrics: slotMetrics{settledGen: -1, coordSeen: -1}}
			s.node = sim.NodeID(len(w.brokers) + len(w.slots))
			gs.slots = append(gs.slots, int32(len(w.slots)))
			w.slots = append(w.slots, s)
			return s
		}
		for ci, c := range gs.cohorts {
			g := c.sc
			for i := 0; i < g.Members; i++ { // member i of the cohort starts at at + i*stagger
				s := newSlot(ci, g.FirstIndex+i)
				at := sim.Instant(g.Start.At + time.Duration(i)*g.Start.Stagger)
				if !g.Start.Exact {
					at += w.phase("timing/start/"+s.name, sc.HeartbeatInterval(g))
				}
				w.q.Schedule(at, ev{kind: evStart, idx: s.id})
			}
		}
		for i := 0; i < joins; i++ { // members join faults add: the last cohort's
			newSlot(last, gs.members+i)
		}
	}
	w.jitterFaults()
	for i := range w.faults {
		w.q.Schedule(sim.Instant(w.faults[i].At), ev{kind: evFault, idx: int32(i)})
	}
	first := sim.Never
	for _, f := range w.faults {
		first = min(first, sim.Instant(f.At))
	}
	for _, g := range w.groups {
		g.m.firstFault = first
		g.m.from = sim.Instant(sc.MeasureFrom)
	}
	w.initConsumer()
	w.checks, w.view = newCheckers(w.sc), worldView{w}
	w.watch = watcher{slots: w.slots, groups: w.groups, brokers: w.brokers, q: w.q, rec: w.rec}
	return w, nil
}

// coordinatorFor mirrors GroupMetadataManager.partitionFor (abs(hashCode) mod
// 50 partitions of __consumer_offsets) and places partition p's leader on
// broker p mod brokers.
func coordinatorFor(groupID string, brokers int) int32 {
	var h int32
	for _, c := range []rune(groupID) { // Java String.hashCode over UTF-16 units (BMP)
		h = 31*h + int32(c)
	}
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return (h % 50) % int32(brokers)
}

// errorByName maps a Kafka error name to its code (None for "").
func errorByName(name string) protocol.ErrorCode {
	for _, e := range protocol.AllErrorCodes {
		if e.String() == name {
			return e
		}
	}
	return protocol.None
}

func toSimDist(d scenario.Dist) sim.Dist {
	switch d.Kind {
	case scenario.DistConstant, "":
		return sim.Constant(d.Value)
	case scenario.DistUniform:
		return sim.Uniform{Min: d.Min, Max: d.Max}
	case scenario.DistExponential:
		return sim.Exponential{Min: d.Min, Mean: d.Mean}
	case scenario.DistLognormal:
		return sim.Lognormal{Median: d.Median, P99: d.P99}
	}
	panic("harness: unknown distribution " + string(d.Kind))
}

// emit records one event and shows it to the metrics and checkers.
func (w *world) emit(e *TraceEvent) {
	w.rec.record(e)
	w.watch.observe(e)
	for _, c := range w.checks {
		if msg := c.check(w.view, e); msg != "" {
			w.viol = append(w.viol, Violation{Checker: c.name(), AtMs: int64(e.At) / 1e6, Message: msg, Event: violationEvent(e)})
		}
	}
}

// emitModel records one event a model emitted: a member's (slot: its
// index + 1) or a broker's (slot 0). The typed state or trigger of a
// model's event is set from its text here (protocol.TypeText), once.
func (w *world) emitModel(e *protocol.Event, slot int32) {
	w.tev = TraceEvent{At: w.q.Now(), Event: *e, Slot: slot}
	protocol.TypeText(&w.tev.Event)
	w.emit(&w.tev)
}

// processEvent records a step of the slot's process's lifecycle.
func (w *world) processEvent(s *slot, now sim.Instant, st protocol.ProcessState) {
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvProcess, Node: s.name, Group: w.groups[s.group].id,
		State: st.String(), Process: st}, Slot: s.id + 1}
	w.emit(&w.tev)
}

func (w *world) run() sim.StopReason {
	budget := sim.Budget{Until: sim.Instant(w.sc.Duration), MaxEvents: uint64(w.maxEvents)}
	reason := w.q.Run(budget, w.fire)
	if reason == sim.EventBudget {
		w.viol = append(w.viol, Violation{Checker: "progress", AtMs: int64(w.q.Now()) / 1e6,
			Message: fmt.Sprintf("the run hit its budget of %d events before its simulated duration (raise it with --max-events)", budget.MaxEvents)})
	}
	w.finish()
	return reason
}

// maxEventsPerInstant bounds the events of one virtual instant: a world that
// fires more without time moving is livelocked (a model bug), and the run
// stops with a violation instead of spinning until the event budget.
var maxEventsPerInstant = 20_000_000

func (w *world) fire(now sim.Instant, e ev) {
	var d sim.Delivery[envelope]
	if e.kind == evDeliver || e.kind == evServe || e.kind == evReply {
		w.takeDel(e.di, &d)
	}
	if now != w.instant {
		w.instant, w.atInstant = now, 0
	}
	if w.atInstant++; w.atInstant > maxEventsPerInstant {
		w.viol = append(w.viol, Violation{Checker: "progress", AtMs: int64(now) / 1e6,
			Message: fmt.Sprintf("more than %d events at one instant without virtual time moving: a livelock", maxEventsPerInstant)})
		w.q.Stop()
		return
	}
	if si := w.spinSlot(&e); si >= 0 && w.spinning(si, now) {
		return
	}
	switch e.kind {
	case evDeliver:
		w.deliver(now, &d)
	case evAppTick:
		s := w.slots[e.idx]
		if !s.live(e.inc) || s.paused {
			return
		}
		s.m.TickApp(now, &w.cout)
		w.flushMember(s)
	case evHBTick:
		s := w.slots[e.idx]
		if !s.live(e.inc) || s.paused {
			return
		}
		w.catchUp(s)
		s.m.TickHeartbeat(now, &w.cout)
		w.flushMember(s)
	case evBrokerTick:
		b := w.brokers[e.idx]
		if b.down {
			return
		}
		b.b.Tick(now, &w.bout)
		w.tickConsumer(b, now)
		w.flushBroker(b)
	case evStart:
		w.startProcess(w.slots[e.idx])
	case evFault:
		w.applyFault(int(e.idx))
	case evFaultEnd:
		switch w.faults[e.idx].Kind {
		case scenario.FaultRollingRestart:
			w.runRollingStep(int(e.idx), rollingStepOf(e.inc))
			return
		case scenario.FaultCrash, scenario.FaultHostDown:
			w.recoverNode(int(e.idx), sim.NodeID(e.inc))
			return
		}
		w.endFault(int(e.idx))
	case evFence:
		b := w.brokers[e.idx]
		w.fence(b, e.inc)
	case evServe:
		if b := w.brokers[d.To]; !b.down && b.epoch == e.inc {
			w.serve(now, b, &d.Msg)
		}
	case evResume:
		w.resume(w.slots[e.idx], e.inc)
	case evReply:
		// A consumer-group coordinator's deferred answer (consumer.go
		// serveConsumer) leaves on its request's connection. A broker that
		// died meanwhile sends nothing (deviation: Kafka fails the pending
		// write events of an unloaded shard with NOT_COORDINATOR; a dead
		// broker's connections are gone anyway).
		if b := w.brokers[e.idx]; !b.down && b.epoch == e.inc {
			b.answer(w, now, d.Msg)
		}
	}
}

func (s *slot) live(inc uint32) bool { return s.alive && s.inc == inc }

// catchUp lets the member replay its uneventful polls before it sees another
// event at now, including a poll due exactly at now when the seed's
// tie-break would have fired that poll first (client.Member.CatchUp).
func (w *world) catchUp(s *slot) {
	now := w.q.Now()
	first := w.q.TieKey(now, ev{kind: evAppTick, idx: s.id}) < w.q.CurrentTieKey()
	s.m.CatchUp(now, first)
}

// startProcess starts a fresh process in the slot: a new client.Member with
// its own random stream (named by slot and incarnation) and a new connection.
func (w *world) startProcess(s *slot) {
	if s.alive {
		return
	}
	now := w.q.Now()
	s.inc++
	s.alive = true
	s.paused = false
	s.clearProcess()
	w.net.Restart(s.node)
	c := &w.groups[s.group].cohorts[s.cohort]
	if s.consumer(c.sc) {
		s.m = w.newConsumerProcess(s, *c)
	} else {
		if c.tmpl == nil {
			t, err := client.NewTemplate(*c.cfg)
			if err != nil {
				panic("client: NewMember: " + err.Error()) // as client.NewMember would
			}
			c.tmpl = t
		}
		instanceID := ""
		if c.sc.Client.StaticMembership {
			instanceID = s.name
		}
		tmpl := c.tmpl
		if t := replayTemplate(w.sc, s, c); t != nil {
			tmpl = t // the real incarnation's own workload draws (replay.go)
		}
		s.m = tmpl.NewMember(s.name, instanceID, w.streams.Stream("member/"+s.name+"/"+strconv.Itoa(int(s.inc))))
	}
	s.aliveSince = now
	s.settledGen = -1
	s.coordSeen = -1
	w.processEvent(s, now, protocol.ProcessStarted)
	s.m.Start(now, &w.cout)
	w.flushMember(s)
}

// stopProcess ends the slot's process (crash or after close). Its kernel
// closes its sockets (FIN, or RST with unread data): the brokers see the
// connections close, and the classic coordinator ignores that (B7). A host
// that went down (hostDown) sends nothing: its connections just go silent.
func (w *world) stopProcess(s *slot, how protocol.ProcessState) {
	if !s.alive {
		return
	}
	now := w.q.Now()
	if how != protocol.ProcessHostDown {
		w.net.Crash(s.node)
		for l := range s.allLinks() {
			w.net.Abort(now, s.node, w.brokers[l.broker].node, l.ch)
		}
	}
	s.clearProcess()
	s.alive = false
	s.paused = false
	w.q.Cancel(&s.app)
	w.q.Cancel(&s.hb)
	w.groups[s.group].m.memberSeconds += w.watch.aliveSeconds(s, now)
	w.processEvent(s, now, how)
	w.watch.setOwned(s, nil)
	if s.rare != nil && s.rare.startAfterClose {
		// A rolling restart waits for the old process to exit (its close()
		// ended, or it died meanwhile) before it starts the new one.
		s.rare.startAfterClose = false
		if !w.net.IsHostDown(s.node) {
			w.startProcess(s)
		}
	}
}

// flushMember sends what the member asked to send, records its events and
// re-arms its two thread timers.
func (w *world) flushMember(s *slot) {
	now := w.q.Now()
	for i := range w.cout.Events {
		w.emitModel(&w.cout.Events[i], s.id+1)
	}
	k := 0
	for i, snd := range w.cout.Sends {
		for ; k < len(w.cout.Conns) && w.cout.Conns[k].AfterSends <= i; k++ {
			w.connOp(s, w.cout.Conns[k])
		}
		ch := chOf(snd.Coord)
		env := envelope{conn: s.link(snd.Broker, ch), corr: snd.Corr, broker: snd.Broker, req: snd.Req}
		w.send(now, s.node, w.brokers[snd.Broker].node, ch, w.conns[env.conn].epoch, env, s.name, w.brokers[snd.Broker].name)
	}
	for ; k < len(w.cout.Conns); k++ {
		w.connOp(s, w.cout.Conns[k])
	}
	w.cout.Reset()
	if s.cp() != nil {
		w.consumerSettled(s)
	}
	if !s.alive {
		return
	}
	if s.m.Stopped() {
		how := protocol.ProcessClosed
		if s.m.FatalError() != protocol.None {
			how = protocol.ProcessFatal
			w.groups[s.group].m.fatal = append(w.groups[s.group].m.fatal, s.name+": "+s.m.FatalError().String())
		}
		w.stopProcess(s, how)
		return
	}
	w.rearm(&s.app, s.m.NextAppDeadline(), ev{kind: evAppTick, idx: s.id, inc: s.inc})
	w.rearm(&s.hb, s.m.NextHeartbeatDeadline(), ev{kind: evHBTick, idx: s.id, inc: s.inc})
}

func (w *world) rearm(t *sim.Timer, deadline protocol.Instant, e ev) {
	now := w.q.Now()
	at := deadline
	if deadline == protocol.Never {
		if _, armed := t.Armed(); armed {
			w.q.Cancel(t)
		}
		return
	}
	if at < now {
		at = now
	}
	if cur, armed := t.Armed(); armed && cur == at {
		return
	}
	w.q.Arm(t, at, e)
}

func (w *world) flushBroker(b *broker) {
	now := w.q.Now()
	w.noteMemberIDs(w.bout.Replies)
	for i := range w.bout.Events {
		w.emitModel(&w.bout.Events[i], 0)
	}
	for i := range w.bout.Persist {
		rec := w.bout.Persist[i]
		for _, g := range w.groups {
			if g.id == rec.GroupID {
				g.record = &rec
			}
		}
	}
	for _, r := range w.bout.Replies {
		// answer schedules the connection's next read: no re-entry into
		// the broker while its output is iterated.
		b.answer(w, now, envelope{conn: r.Conn, corr: r.Corr, broker: int32(b.node), resp: r.Resp})
	}
	w.bout.Reset()
	w.rearm(&b.timer, w.brokerDeadline(b), ev{kind: evBrokerTick, idx: int32(b.node)})
}

// send hands a message to TCP on the connection of the given epoch. A
// lost first transmission is traced (EvLost); the network retransmits it.
func (w *world) send(now sim.Instant, from, to sim.NodeID, ch uint8, epoch uint32, env envelope, fromName, toName string) {
	why := w.net.SendOn(now, from, to, ch, epoch, env)
	w.msgEvent(now, tracing.EvSend, fromName, toName, &env, tracing.FateNone)
	switch why {
	case sim.NotDropped:
	case sim.DropLoss, sim.DropPartition, sim.DropHeld:
		w.msgEvent(now, tracing.EvLost, fromName, toName, &env, fateOf(why))
	default:
		w.msgEvent(now, tracing.EvDrop, fromName, toName, &env, fateOf(why))
	}
}

// fateOf is the trace's name of the network's drop reason.
func fateOf(why sim.DropReason) tracing.Fate {
	switch why {
	case sim.DropLoss:
		return tracing.FateLoss
	case sim.DropPartition:
		return tracing.FatePartition
	case sim.DropHeld:
		return tracing.FateHeld
	case sim.DropReset:
		return tracing.FateReset
	case sim.DropFilter:
		return tracing.FateFilter
	case sim.DropClosed:
		return tracing.FateClosed
	}
	panic("harness: no trace fate for drop reason " + why.String())
}

// link is the Conn id of the process's connection to broker on ch.
func (s *slot) link(broker int32, ch uint8) coordinator.Conn {
	for _, l := range s.links {
		if l.broker == broker && l.ch == ch && l.conn != 0 {
			return l.conn
		}
	}
	if s.rare != nil {
		for _, l := range s.rare.more {
			if l.broker == broker && l.ch == ch {
				return l.conn
			}
		}
	}
	return 0
}

// connOp opens or closes one of a member's connections (client.ConnOp).
func (w *world) connOp(s *slot, op client.ConnOp) {
	now := w.q.Now()
	b := w.brokers[op.Broker]
	ch := chOf(op.Coord)
	if !op.Open {
		w.net.Close(s.node, b.node, ch)
		return
	}
	w.net.Open(now, s.node, b.node, ch)
	id := coordinator.Conn(len(w.conns))
	w.conns = append(w.conns, newConnInfo(s.id, w.net.Epoch(s.node, b.node, ch), s.inc, ch))
	s.setLink(op.Broker, ch, id)
}

// msgEvent traces one message event (send, deliver, drop, lost,
// retransmit). When only the trace hash reads the trace, it is hashed
// straight from the envelope, and neither the metrics (observe) nor the
// checkers see it: none of them reacts to a message event
// (TestMessageEventsReachNoWatcher): message events are most of a run's
// trace, and building a TraceEvent for each cost about 2 % of a run.
func (w *world) msgEvent(now sim.Instant, kind protocol.EventKind, node, peer string, env *envelope, fate tracing.Fate) {
	reason := fate.String()
	var group string
	var api protocol.APIKey
	err := protocol.None
	req := env.req != nil
	if req {
		api, group = env.req.API(), env.req.Group()
	} else {
		api, err = env.resp.API(), env.resp.Err()
	}
	if w.rec.hashOnly {
		w.rec.recordMsg(now, kind, node, group, peer, reason, api, err, env.corr, req)
		return
	}
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: kind, Node: node, Group: group, Peer: peer, Reason: reason, API: api, Err: err}, Corr: env.corr, Req: req, Fate: fate}
	w.emit(&w.tev)
}

func (w *world) nodeName(n sim.NodeID) string {
	if int(n) < len(w.brokers) {
		return w.brokers[n].name
	}
	return w.slots[int(n)-len(w.brokers)].name
}

// serve hands a request to its broker.
func (w *world) serve(now sim.Instant, b *broker, env *envelope) {
	if r, ok := env.req.(*protocol.ConsumerGroupHeartbeatRequest); ok {
		w.serveConsumer(now, b, env, r)
		return
	}
	if r, ok := env.req.(*protocol.OffsetCommitRequest); ok && b.cg != nil {
		if g := w.groupByID(r.GroupID); g != nil && g.cs != nil && (g.cs.pure || w.servedAsConsumer(now, b, g)) {
			w.serveConsumerCommit(now, b, env, r)
			return
		}
	}
	if b.cg != nil && w.serveClassicInConsumerGroup(now, b, env) {
		return
	}
	b.b.Handle(now, env.conn, env.corr, env.req, &w.bout)
	w.flushBroker(b)
}

func (w *world) deliver(now sim.Instant, d *sim.Delivery[envelope]) {
	o, who := w.net.Handle(now, d)
	switch o {
	case sim.Deliver:
	case sim.Pending:
		return
	case sim.Dropped:
		if d.IsMessage() {
			w.msgEvent(now, tracing.EvDrop, w.nodeName(d.From), w.nodeName(d.To), &d.Msg, tracing.FateReset)
		}
		return
	case sim.Lost:
		if d.IsMessage() {
			w.msgEvent(now, tracing.EvLost, w.nodeName(d.From), w.nodeName(d.To), &d.Msg, tracing.FateRetransmission)
		}
		return
	case sim.Retransmitted:
		if d.IsMessage() {
			w.msgEvent(now, tracing.EvRetransmit, w.nodeName(d.From), w.nodeName(d.To), &d.Msg, tracing.FateNone)
		}
		return
	case sim.Established, sim.ConnectFailed, sim.Disconnect:
		w.connEvent(o, who, d)
		return
	}
	env := &d.Msg
	if env.req != nil {
		b := w.brokers[d.To]
		if b.down {
			return // unreachable: the network loses or resets what reaches a dead broker
		}
		w.msgEvent(now, tracing.EvDeliver, b.name, w.nodeName(d.From), env, tracing.FateNone)
		if !b.admit(w, d) {
			return // read when the connection's request in service is answered (mute.go)
		}
		if b.service != nil {
			w.q.Schedule(b.served(now), ev{kind: evServe, idx: int32(b.node), di: w.putDel(d), inc: b.epoch})
			return
		}
		w.serve(now, b, env)
		return
	}
	s := w.slots[int(d.To)-len(w.brokers)]
	if !s.alive || s.link(env.broker, w.conns[env.conn].ch()) != env.conn {
		w.msgEvent(now, tracing.EvDrop, w.nodeName(d.From), s.name, env, tracing.FateNoProcess)
		return
	}
	if s.paused {
		r := s.rareState()
		r.buf = append(r.buf, held{outcome: sim.Deliver, d: *d})
		return
	}
	w.msgEvent(now, tracing.EvDeliver, s.name, w.nodeName(d.From), env, tracing.FateNone)
	if g := w.groups[s.group]; g.m.recovering && env.resp.Err() == protocol.None && env.broker == g.coord {
		if api := env.resp.API(); api == protocol.APIHeartbeat || api == protocol.APISyncGroup || api == protocol.APIConsumerGroupHeartbeat {
			w.watch.confirm(s, now)
		}
	}
	w.catchUp(s)
	s.m.Step(now, env.broker, env.corr, env.resp, &w.cout)
	w.flushMember(s)
}

// connEvent tells a member what happened to one of its connections. Brokers
// are not told: the classic coordinator never acts on a closed connection
// (network-model.md B7).
func (w *world) connEvent(o sim.Outcome, who sim.NodeID, d *sim.Delivery[envelope]) {
	if int(who) < len(w.brokers) {
		return
	}
	s := w.slots[int(who)-len(w.brokers)]
	peer := d.To
	if peer == who {
		peer = d.From
	}
	if !s.alive || int(peer) >= len(w.brokers) {
		return
	}
	broker := int32(peer)
	coord := d.Ch == chCoord
	if s.link(broker, d.Ch) == 0 {
		return // not a connection of this process (the network dropped stale ones)
	}
	why := "peer-closed"
	if who == d.From {
		why = "reset" // an RST answered its segment, or tcp_retries2 gave up
	}
	if s.paused {
		// The kernel takes it; the process sees it when it resumes.
		r := s.rareState()
		r.buf = append(r.buf, held{outcome: o, broker: broker, coord: coord, why: why})
		return
	}
	w.memberConn(s, o, broker, coord, why)
}

// memberConn hands a connection event to the member.
func (w *world) memberConn(s *slot, o sim.Outcome, broker int32, coord bool, why string) {
	w.catchUp(s)
	w.memberConnNow(s, o, broker, coord, why)
}

// memberConnNow is memberConn without the catch-up: resume's held events,
// which come before the poll due at the resume instant (see resume).
func (w *world) memberConnNow(s *slot, o sim.Outcome, broker int32, coord bool, why string) {
	now := w.q.Now()
	switch o {
	case sim.Established:
		s.m.Connected(now, broker, coord, &w.cout)
	case sim.ConnectFailed:
		s.m.ConnectFailed(now, broker, coord, &w.cout)
	case sim.Disconnect:
		s.m.ConnectionClosed(now, broker, coord, why, &w.cout)
	}
	w.flushMember(s)
}

// resume ends a pause: held responses are delivered in arrival order, then
// both threads catch up on every deadline that passed while frozen.
func (w *world) resume(s *slot, inc uint32) {
	if !s.live(inc) || !s.paused {
		return
	}
	now := w.q.Now()
	s.paused = false
	s.m.Resume(now)
	w.processEvent(s, now, protocol.ProcessResumed)
	var buf []held
	if s.rare != nil {
		buf, s.rare.buf = s.rare.buf, nil
	}
	for _, h := range buf {
		if !s.live(inc) {
			break
		}
		if h.outcome != sim.Deliver {
			// No catchUp: Resume moved a poll that fell due in the pause
			// to now, and the thawed threads see the held events before
			// it, as with every poll its own event (its tick is armed
			// after them, by the flushMember below). catchUp would have
			// replayed that poll first when the seed's tie-break put an
			// application tick before this resume.
			w.memberConnNow(s, h.outcome, h.broker, h.coord, h.why)
			continue
		}
		d := h.d
		env := &d.Msg
		w.msgEvent(now, tracing.EvDeliver, s.name, w.nodeName(d.From), env, tracing.FateNone)
		s.m.Step(now, env.broker, env.corr, env.resp, &w.cout)
		w.flushMember(s)
	}
	if s.live(inc) {
		w.flushMember(s) // re-arm both timers; past deadlines fire now
	}
}

// entryIndex is the index of entry g in sc.Groups, to name it in messages.
func entryIndex(sc *scenario.Scenario, g *scenario.Group) int {
	for i := range sc.Groups {
		if &sc.Groups[i] == g {
			return i
		}
	}
	return -1
}

// setLoss sets the network's packet loss: the same both ways, or
// member → broker (toBroker) and broker → member (loss) apart.
func (w *world) setLoss(loss, toBroker float64) {
	if w.sc.Network.LossDirectional {
		w.net.SetDirectionalLoss(sim.NodeID(w.sc.Coordinator.Brokers), toBroker, loss)
		return
	}
	w.net.SetLoss(loss)
}
