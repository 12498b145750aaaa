package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// Anomaly oracles (docs/OBSERVABILITY.md, "Oracles"): predicates over one
// run that flag the symptoms of rebalance bugs which are not safety
// violations — a stuck group, a rebalance storm, a process that never gets
// back in, partitions nobody owns, member ids that leak, a client that
// spins. The invariant checkers (checkers.go) stop at the first violation;
// an oracle instead judges the run when it is over, from the trace events
// it observed and the coordinator's state at the end. It never changes the
// run: the trace hash with and without oracles is the same.
//
// Most oracles judge the end state, and only when the run lasted long
// enough after its last fault for a healthy group to have settled: the
// group's settle bound (settleBound, or `oracles: {settle: ...}`); a run
// that ends sooner is not judged by them.

// Finding is one oracle (or invariant checker) that fired in one run.
type Finding struct {
	Oracle  string `json:"oracle"`
	Group   string `json:"group,omitempty"`
	Node    string `json:"node,omitempty"`
	AtMs    int64  `json:"at_ms"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s at %d ms: %s", f.Oracle, f.AtMs, f.Message)
}

// Oracle defaults (scenario.Oracles fields left zero).
const (
	// defaultStormGenerations: more generations than this in one window
	// with no fault is a storm. A fault's aftermath (an expiry, a rejoin,
	// a second join after a leader change) is excluded by the window rule,
	// so a healthy group has none at all there.
	defaultStormGenerations = 5
	defaultStormWindow      = time.Minute
	// defaultCPUSpin: requests per second from one member over a 10 s
	// window. A healthy member sends a heartbeat per
	// heartbeat.interval.ms and a commit per auto.commit.interval.ms; a
	// coordinator-lookup loop at retry.backoff.ms = 100 ms sends ~10/s.
	defaultCPUSpin = 50.0
	spinWindow     = 10 * time.Second
)

// RunOracles runs the scenario for one seed like Run and checks the run with
// every oracle the scenario enables (scenario.Oracles) and every invariant
// checker; the findings are in a fixed order (invariant violations first,
// then by oracle, group and node).
func RunOracles(sc *scenario.Scenario, seed uint64, opts Options) (*Result, []Finding, error) {
	if err := CheckMemory(sc, opts); err != nil {
		return nil, nil, err
	}
	o := newOracleSet(sc, ExpandFaults(sc, seed))
	inner := opts.Observe
	opts.Observe = func(e *TraceEvent) {
		o.observe(e)
		if inner != nil {
			inner(e)
		}
	}
	w, err := newWorld(sc, seed, opts)
	if err != nil {
		return nil, nil, err
	}
	// The world moved each fault by its timing phase (jitterFaults): judge
	// by the instants the faults really happen.
	o.setFaults(sc, w.faults)
	stop := w.run()
	if w.rec.werr != nil {
		return nil, nil, fmt.Errorf("writing trace: %w", w.rec.werr)
	}
	res := &Result{Summary: w.summary(), Stop: stop, Trace: w.rec.events}
	var out []Finding
	for _, v := range res.Summary.InvariantViolations {
		out = append(out, Finding{Oracle: v.Checker, AtMs: v.AtMs, Message: v.Message})
	}
	out = append(out, o.finish(w.oracleEnd())...)
	out = append(out, o.finishPromise(time.Duration(w.q.Now()), w.watch.obs)...)
	out = append(out, o.finishIDs(time.Duration(w.q.Now()))...)
	slices.SortStableFunc(out[len(res.Summary.InvariantViolations):], func(a, b Finding) int {
		return strings.Compare(a.Oracle+"\x00"+a.Group+"\x00"+a.Node, b.Oracle+"\x00"+b.Group+"\x00"+b.Node)
	})
	return res, out, nil
}

// endState is what the oracles read from the world at the end of a run:
// the small accessor between them and the harness internals.
type endState struct {
	now    time.Duration
	lossy  bool // loss set on the whole network: no quiet phase ever
	groups []endGroup
}

type endGroup struct {
	id      string
	procs   []string // the group's process names, in member-index order
	members []string // member ids at the group's coordinator now
}

func (w *world) oracleEnd() endState {
	e := endState{now: time.Duration(w.q.Now()), lossy: w.sc.Network.Loss > 0}
	for _, g := range w.groups {
		eg := endGroup{id: g.id, members: w.brokers[g.coord].b.Members(g.id)}
		if g.cs != nil && g.cs.active {
			eg.members = w.consumerMembers(g)
		}
		for _, si := range g.slots {
			eg.procs = append(eg.procs, w.slots[si].name)
		}
		e.groups = append(e.groups, eg)
	}
	return e
}

// oracleSet is the oracles' view of one run, built from trace events.
type oracleSet struct {
	sc     *scenario.Scenario
	cfg    *scenario.Oracles
	quiet  time.Duration // when the last fault (window) ends
	faults []interval    // fault windows (and the startup), for rebalance-storm
	groups map[string]*oracleGroup
	procs  map[string]*oracleProc
	names  []string          // the keys of procs, sorted (proc keeps it)
	owner  map[string]string // member id → process name (EvMemberAdded)
	spin   []Finding
	storm  []Finding
	leak   []Finding // member-id-leak
	fatal  []Finding // client-fatal
	// lastStart is when the last initial member starts (before its phase).
	lastStart time.Duration
	promise   *promiseState // oracles_promise.go
	ids       *idsState     // oracles_ids.go
}

type interval struct{ from, to time.Duration }

type oracleGroup struct {
	id         string
	bound      time.Duration       // the settle bound (settleBound)
	stalls     bool                // the workload itself stalls the group (workloadStalls)
	state      protocol.GroupState // the coordinator's state of the group (Dead while its broker is down)
	coord      string              // the broker that last reported the group's state
	notStable  time.Duration       // since when the group has not been Stable
	gens       []time.Duration
	partitions []protocol.TopicPartition
	rangeMulti bool // range assignor over several topics: uneven by design
	// mixed: the group's cohorts subscribe to different topics, so a
	// member may own nothing by design (more subscribers of a topic than
	// it has partitions while other topics' subscribers own several);
	// subs is the first cohort's subscription, to compare with.
	mixed      bool
	subs       []string
	stormFired bool
	// member-id-leak: member ids per broker (from that broker's
	// member-added/-removed events), the group's live processes, and since
	// when the coordinator's ids have outnumbered them (-1: they do not).
	idsAt     map[string]map[string]bool
	live      int
	leakSince time.Duration
	leakFired bool
}

type oracleProc struct {
	name, group string
	alive       bool
	ids         int           // member ids of this process in the group (trace view)
	outSince    time.Duration // since when it has had no member id (or was started)
	owned       []protocol.TopicPartition
	lastErr     string // the last error response delivered to it (client-fatal)
	bucket      int64  // current spin window index
	sent        int    // requests in that window
	spun        bool
}

func newOracleSet(sc *scenario.Scenario, faults []scenario.Fault) *oracleSet {
	o := &oracleSet{sc: sc, cfg: sc.Oracles,
		groups: map[string]*oracleGroup{}, procs: map[string]*oracleProc{}, owner: map[string]string{}}
	if o.cfg == nil {
		o.cfg = &scenario.Oracles{}
	}
	var lastStart time.Duration
	for gi := range sc.Groups {
		c := &sc.Groups[gi]
		g := o.groups[c.ID]
		if g == nil {
			g = &oracleGroup{id: c.ID, state: protocol.GroupEmpty, idsAt: map[string]map[string]bool{}, leakSince: -1}
			o.groups[c.ID] = g
		}
		g.bound = max(g.bound, settleBound(sc, c))
		if o.cfg.Settle > 0 {
			g.bound = o.cfg.Settle
		}
		g.stalls = g.stalls || workloadStalls(c)
		for _, t := range c.Subscribe {
			for _, tp := range sc.Topics {
				if tp.Name == t {
					for p := 0; p < tp.Partitions; p++ {
						tp := protocol.TopicPartition{Topic: t, Partition: int32(p)}
						if !slices.Contains(g.partitions, tp) {
							g.partitions = append(g.partitions, tp)
						}
					}
				}
			}
		}
		// Partitions an add-partitions fault creates during the run count
		// too: at the end they exist and need an owner.
		for _, f := range faults {
			if f.Kind != scenario.FaultAddPartitions || f.At >= sc.Duration || !slices.Contains(c.Subscribe, f.Target) {
				continue
			}
			for p := 0; p < f.Partitions; p++ {
				tp := protocol.TopicPartition{Topic: f.Target, Partition: int32(p)}
				if !slices.Contains(g.partitions, tp) {
					g.partitions = append(g.partitions, tp)
				}
			}
		}
		if len(c.Subscribe) > 1 && len(c.Client.Assignors) > 0 && c.Client.Assignors[0] == "range" {
			g.rangeMulti = true
		}
		// The consumer protocol's range (group.remote.assignor, else the
		// broker's first assignor) is co-partitioned the same way.
		if len(c.Subscribe) > 1 && c.Consumer() && (c.Client.RemoteAssignor == "range" ||
			c.Client.RemoteAssignor == "" && len(sc.Coordinator.ConsumerAssignors) > 0 && sc.Coordinator.ConsumerAssignors[0] == "range") {
			g.rangeMulti = true
		}
		if g.subs == nil {
			g.subs = c.Subscribe
		} else if !sameTopics(g.subs, c.Subscribe) {
			g.mixed = true
		}
		lastStart = max(lastStart, c.Start.At+time.Duration(max(c.Members-1, 0))*c.Start.Stagger)
	}
	o.lastStart = lastStart
	o.promise = newPromiseState(sc)
	o.ids = newIDsState(sc)
	o.setFaults(sc, faults)
	return o
}

// setFaults records the run's fault timeline: when the last fault ends, and
// the windows that are not "windows with no fault" for rebalance-storm (the
// startup, with its members' start phase of up to a heartbeat interval, and
// every fault window, each with the group's settle bound after it).
func (o *oracleSet) setFaults(sc *scenario.Scenario, faults []scenario.Fault) {
	o.quiet = lastFaultEnd(sc, faults)
	var grace, hb time.Duration
	for _, g := range o.groups {
		grace = max(grace, g.bound)
	}
	for i := range sc.Groups {
		hb = max(hb, sc.HeartbeatInterval(&sc.Groups[i]))
	}
	o.faults = append(o.faults[:0], interval{0, o.lastStart + hb + grace})
	for _, f := range faults {
		end := lastFaultEnd(sc, []scenario.Fault{f})
		o.faults = append(o.faults, interval{f.At, max(end, f.At) + grace})
	}
}

func (o *oracleSet) proc(name, group string) *oracleProc {
	p := o.procs[name]
	if p == nil {
		p = &oracleProc{name: name, group: group}
		o.procs[name] = p
		i, _ := slices.BinarySearch(o.names, name)
		o.names = slices.Insert(o.names, i, name)
	}
	return p
}

// observe updates the oracles' view with one trace event.
func (o *oracleSet) observe(e *TraceEvent) {
	at := time.Duration(e.At)
	o.observePromise(e, at)
	o.observeIDs(e, at)
	switch e.Kind {
	case tracing.EvProcess:
		p := o.proc(e.Node, e.Group)
		was := p.alive
		switch {
		case e.Process == protocol.ProcessStarted:
			p.alive, p.ids, p.outSince, p.owned = true, 0, at, nil
		case e.Process.Ended(): // crashed, host-down, closed, fatal
			p.alive, p.owned = false, nil
		}
		if g := o.groups[e.Group]; g != nil && was != p.alive {
			if p.alive {
				g.live++
			} else {
				g.live--
			}
			o.checkLeak(g, at)
		}
		if e.Process == protocol.ProcessFatal && o.cfg.Enabled(scenario.OracleClientFatal) {
			why := "no error response before it"
			if p.lastErr != "" {
				why = "the last error response it got: " + p.lastErr
			}
			o.fatal = append(o.fatal, Finding{Oracle: scenario.OracleClientFatal, Group: e.Group, Node: e.Node, AtMs: int64(at / time.Millisecond),
				Message: fmt.Sprintf("%s stopped on a fatal error no fault injected (%s)", e.Node, why)})
		}
	case tracing.EvDeliver:
		if !e.Req && e.Err != protocol.None {
			if p := o.procs[e.Node]; p != nil {
				p.lastErr = e.API.String() + " " + e.Err.String()
			}
		}
	case protocol.EvMemberAdded:
		o.owner[e.Peer] = e.Detail
		if p := o.procs[e.Detail]; p != nil {
			p.ids++
		}
		if g := o.groups[e.Group]; g != nil {
			if g.idsAt[e.Node] == nil {
				g.idsAt[e.Node] = map[string]bool{}
			}
			g.idsAt[e.Node][e.Peer] = true
			o.checkLeak(g, at)
		}
	case protocol.EvMemberRemoved:
		if p := o.procs[o.owner[e.Peer]]; p != nil && p.ids > 0 {
			p.ids--
			if p.ids == 0 {
				p.outSince = at
			}
		}
		if g := o.groups[e.Group]; g != nil {
			delete(g.idsAt[e.Node], e.Peer)
			o.checkLeak(g, at)
		}
	case protocol.EvGroupState:
		if g := o.groups[e.Group]; g != nil {
			if e.GroupState != protocol.GroupStable && g.state == protocol.GroupStable {
				g.notStable = at
			}
			if g.coord != "" && g.coord != e.Node {
				// The group moved: the new coordinator loaded it from the
				// log, which emits no member events, so its ids are
				// counted from here on (a leak that spans the move is
				// missed, never invented).
				delete(g.idsAt, e.Node)
				g.leakSince = -1
			}
			g.state, g.coord = e.GroupState, e.Node
			o.checkLeak(g, at)
		}
	case tracing.EvBrokerProcess:
		// The coordinator's broker died: its group state is gone until a
		// broker loads the group (which reports the loaded state).
		if e.Process == protocol.ProcessStarted {
			return
		}
		for _, g := range o.groups {
			delete(g.idsAt, e.Node)
			if g.coord == e.Node && g.state != protocol.GroupDead {
				if g.state == protocol.GroupStable {
					g.notStable = at
				}
				g.state = protocol.GroupDead
				g.leakSince = -1
			}
		}
	case protocol.EvGenerationComplete:
		if g := o.groups[e.Group]; g != nil {
			g.gens = append(g.gens, at)
			o.checkStorm(g, at)
		}
	case protocol.EvAssigned:
		if p := o.procs[e.Node]; p != nil {
			p.owned = slices.Clone(e.Partitions)
		}
	case protocol.EvRevoked:
		if p := o.procs[e.Node]; p != nil {
			p.owned = slices.DeleteFunc(p.owned, func(tp protocol.TopicPartition) bool { return slices.Contains(e.Partitions, tp) })
		}
	case tracing.EvSend:
		if !e.Req {
			return
		}
		if p := o.procs[e.Node]; p != nil && !p.spun && o.cfg.Enabled(scenario.OracleCPUSpin) {
			b := int64(at / spinWindow)
			if b != p.bucket {
				p.bucket, p.sent = b, 0
			}
			p.sent++
			bound := o.cfg.CPUSpin
			if bound == 0 {
				bound = defaultCPUSpin
			}
			if float64(p.sent) > bound*spinWindow.Seconds() {
				p.spun = true
				o.spin = append(o.spin, Finding{Oracle: scenario.OracleCPUSpin, Group: p.group, Node: p.name, AtMs: int64(at / time.Millisecond),
					Message: humanf("%s sent more than %d requests in the %v window from %v (bound %g/s)",
						p.name, p.sent-1, spinWindow, time.Duration(b)*spinWindow, bound)})
			}
		}
	}
}

// checkLeak updates member-id-leak after an event at at: the group's
// coordinator holds more member ids than the group has live processes,
// continuously for longer than the bound (`oracles: {member-id-leak: ...}`,
// else the settle bound: a dead member parked in JoinGroup legitimately
// stays until the join completes, up to the rebalance timeout, then one
// session timeout more).
func (o *oracleSet) checkLeak(g *oracleGroup, at time.Duration) {
	if g.leakFired || !o.cfg.Enabled(scenario.OracleMemberIDLeak) {
		return
	}
	n := len(g.idsAt[g.coord])
	if g.state == protocol.GroupDead || n <= g.live {
		o.judgeLeak(g, at)
		g.leakSince = -1
		return
	}
	if g.leakSince < 0 {
		g.leakSince = at
	}
}

// judgeLeak fires member-id-leak when the leak open since g.leakSince has
// lasted longer than the bound at at.
func (o *oracleSet) judgeLeak(g *oracleGroup, at time.Duration) {
	if g.leakSince < 0 || g.leakFired {
		return
	}
	bound := o.cfg.MemberIDLeak
	if bound == 0 {
		bound = g.bound
	}
	if at-g.leakSince > bound {
		g.leakFired = true
		o.leak = append(o.leak, Finding{Oracle: scenario.OracleMemberIDLeak, Group: g.id, AtMs: int64(at / time.Millisecond),
			Message: humanf("group %s had more member ids at its coordinator than live processes from %v for %v (bound %v)",
				g.id, g.leakSince, at-g.leakSince, bound)})
	}
}

// checkStorm fires rebalance-storm when more than K generations completed in
// the window ending at a generation, and the window is clear of every fault
// and of the startup (each with the group's settling time after it).
func (o *oracleSet) checkStorm(g *oracleGroup, at time.Duration) {
	if g.stormFired || !o.cfg.Enabled(scenario.OracleRebalanceStorm) {
		return
	}
	k, win := o.cfg.StormGenerations, o.cfg.StormWindow
	if k == 0 {
		k = defaultStormGenerations
	}
	if win == 0 {
		win = defaultStormWindow
	}
	from := at - win
	for _, f := range o.faults {
		if f.from <= at && f.to > from {
			return
		}
	}
	n := 0
	for _, t := range g.gens {
		if t > from {
			n++
		}
	}
	if n > k {
		g.stormFired = true
		o.storm = append(o.storm, Finding{Oracle: scenario.OracleRebalanceStorm, Group: g.id, AtMs: int64(at / time.Millisecond),
			Message: humanf("group %s completed %d generations in the %v up to %v with no fault (bound %d)", g.id, n, win, at, k)})
	}
}

// finish judges the end state of the run.
func (o *oracleSet) finish(es endState) []Finding {
	end := es.now
	out := append([]Finding(nil), o.storm...)
	for _, gs := range es.groups {
		if g := o.groups[gs.id]; g != nil {
			o.judgeLeak(g, end)
		}
	}
	out = append(out, o.leak...)
	out = append(out, o.fatal...)
	endMs := int64(end / time.Millisecond)
	for _, gs := range es.groups {
		g := o.groups[gs.id]
		if g == nil || es.lossy {
			continue // loss on the whole network never stops: no quiet phase
		}
		var live []*oracleProc
		for _, name := range gs.procs {
			if p := o.procs[name]; p != nil && p.alive {
				live = append(live, p)
			}
		}
		if len(live) == 0 {
			continue
		}
		fire := func(oracle, node, format string, args ...any) {
			if o.cfg.Enabled(oracle) {
				out = append(out, Finding{Oracle: oracle, Group: g.id, Node: node, AtMs: endMs, Message: humanf(format, args...)})
			}
		}
		// group-stuck
		stuck := o.cfg.GroupStuck
		if stuck == 0 {
			stuck = g.bound
		}
		if since := max(g.notStable, o.quiet); g.state != protocol.GroupStable && !g.stalls && end-since > stuck {
			fire(scenario.OracleGroupStuck, "", "group %s not Stable (%s) for %v after the last fault at %v (bound %v)",
				g.id, g.state, end-since, o.quiet, stuck)
		}
		// Member ids at the coordinator, by process.
		ids := gs.members
		byProc := map[string]int{}
		for _, id := range ids {
			byProc[o.owner[id]]++
		}
		// never-rejoins
		rejoin := o.cfg.NeverRejoins
		if rejoin == 0 {
			rejoin = g.bound
		}
		if !g.stalls {
			for _, p := range live {
				if since := max(p.outSince, o.quiet); byProc[p.name] == 0 && end-since > rejoin {
					fire(scenario.OracleNeverRejoins, p.name, "%s is alive but has had no member id in group %s for %v (bound %v)",
						p.name, g.id, end-since, rejoin)
				}
			}
		}
		// The end-state oracles below judge a group only when the run lasted
		// its quiet bound after the last fault.
		if end < o.quiet+g.bound {
			continue
		}
		// member-leak
		if len(ids) > len(live) {
			var extra []string
			for _, id := range ids {
				if q := o.procs[o.owner[id]]; q == nil || !q.alive || byProc[o.owner[id]] > 1 {
					extra = append(extra, id+" ("+o.owner[id]+")")
				}
			}
			fire(scenario.OracleMemberLeak, "", "group %s has %d members for %d live processes: %s",
				g.id, len(ids), len(live), strings.Join(extra, ", "))
		}
		// The ownership oracles judge a group the coordinator calls Stable.
		if g.state != protocol.GroupStable {
			continue
		}
		owners := map[protocol.TopicPartition][]string{}
		minN, maxN, minP, maxP := len(g.partitions)+1, -1, "", ""
		for _, p := range live {
			for _, tp := range p.owned {
				owners[tp] = append(owners[tp], p.name)
			}
			if byProc[p.name] == 0 {
				continue // outside the group: never-rejoins' business
			}
			if n := len(p.owned); n < minN {
				minN, minP = n, p.name
			}
			if n := len(p.owned); n > maxN {
				maxN, maxP = n, p.name
			}
		}
		var unowned, double []string
		for _, tp := range g.partitions {
			name := fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
			switch n := len(owners[tp]); {
			case n == 0:
				unowned = append(unowned, name)
			case n > 1:
				double = append(double, name+" ("+strings.Join(owners[tp], ", ")+")")
			}
		}
		if len(unowned) > 0 {
			fire(scenario.OracleUnownedAtEnd, "", "group %s is Stable with %d live members but %d of %d partitions have no owner: %s",
				g.id, len(live), len(unowned), len(g.partitions), strings.Join(unowned, ", "))
		}
		if len(double) > 0 {
			fire(scenario.OracleDoubleOwnedAtEnd, "", "group %s: partitions owned by two live processes at the end: %s", g.id, strings.Join(double, ", "))
		}
		if minN == 0 && maxN >= 2 && !g.rangeMulti && !g.mixed {
			fire(scenario.OracleUnbalanced, minP, "group %s is Stable; %s owns no partition while %s owns %d", g.id, minP, maxP, maxN)
		}
	}
	out = append(out, o.spin...)
	slices.SortStableFunc(out, func(a, b Finding) int {
		return strings.Compare(a.Oracle+"\x00"+a.Group+"\x00"+a.Node, b.Oracle+"\x00"+b.Group+"\x00"+b.Node)
	})
	return out
}

// settleBound is how long after its last fault a healthy group of this
// cohort is Stable again with every live member assigned: a dead member is
// noticed within session.timeout.ms; a request lost with a silent peer (a
// host down) fails only at its request timeout, which for a JoinGroup
// parked at the coordinator is max(request.timeout.ms, rebalance timeout
// + 5 s) (AbstractCoordinator.sendJoinGroupRequest, 2.6+; the heartbeat
// thread is off while joining, so nothing notices sooner); a rebalance
// waits for each member's next poll (the poll loop's upper tail: poll
// interval, two callbacks and the assignor); 30 s of slack for round trips,
// backoffs and a coordinator's failover (failover.delay, 9 s in KRaft mode,
// plus loading), and when the scenario crashes brokers the failover delay
// beyond 9 s (ZooKeeper mode from 2.5: 18 s). It is a heuristic upper
// bound, not a Kafka figure: a scenario whose faults need longer sets
// `oracles: {settle: ...}`.
func settleBound(sc *scenario.Scenario, c *scenario.Group) time.Duration {
	loop := distUpper(c.Workload.PollInterval) + 2*distUpper(c.Workload.CallbackTime) + distUpper(c.Workload.AssignTime)
	rebalance := c.Client.MaxPollInterval
	if rebalance == 0 { // kafka-0.10: the rebalance timeout is the session timeout
		rebalance = c.Client.SessionTimeout
	}
	slack := 30 * time.Second
	if crashesBrokers(sc) {
		slack += max(sc.Coordinator.FailoverDelay-9*time.Second, 0)
	}
	return sc.SessionTimeout(c) + max(c.Client.RequestTimeout, rebalance+5*time.Second) + loop + slack
}

// crashesBrokers reports whether a fault of the file crashes a broker or
// takes its host down (the swarm draws member faults only).
func crashesBrokers(sc *scenario.Scenario) bool {
	for i := range sc.Faults {
		f := &sc.Faults[i]
		if (f.Kind == scenario.FaultCrash || f.Kind == scenario.FaultHostDown) &&
			(f.Target == scenario.CoordinatorName || strings.HasPrefix(f.Target, scenario.BrokerPrefix)) {
			return true
		}
	}
	return false
}

// SettleBound is the longest settle bound over the scenario's groups (or
// its `oracles: {settle: ...}`): how long after its last fault a run must
// last for the end-state oracles to judge it.
func SettleBound(sc *scenario.Scenario) time.Duration {
	if sc.Oracles != nil && sc.Oracles.Settle > 0 {
		return sc.Oracles.Settle
	}
	var b time.Duration
	for i := range sc.Groups {
		b = max(b, settleBound(sc, &sc.Groups[i]))
	}
	return b
}

// sameTopics reports whether two subscriptions name the same topics.
func sameTopics(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) {
			return false
		}
	}
	return true
}
