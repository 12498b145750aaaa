package realkafka

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/rebalsim/rebalsim/harness"
)

// NotMeasured lists the summary fields a real run cannot fill: they are
// written as zero/empty and named in the real section.
var NotMeasured = []string{
	"seed (a real run is not seeded)",
	"trace_sha256 (no simulator trace; the raw logs are in the repetition's directory)",
	"invariant_violations (the simulator's checkers read its trace; not run on real logs)",
}

// Real is the part of a real run's JSON that the simulator's has not.
type Real struct {
	BrokerVersion  string            `json:"broker_version"`
	ClientVersions map[string]string `json:"client_versions"`
	Dir            string            `json:"dir"`
	WallMs         int64             `json:"wall_ms"`
	SetupMs        int64             `json:"setup_ms"`
	BrokerStartMs  map[string]int64  `json:"broker_start_ms"` // exec → "Kafka Server started"
	// JVM exec → the driver's "ready" (client loaded, consumer built; the
	// member's start then is a go on stdin), per JVM.
	JVMToReadyMs harness.Stats `json:"jvm_to_ready_ms"`
	// A member's start (go) → its first "(Re-)joining group", per start.
	StartToFirstJoinMs harness.Stats `json:"start_to_first_join_ms"`
	// Lateness of the fault timeline's actions (ts_ms − (t0 + at_ms)).
	TimelineLateMs harness.Stats `json:"timeline_late_ms"`
	LoadAvgStart   string        `json:"loadavg_start"`
	LoadAvgEnd     string        `json:"loadavg_end"`
	// FirstJoinMs: each member's first JoinGroup after its first start, ms
	// after t0 (its first "(Re-)joining group"; consumer protocol: its
	// first transition to JOINING) — the measured start instant that the
	// matched simulation gives the member.
	FirstJoinMs map[string]int64 `json:"first_join_ms,omitempty"`
	// BrokerFirstJoinMs: each member's first join as the coordinator saw
	// it, ms after t0: a classic member's "Created a new member id" line
	// (or, in a repetition packed before the testbed kept that line, the
	// client's "Request joining group due to: need to re-join with the
	// given member-id", its receipt of that answer: 35 ms later in one
	// loaded run), a consumer member's "Member M joins the consumer group"
	// (M mapped to the member by its client's transition lines). It leaves
	// out the client's cold path to the broker (the first JoinGroup of a
	// fresh JVM: 175–755 ms in the suite's first 3.9.1 runs).
	BrokerFirstJoinMs map[string]int64 `json:"broker_first_join_ms,omitempty"`
	// LastHeartbeatMs: each member's last "Sending Heartbeat request"
	// (classic, DEBUG) at or before the first fault, ms after t0: the
	// phase of its heartbeat cycle when the fault came [calib's request].
	LastHeartbeatMs map[string]int64 `json:"last_heartbeat_ms,omitempty"`
	// RebalanceNoticeMs: each member that no fault touched, its first
	// notice of a rebalance after the first fault, ms after t0: the
	// heartbeat's REBALANCE_IN_PROGRESS ("Request joining group due to",
	// "failed since group is rebalancing"), a "(Re-)joining group", or
	// (consumer protocol) a transition to RECONCILING, which only a member
	// whose assignment changes logs [measured: 2 of 5 survivors in
	// cal-consumer-crash 4.4.0 rep 1]. Its spread says
	// whether the members' heartbeats are phase-aligned.
	RebalanceNoticeMs map[string]int64 `json:"rebalance_notice_ms,omitempty"`
	// HeartbeatGapMs: the mean gap between a process's successive
	// "Sending Heartbeat request" lines within one generation (classic
	// protocol, DEBUG; none across a coordinator's loss; gaps under half
	// or over twice the median — a retry, a pause, a stall — left out);
	// HeartbeatGaps: how many gaps.
	HeartbeatGapMs float64 `json:"heartbeat_gap_ms,omitempty"`
	HeartbeatGaps  int     `json:"heartbeat_gaps,omitempty"`
	// AssignMs: per classic generation, the coordinator's "Stabilized
	// group" (its JoinGroup answers) → "Assignment received from leader"
	// (the leader's SyncGroup), less the loopback round trip: the leader's
	// JoinGroup handling, its assignor run (ConsumerCoordinator
	// .onLeaderElected @3.9.0-rc3) and its SyncGroup's sending.
	// SyncAppendMs: "Assignment received from leader" → the first
	// member's "Successfully synced group" of that generation, less the
	// loopback one way: the group record's append (GroupCoordinator
	// .doSyncGroup → GroupMetadataManager.storeGroup, acks=-1,
	// @3.9.0-rc3) and the answer's handling. Only generations
	// with all three lines (a generation the group left before the
	// leader's SyncGroup has none: its assignment time is not counted).
	AssignMs     *JoinCost `json:"assign_ms,omitempty"`
	SyncAppendMs *JoinCost `json:"sync_append_ms,omitempty"`
	// The consumer-group coordinator's costs (consumer protocol, the
	// members' first processes; broker DEBUG lines of GroupMetadataManager
	// and the clients' ConsumerMembershipManager transitions, @4.4.0):
	//
	// ConsumerFirstAssignMs: the coordinator's first "Computed a new
	// target assignment … assignor in Nms" (a cold JVM's first assignor
	// run); ConsumerAssignMs: every later one's, in log order (whole ms).
	// ConsumerFirstHeartbeatMs: the first member to join: its "joins the
	// consumer group" → its "new assignment state" (the heartbeat's
	// handling on the event loop: the group's creation, its epoch bump,
	// the first assignor run). ConsumerFirstAnswerMs: that member's "new
	// assignment state" → its client's "transitioned from JOINING to
	// RECONCILING" (the answer received), less the veth one way: the
	// first write's commit (CoordinatorRuntime completes the heartbeat
	// when the high watermark passes its records) and the answer's
	// sending. ConsumerJoinAnswerMs: the same for every other member's
	// first heartbeat, in join order (its own records, committed behind
	// the earlier ones). Each with n = how many measured.
	ConsumerFirstAssignMs    *JoinCost `json:"consumer_first_assign_ms,omitempty"`
	ConsumerAssignMs         *JoinCost `json:"consumer_assign_ms,omitempty"`
	ConsumerFirstHeartbeatMs *JoinCost `json:"consumer_first_heartbeat_ms,omitempty"`
	ConsumerFirstAnswerMs    *JoinCost `json:"consumer_first_answer_ms,omitempty"`
	ConsumerJoinAnswerMs     *JoinCost `json:"consumer_join_answer_ms,omitempty"`
	Dropped                  []string  `json:"dropped,omitempty"`
	Notes                    []string  `json:"notes,omitempty"`
	NotMeasured              []string  `json:"not_measured"`
}

// JoinCost is one measured cost of a classic generation's join and sync
// over a repetition's generations: the mean and how many, and each
// generation's in the order it was measured (the group's first is its
// first append to __consumer_offsets, the cold one), rounded to 0.01 ms.
type JoinCost struct {
	Mean   float64   `json:"mean"`
	N      int       `json:"n"`
	Values []float64 `json:"values"`
	// LeftOut: the generations measured but left out (AssignMs: the
	// leader kept partitions through the rebalance).
	LeftOut int `json:"left_out,omitempty"`
}

// MeanDuration is the mean in whole microseconds.
func (c *JoinCost) MeanDuration() time.Duration {
	return time.Duration(math.Round(c.Mean*1e3)) * time.Microsecond
}

// loopbackOneWayMs is VethOneWay in ms, taken off the join costs: the
// logs' millisecond stamps do not resolve it.
var loopbackOneWayMs = float64(VethOneWay) / float64(time.Millisecond)

func joinCost(xs []float64) *JoinCost {
	if len(xs) == 0 {
		return nil
	}
	return &JoinCost{Mean: harness.Round(stat.Mean(xs, nil), 2), N: len(xs), Values: xs}
}

// consumerCosts measures the consumer-group coordinator's costs (Real's
// Consumer* fields) from the members' first consumer joins (member id →
// its "joins the consumer group" line, first processes only: idInc 1),
// their first "new assignment state" lines, their clients' first JOINING →
// RECONCILING and the assignor times in log order.
func consumerCosts(join map[string]int64, inc map[string]int, state, answer map[string]int64, took []float64) (firstAssign, assign, firstHB, firstAnswer, joinAnswer *JoinCost) {
	if len(took) > 0 {
		firstAssign, assign = joinCost(took[:1]), joinCost(slices.Clone(took[1:]))
	}
	ids := make([]string, 0, len(join))
	for id := range join {
		if inc[id] == 1 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(join[a], join[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var others []float64
	for i, id := range ids {
		st, ok := state[id]
		if !ok || st < join[id] {
			continue
		}
		if i == 0 {
			firstHB = joinCost([]float64{float64(st - join[id])})
		}
		at, ok := answer[id]
		if !ok || at < st {
			continue
		}
		d := harness.Round(float64(at-st)-loopbackOneWayMs, 2)
		if i == 0 {
			firstAnswer = joinCost([]float64{d})
		} else {
			others = append(others, d)
		}
	}
	return firstAssign, assign, firstHB, firstAnswer, joinCost(others)
}

// Result is one repetition's converted output.
type Result struct {
	harness.Summary
	Real Real `json:"real"`
}

type ev struct {
	ts   int64
	rank int // ties: fault, broker, client, driver
	seq  int
	f    *Record
	b    *BrokerEvent
	c    *ClientEvent
	d    *DriverEvent
	who  string // member (client, driver) or broker name
	inc  int    // client lines: the process incarnation (members/NAME.INC.log)
}

var reUUIDSuffix = regexp.MustCompile(`^(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// memberName is the member whose client.id (or group.instance.id) made a
// classic member id "<client.id>-<UUID>" (ConsumerCoordinator; the broker
// appends a UUID, GroupCoordinator.scala@v7.9.0 / GroupMetadataManager@v8.0.0).
func memberName(id string) string {
	if g := reUUIDSuffix.FindStringSubmatch(id); g != nil {
		return g[1]
	}
	return ""
}

// Load reads a repetition directory's logs, ordered on the one wall clock.
func Load(dir string) (*Meta, []ev, error) {
	var meta Meta
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v (the repetition did not finish)", dir, err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", filepath.Join(dir, "meta.json"), err)
	}
	var evs []ev
	add := func(e ev) { e.seq = len(evs); evs = append(evs, e) }
	for _, l := range readLines(filepath.Join(dir, "faults.jsonl")) {
		if l == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, nil, fmt.Errorf("faults.jsonl: %v", err)
		}
		ts := r.TsMs
		if (r.Kind == "start" || r.Kind == "host-up") && r.DoneMs > ts {
			// The go is the last thing a start does, after the previous
			// process has exited (Runner.waitExit): the member starts then.
			ts = r.DoneMs
		}
		add(ev{ts: ts, rank: 0, f: &r, who: r.Target})
	}
	src, err := openLogs(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range src.glob("brokers/broker-*.log") {
		name := strings.TrimSuffix(path.Base(f), ".log")
		if strings.HasSuffix(name, ".format") {
			continue
		}
		for _, l := range src.lines(f) {
			if e, ok := ParseBroker(l); ok {
				add(ev{ts: e.TsMs, rank: 1, b: &e, who: name})
			}
		}
	}
	for _, f := range src.glob("members/*.log") {
		base := strings.TrimSuffix(path.Base(f), ".log")
		dot := strings.LastIndexByte(base, '.')
		name := base[:dot]
		inc, _ := strconv.Atoi(base[dot+1:])
		for _, l := range src.lines(f) {
			if e, ok := ParseClient(l); ok {
				add(ev{ts: e.TsMs, rank: 2, c: &e, who: name, inc: inc})
			}
		}
	}
	for _, f := range src.glob("members/*.events.jsonl") {
		for _, l := range src.lines(f) {
			var d DriverEvent
			if json.Unmarshal([]byte(l), &d) != nil || d.Event == "" {
				continue // a JVM's own stdout line
			}
			add(ev{ts: d.TsMs, rank: 3, d: &d, who: d.Member})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].ts != evs[j].ts {
			return evs[i].ts < evs[j].ts
		}
		return evs[i].rank < evs[j].rank
	})
	return &meta, evs, nil
}

type memberState struct {
	name       string
	group      *groupConv
	pid        int // the live incarnation's pid, 0 when none
	alive      bool
	settledGen int32
	owned      []int // partition indexes
	leavePoll  bool  // the last LeaveGroup it sent was a poll-timeout leave
	coordAddr  string
	startedMs  int64 // live since (wall ms)
	firstJoin  bool
	goMs       int64
	// The live process's consumer-protocol client (KIP-848): its member
	// id and its state, from its own transition lines ("" for a classic
	// process, and until its first line).
	cid, cstate string
}

type groupConv struct {
	id        string
	consumer  bool
	parts     map[string]int
	nparts    int
	owners    []int32
	lastOwner []int32
	zero      int
	extra     int

	coordState string
	coordGen   int32
	open       bool
	openStart  int64
	openTrig   string
	firstGen   int32
	gens       int
	rebalances []harness.Rebalance
	settled    int
	live       int
	everStable bool

	deadMarks, falseDeadMarks int
	evictions, falseEvictions int
	leaves, fences            int
	generations, clientRebals int
	moved, movedAfterFault    int
	unowned, unownedAfter     float64
	doubleOwned               float64
	memberMs                  float64
	lastChange                int64
	tracking                  bool
	lastLeavePoll             bool
	fatal                     []string
	// Consumer protocol (KIP-848): the group epoch last bumped, and the
	// trigger of the next bump (the member line logged just before it).
	epoch       int32
	pendingTrig string
	// The coordinator's view of each member (DEBUG "new assignment
	// state" lines, GroupMetadataManager.java:2704@v8.0.0): the group is
	// Stable when every member the coordinator has is STABLE at the
	// target assignment of the last group epoch. The clients' own
	// transition lines print the epoch a member had before the heartbeat
	// [measured], and none when its assignment does not change: a
	// client's epoch is also read from these lines (maybeClose).
	cmembers map[string]cmember
	// Coordinator failovers (harness Failover): from a new coordinator's
	// election until the group is Stable and every live member has had a
	// successful Heartbeat or SyncGroup after the new coordinator finished
	// loading (loadedAt; -1 before).
	recovering           bool
	failoverAt, loadedAt int64
	confirmed            map[string]bool
	failovers            []harness.Failover
}

type cmember struct {
	epoch int32
	state string
	// assigned: the member's assigned partitions after its last "new
	// assignment state" line; nil before its first.
	assigned []string
}

// Convert turns a repetition directory into the summary of `simrun run
// --json` (docs/real-kafka-testbed.md §6.4): the same figures, defined as
// harness/metrics.go defines them, read from the broker, client and driver
// logs and the fault log.
func Convert(dir string) (*Result, error) {
	meta, evs, err := Load(dir)
	if err != nil {
		return nil, err
	}
	t0, end := meta.T0Ms, meta.T0Ms+meta.DurationMs
	from := t0 + meta.MeasureFromMs
	rel := func(ts int64) int64 { return ts - t0 }

	groups := map[string]*groupConv{}
	var order []*groupConv
	members := map[string]*memberState{}
	for _, g := range meta.Groups {
		gc := &groupConv{id: g.ID, consumer: g.Consumer, parts: map[string]int{}, coordGen: -1, cmembers: map[string]cmember{}, loadedAt: -1}
		for _, t := range g.Subscribe {
			for p := 0; p < meta.Partitions[t]; p++ {
				gc.parts[t+"-"+strconv.Itoa(p)] = gc.nparts
				gc.nparts++
			}
		}
		gc.owners, gc.lastOwner, gc.zero = make([]int32, gc.nparts), make([]int32, gc.nparts), gc.nparts
		groups[g.ID] = gc
		order = append(order, gc)
		for _, m := range g.Members {
			members[m] = &memberState{name: m, group: gc, settledGen: -1}
		}
	}
	slotID := map[string]int32{}
	for i, g := range meta.Groups {
		for j, m := range g.Members {
			slotID[m] = int32(i*100000 + j + 1)
		}
	}
	idOwner := map[string]int{} // member id → pid of the incarnation it belongs to
	brokerDown := map[string]bool{}
	coordinator := ""
	firstFault := int64(-1)
	for _, e := range evs {
		if e.f != nil && e.f.Fault != "start" && e.f.Kind != "prepare" && e.f.Err == "" { // a JVM started ahead is no fault
			firstFault = e.ts
			break
		}
	}
	// The members a fault touches (their notices are not the survivors').
	touched := map[string]bool{}
	for _, e := range evs {
		if e.f != nil && e.f.Fault != "start" {
			touched[e.f.Target] = true
		}
	}
	firstJoin, notice, lastHB := map[string]int64{}, map[string]int64{}, map[string]int64{}
	brokerJoin, clientMemberID := map[string]int64{}, map[string]int64{}
	consumerJoin := map[string]int64{} // consumer member id → its first join line
	// The consumer coordinator's costs: each member id's first "new
	// assignment state" and its client's first JOINING → RECONCILING
	// (first processes), the assignor times in log order.
	firstCState, joinAnswer := map[string]int64{}, map[string]int64{}
	var targetTook []float64
	idInc := map[string]int{} // consumer member id → the incarnation whose client logged it
	type hbKey struct {
		name string
		inc  int
	}
	lastBeat := map[hbKey]int64{}
	var beatGaps []float64
	sawBeats := false
	// The join costs of each classic generation (group, generation):
	// its Stabilized and Assignment received instants (-1: not yet).
	type genKey struct {
		group string
		gen   int32
	}
	type genCost struct{ stabilized, assigned int64 }
	genCosts := map[genKey]*genCost{}
	var assignMs, syncMs []float64
	assignBusy := 0 // generations whose leader kept partitions
	var lateness []float64
	var startToJoin, jvmToReady []float64
	jvmStart := map[int]int64{}

	integrate := func(g *groupConv, now int64) {
		if g.tracking && now > from {
			lo := max(g.lastChange, from)
			dt := float64(now-lo) / 1000
			g.unowned += dt * float64(g.zero)
			g.doubleOwned += dt * float64(g.extra)
			if firstFault >= 0 && now > firstFault {
				g.unownedAfter += float64(now-max(lo, firstFault)) / 1000 * float64(g.zero)
			}
		}
		g.lastChange = now
	}
	adjust := func(g *groupConv, i int, d int32) {
		before := g.owners[i]
		g.owners[i] += d
		after := g.owners[i]
		if before == 0 && after > 0 {
			g.zero--
		} else if before > 0 && after == 0 {
			g.zero++
		}
		g.extra += int(max(after-1, 0) - max(before-1, 0))
	}
	setOwned := func(m *memberState, now int64, owned []int) {
		g := m.group
		integrate(g, now)
		old := map[int]bool{}
		for _, i := range m.owned {
			adjust(g, i, -1)
			old[i] = true
		}
		for _, i := range owned {
			adjust(g, i, +1)
			if !old[i] {
				if prev := g.lastOwner[i]; prev != 0 && prev != slotID[m.name] && now >= from {
					g.moved++
					if firstFault >= 0 && now >= firstFault {
						g.movedAfterFault++
					}
				}
				g.lastOwner[i] = slotID[m.name]
			}
		}
		m.owned = owned
	}
	setCoordGen := func(g *groupConv, gen int32) {
		if gen == g.coordGen {
			return
		}
		g.coordGen, g.settled = gen, 0
		for _, m := range members {
			if m.group == g && m.alive && m.settledGen == gen {
				g.settled++
			}
		}
	}
	stableNow := func(g *groupConv) bool {
		if g.consumer { // every member reconciled at the target of the last epoch bump
			// … and every live process a member: the first member alone,
			// STABLE at once, had closed the initial join 154 ms after it
			// opened while five more processes were still joining
			// [measured: cal-consumer-crash, 4.4.0, rep 1].
			if g.coordGen < 0 || g.coordGen != g.epoch || len(g.cmembers) == 0 || len(g.cmembers) < g.live {
				return false
			}
			for _, cm := range g.cmembers {
				if cm.state != "STABLE" || cm.epoch != g.coordGen {
					return false
				}
			}
			return true
		}
		return g.coordState == "Stable"
	}
	// An episode closes as harness/metrics.go maybeCloseRebalance closes
	// it (DESIGN.md "What a run measures"): the group is Stable and every
	// live member is settled — a classic member holding its assignment of
	// the coordinator's generation, a consumer-protocol member's client
	// STABLE at the last epoch (after its onPartitionsAssigned callback on
	// the application thread: the ACKNOWLEDGING → STABLE line). Before, a
	// consumer group closed at the broker's last "state=STABLE" line,
	// before the members that got partitions had run their callbacks: 4997
	// against 5403 ms by the harness's rule [measured: cal-consumer-crash
	// 4.4.0 rep 3, the fence's episode].
	maybeClose := func(g *groupConv, now int64) {
		if !g.open || !stableNow(g) || g.settled < g.live {
			return
		}
		g.everStable = true
		g.open = false
		first := g.firstGen
		if first < 0 {
			first = g.coordGen
		}
		if g.openStart >= from && g.openStart <= end {
			g.rebalances = append(g.rebalances, harness.Rebalance{
				Generation: g.coordGen, FirstGeneration: first, Generations: g.gens,
				StartMs: rel(g.openStart), EndMs: rel(now), DurationMs: now - g.openStart,
				Trigger: g.openTrig, Members: g.live,
			})
		}
	}
	// newGeneration counts a completed join phase (classic) or a target
	// computed for a new epoch (consumer) at ts, in the figures and in the
	// open settle episode, and closes the episode if that settles it.
	newGeneration := func(g *groupConv, gen int32, ts int64) {
		setCoordGen(g, gen)
		if ts >= from {
			g.generations++
		}
		if g.open {
			if g.firstGen < 0 {
				g.firstGen = gen
			}
			g.gens++
		}
		maybeClose(g, ts)
	}
	unsettle := func(m *memberState) {
		if m.settledGen >= 0 && m.settledGen == m.group.coordGen {
			m.group.settled--
		}
		m.settledGen = -1
	}
	// settle: m holds its assignment of generation (classic) or is STABLE
	// at epoch (consumer protocol) gen since now (harness watcher.settle).
	settle := func(m *memberState, gen int32, now int64) {
		g := m.group
		if m.settledGen >= 0 && m.settledGen == g.coordGen {
			g.settled--
		}
		m.settledGen = gen
		if gen == g.coordGen {
			g.settled++
		}
		maybeClose(g, now)
	}
	maybeRecovered := func(g *groupConv, now int64) {
		if !g.recovering || g.loadedAt < 0 || !stableNow(g) {
			return
		}
		for _, m := range members {
			if m.group == g && m.alive && !g.confirmed[m.name] {
				return
			}
		}
		g.recovering = false
		if g.failoverAt >= from {
			g.failovers = append(g.failovers, harness.Failover{AtMs: rel(g.failoverAt), RecoveryMs: now - g.failoverAt})
		}
	}
	processEnd := func(m *memberState, now int64, crashed bool) {
		if !m.alive {
			return
		}
		g := m.group
		m.alive = false
		g.live--
		unsettle(m)
		if now > from {
			g.memberMs += float64(now - max(m.startedMs, from))
		}
		if crashed || len(m.owned) > 0 {
			setOwned(m, now, nil) // ownership ends with the process (TestMetricsCrashByHand)
		}
		maybeClose(g, now)
		maybeRecovered(g, now)
	}
	idName := map[string]string{} // consumer-protocol member ids (Uuids) → member
	removal := func(g *groupConv, id string, now int64, kind string) {
		name := memberName(id)
		if n, ok := idName[id]; ok {
			name = n
		}
		m := members[name]
		if kind == "leave" {
			if m != nil && m.leavePoll {
				g.evictions++
				g.falseEvictions++ // the process that left was alive: it was only slow
				return
			}
			g.leaves++
			return
		}
		g.evictions++
		alive := false
		if m != nil && m.alive {
			pid, known := idOwner[id]
			alive = !known || pid == m.pid
		}
		if alive {
			g.falseEvictions++
		}
	}

	n := 0
	for _, e := range evs {
		if e.ts > end {
			break
		}
		n++
		switch {
		case e.f != nil:
			r := e.f
			if r.Kind != "prepare" {
				lateness = append(lateness, float64(r.TsMs-(t0+r.AtMs)))
			}
			if r.Err != "" {
				continue
			}
			m := members[r.Target]
			switch r.Kind {
			case "start", "host-up":
				if m == nil {
					continue
				}
				g := m.group
				if !g.tracking {
					g.tracking, g.lastChange = true, e.ts
				}
				// The previous incarnation is gone by the new one's go
				// (Runner.waitExit); its own "closed" line, if it comes
				// later, is that process's, not this one's.
				processEnd(m, e.ts, false)
				m.alive, m.pid, m.startedMs, m.firstJoin, m.goMs = true, r.Pid, e.ts, false, e.ts
				m.cid, m.cstate = "", ""
				m.leavePoll = false
				g.live++
			case "kill", "host-down": // host-down: the process is gone with its host
				if m != nil {
					processEnd(m, e.ts, true)
				}
			case "broker-kill", "broker-term", "broker-host-down":
				brokerDown[r.Value] = true
			case "broker-start", "broker-host-up":
				brokerDown[r.Value] = false
			case "add-partitions":
				// The new partitions exist (unowned) from the
				// createPartitions request on.
				n, _ := strconv.Atoi(r.Value)
				for _, mg := range meta.Groups {
					g := groups[mg.ID]
					if g == nil || !slices.Contains(mg.Subscribe, r.Target) {
						continue
					}
					integrate(g, e.ts)
					for p := 0; p < n; p++ {
						k := r.Target + "-" + strconv.Itoa(p)
						if _, ok := g.parts[k]; ok {
							continue
						}
						g.parts[k] = g.nparts
						g.nparts++
						g.owners, g.lastOwner = append(g.owners, 0), append(g.lastOwner, 0)
						g.zero++
					}
				}
			}
		case e.b != nil:
			b := e.b
			if b.Kind == BrokerElected && b.Partition == 0 {
				if e.ts > t0 && e.who != coordinator { // a failover: the group moves to e.who
					for _, g := range order {
						if g.recovering && g.failoverAt >= from { // the previous one never recovered
							g.failovers = append(g.failovers, harness.Failover{AtMs: rel(g.failoverAt), RecoveryMs: -1})
						}
						g.recovering, g.failoverAt, g.loadedAt, g.confirmed = true, e.ts, -1, map[string]bool{}
					}
				}
				coordinator = e.who
				continue
			}
			if b.Kind == BrokerLoaded && b.Partition == 0 {
				for _, g := range order {
					if g.recovering && e.who == coordinator && g.loadedAt < 0 {
						g.loadedAt = e.ts
						maybeRecovered(g, e.ts)
					}
				}
				continue
			}
			if b.Kind == BrokerResigned && b.Partition == 0 && coordinator == e.who {
				coordinator = ""
				continue
			}
			g := groups[b.Group]
			if g == nil {
				continue
			}
			if b.Kind == BrokerMemberCreated {
				if n := memberName(b.Member); n != "" {
					if _, ok := brokerJoin[n]; !ok {
						brokerJoin[n] = rel(e.ts)
					}
				}
				continue
			}
			if b.Kind == BrokerConsumerJoin {
				if _, ok := consumerJoin[b.Member]; !ok {
					consumerJoin[b.Member] = e.ts
				}
			}
			switch b.Kind {
			case BrokerPreparing:
				prev := g.coordState
				g.coordState = "PreparingRebalance"
				if !g.open && (prev == "Stable" || prev == "Empty" || prev == "CompletingRebalance" || prev == "") {
					g.open, g.openStart, g.openTrig, g.firstGen, g.gens = true, e.ts, triggerOf(b.Reason, g), -1, 0
				}
				for _, id := range b.Members { // sync-timeout removals
					removal(g, id, e.ts, "sync")
				}
			case BrokerStabilized, BrokerEmpty:
				if b.Kind == BrokerEmpty {
					g.coordState = "Empty"
				} else {
					g.coordState = "CompletingRebalance"
					if !g.consumer {
						genCosts[genKey{g.id, b.Gen}] = &genCost{stabilized: e.ts, assigned: -1}
					}
				}
				newGeneration(g, b.Gen, e.ts)
			case BrokerStable:
				if gc := genCosts[genKey{g.id, b.Gen}]; gc != nil && gc.assigned < 0 {
					gc.assigned = e.ts
					// A leader that kept partitions through the rebalance
					// (cooperative) got records from poll() and handles its
					// JoinGroup answer only at its next poll(), after its
					// processing step: that wait is the poll loop's (the
					// model has it), not the assignment's.
					if lm := members[memberName(b.Member)]; lm != nil && len(lm.owned) > 0 {
						assignBusy++
					} else {
						assignMs = append(assignMs, harness.Round(float64(e.ts-gc.stabilized)-2*loopbackOneWayMs, 2))
					}
				}
				g.coordState = "Stable"
				g.everStable = true
				setCoordGen(g, b.Gen)
				maybeClose(g, e.ts)
				maybeRecovered(g, e.ts)
			case BrokerEvicted:
				removal(g, b.Member, e.ts, "session")
			case BrokerNotRejoined:
				for _, id := range b.Members {
					removal(g, id, e.ts, "rebalance")
				}
			case BrokerLeave:
				removal(g, b.Member, e.ts, "leave")
			case BrokerFenced:
				g.fences++
			// Consumer protocol (GroupMetadataManager.java@v8.3.0, §2.2): a
			// rebalance opens at a group epoch bump, named by the member line
			// just before it; a generation is a target assignment.
			case BrokerConsumerJoin:
				// A classic group turns into a consumer group at its
				// first consumer-protocol member (online upgrade,
				// rolling-restart with set: group.protocol: consumer);
				// from then on it settles as a consumer group.
				g.consumer = true
				g.pendingTrig = "join"
				g.cmembers[b.Member] = cmember{state: "JOINING"}
			case BrokerConsumerMember:
				if _, ok := firstCState[b.Member]; !ok {
					firstCState[b.Member] = e.ts
				}
				prev := g.cmembers[b.Member]
				g.cmembers[b.Member] = cmember{epoch: b.Gen, state: b.State, assigned: b.Assigned}
				// The heartbeat's response carries the member's new epoch,
				// and its assignment only if that changed
				// (GroupMetadataManager.consumerGroupHeartbeat,
				// hasAssignedPartitionsChanged @4.4.0). A STABLE client
				// whose assignment did not change takes the epoch without
				// a transition line (AbstractMembershipManager
				// .onHeartbeatSuccess, processAssignmentReceived @4.4.0):
				// it is STABLE at the new epoch from this line on (the
				// response reaches it a network hop later: ≈ 0.1 ms here,
				// and the harness settles it at its receipt). One whose
				// assignment changed reconciles and logs its own STABLE.
				if n, ok := idName[b.Member]; ok && prev.assigned != nil && slices.Equal(prev.assigned, b.Assigned) {
					if m := members[n]; m != nil && m.alive && m.cid == b.Member && m.cstate == "STABLE" {
						settle(m, b.Gen, e.ts)
					}
				}
				maybeClose(g, e.ts)
			case BrokerConsumerFenced:
				r := "other"
				switch {
				case strings.Contains(b.Reason, "session expired"):
					r = "session-expired"
				case strings.Contains(b.Reason, "failed to transition"), strings.Contains(b.Reason, "within the rebalance timeout"), strings.Contains(b.Reason, "failed to sync"):
					r = "rebalance-timeout"
				}
				g.pendingTrig = r
				delete(g.cmembers, b.Member)
				removal(g, b.Member, e.ts, "session")
			case BrokerConsumerLeave:
				g.pendingTrig = "leave"
				delete(g.cmembers, b.Member)
				removal(g, b.Member, e.ts, "leave")
			case BrokerEpochBump:
				g.epoch = b.Gen
				if !g.open {
					trig := g.pendingTrig
					if trig == "leave" && g.lastLeavePoll {
						trig = "poll-timeout"
					}
					if trig == "" {
						trig = "other"
					}
					g.open, g.openStart, g.openTrig, g.firstGen, g.gens = true, e.ts, trig, -1, 0
				}
				g.pendingTrig = ""
			case BrokerTargetAssignment:
				if b.TookMs >= 0 {
					targetTook = append(targetTook, float64(b.TookMs))
				}
				newGeneration(g, b.Gen, e.ts)
			}
		case e.c != nil:
			m := members[e.who]
			if m == nil {
				continue
			}
			c := e.c
			g := m.group
			if e.ts >= firstFault && firstFault >= 0 && !touched[e.who] {
				if _, ok := notice[e.who]; !ok && (c.Kind == ClientRejoinRequested || c.Kind == ClientJoining || c.Kind == ClientTransition && c.To == "RECONCILING") {
					notice[e.who] = rel(e.ts)
				}
			}
			if _, ok := firstJoin[e.who]; !ok && e.inc == 1 && (c.Kind == ClientJoining || c.Kind == ClientTransition && c.To == "JOINING") {
				firstJoin[e.who] = rel(e.ts)
			}
			if _, ok := clientMemberID[e.who]; !ok && e.inc == 1 && c.Kind == ClientRejoinRequested && strings.HasPrefix(c.Cause, "need to re-join with the given member-id") {
				clientMemberID[e.who] = rel(e.ts)
			}
			switch c.Kind {
			case ClientHeartbeatSent:
				sawBeats = true
				if firstFault >= 0 && e.ts <= firstFault {
					lastHB[e.who] = rel(e.ts)
				}
				k := hbKey{e.who, e.inc}
				if last, ok := lastBeat[k]; ok {
					beatGaps = append(beatGaps, float64(e.ts-last))
				}
				lastBeat[k] = e.ts
			case ClientJoining, ClientRejoinRequested, ClientDeadMark, ClientCoordinatorFound:
				// A new generation (the heartbeat thread stops and
				// restarts) or a coordinator lost and found (the next
				// heartbeat is a retry after retry.backoff.ms): not the
				// cadence [measured: cal-coordinator-kill 3.9.1 rep 1, mean
				// gap 2558 ms with them, 3 s + tens of ms without].
				delete(lastBeat, hbKey{e.who, e.inc})
			}
			switch c.Kind {
			case ClientHeartbeatOK, ClientSyncOK:
				if m.alive && g.recovering && g.loadedAt >= 0 && e.ts >= g.loadedAt {
					g.confirmed[m.name] = true
					maybeRecovered(g, e.ts)
				}
			case ClientSynced:
				// The first member's: every SyncGroup parked for the
				// leader's is answered when its append completes.
				k := genKey{g.id, c.Gen}
				if gc := genCosts[k]; gc != nil && gc.assigned >= 0 {
					syncMs = append(syncMs, harness.Round(float64(e.ts-gc.assigned)-loopbackOneWayMs, 2))
					delete(genCosts, k)
				}
			case ClientCoordinatorFound:
				m.coordAddr = c.Broker
			case ClientDeadMark:
				if e.ts < from {
					continue
				}
				g := m.group
				g.deadMarks++
				b := brokerOfAddr(c.Broker, meta.Brokers)
				if b != "" && !brokerDown[b] && (coordinator == "" || coordinator == b) {
					g.falseDeadMarks++
				}
			case ClientLeaveSent:
				m.leavePoll = strings.Contains(strings.ToLower(c.Cause), "poll timeout")
				m.group.lastLeavePoll = m.leavePoll
			case ClientTransition: // consumer protocol: settled when STABLE at its epoch
				idName[c.Member] = e.who
				m.cid, m.cstate = c.Member, c.To
				if _, ok := idInc[c.Member]; !ok {
					idInc[c.Member] = e.inc
				}
				if _, ok := joinAnswer[c.Member]; !ok && c.From == "JOINING" && c.To == "RECONCILING" {
					joinAnswer[c.Member] = e.ts
				}
				if !m.firstJoin && m.goMs > 0 && c.To == "JOINING" {
					startToJoin = append(startToJoin, float64(e.ts-m.goMs))
					m.firstJoin = true
				}
				if c.To != "STABLE" {
					unsettle(m)
					continue
				}
				settle(m, c.Gen, e.ts)
			case ClientJoining:
				if !m.firstJoin && m.goMs > 0 {
					startToJoin = append(startToJoin, float64(e.ts-m.goMs))
				}
				m.firstJoin = true
				unsettle(m)
			}
		case e.d != nil:
			m := members[e.who]
			if m == nil {
				continue
			}
			d := e.d
			g := m.group
			switch d.Event {
			case "jvm_start":
				jvmStart[d.Pid] = d.AtMs
			case "ready":
				if t, ok := jvmStart[d.Pid]; ok {
					jvmToReady = append(jvmToReady, float64(e.ts-t))
				}
			case "partitions_assigned":
				if d.MemberID != "" {
					idOwner[d.MemberID] = d.Pid
					idName[d.MemberID] = m.name
				}
				if e.ts >= from {
					g.clientRebals++
				}
				owned := slices.Clone(m.owned)
				for _, p := range d.Partitions {
					if i, ok := g.parts[p]; ok && !slices.Contains(owned, i) {
						owned = append(owned, i)
					}
				}
				setOwned(m, e.ts, owned)
				if m.cid != "" {
					continue // a consumer-protocol client: settled by its transition to STABLE
				}
				// A classic process, also in a group the broker has turned
				// into a consumer group (its generation is then its member
				// epoch, as the harness's classic client has it).
				settle(m, d.Generation, e.ts)
			case "partitions_revoked", "partitions_lost":
				owned := slices.DeleteFunc(slices.Clone(m.owned), func(i int) bool {
					for _, p := range d.Partitions {
						if j, ok := g.parts[p]; ok && j == i {
							return true
						}
					}
					return false
				})
				setOwned(m, e.ts, owned)
			case "closed":
				if m.pid == 0 || d.Pid == m.pid { // a predecessor's close ends nothing of the live process
					processEnd(m, e.ts, false)
				}
			case "fatal":
				g.fatal = append(g.fatal, d.Class+": "+d.Message)
				if m.pid == 0 || d.Pid == m.pid {
					processEnd(m, e.ts, false)
				}
			}
		}
	}
	res := &Result{}
	s := &res.Summary
	s.Scenario = meta.Scenario
	s.SimulatedMs = meta.DurationMs
	s.Events = int64(n)
	s.InvariantViolations = []harness.Violation{}
	s.MeasureFromMs = meta.MeasureFromMs
	s.Valid = true
	for _, g := range order {
		for _, m := range members {
			if m.group == g && m.alive && end > from {
				g.memberMs += float64(end - max(m.startedMs, from))
			}
		}
		integrate(g, end)
		stable := stableNow(g) && !g.open && g.settled >= g.live // harness stableAtEnd
		if g.open && g.openStart >= from {
			first := g.firstGen
			if first < 0 {
				first = g.coordGen
			}
			g.rebalances = append(g.rebalances, harness.Rebalance{Generation: g.coordGen, FirstGeneration: first, Generations: g.gens,
				StartMs: rel(g.openStart), EndMs: rel(end), DurationMs: end - g.openStart, Trigger: g.openTrig, Members: g.live, Incomplete: true})
		}
		if g.recovering && g.failoverAt >= from {
			g.failovers = append(g.failovers, harness.Failover{AtMs: rel(g.failoverAt), RecoveryMs: -1})
		}
		gs := harness.GroupSummary{
			ID: g.id, Rebalances: g.rebalances, RebalanceCount: len(g.rebalances),
			CoordinatorDeadMarks: g.deadMarks, FalseCoordinatorDeadMarks: g.falseDeadMarks,
			Evictions: g.evictions, FalseEvictions: g.falseEvictions,
			MemberHours:                            harness.Round(g.memberMs/1000/3600, 6),
			UnownedPartitionSeconds:                harness.Round(g.unowned, 3),
			UnownedPartitionSecondsAfterFirstFault: harness.Round(g.unownedAfter, 3),
			PartitionsMoved:                        g.moved, PartitionsMovedAfterFirstFault: g.movedAfterFault,
			DoubleOwnedPartitionSeconds: harness.Round(g.doubleOwned, 3),
			FinalGeneration:             max(g.coordGen, 0), StableAtEnd: stable, FatalErrors: g.fatal,
			SettleEpisodes: len(g.rebalances), Generations: g.generations, ClientRebalances: g.clientRebals,
			Leaves: g.leaves, Fences: g.fences, FirstFaultMs: -1, Failovers: g.failovers,
		}
		if firstFault >= 0 {
			gs.FirstFaultMs = rel(firstFault)
		}
		if gs.Rebalances == nil {
			gs.Rebalances = []harness.Rebalance{}
		}
		gs.RebalanceDurationMs = harness.RebalanceDurationStats(g.rebalances)
		gs.FillRates()
		s.Groups = append(s.Groups, gs)
		if s.Valid && len(g.fatal) > 0 {
			s.Valid, s.InvalidReason = false, "group "+g.id+": a member stopped on a fatal error ("+g.fatal[0]+")"
		}
		if s.Valid && !g.everStable {
			s.Valid, s.InvalidReason = false, "group "+g.id+" never reached Stable"
		}
	}
	startMs := map[string]int64{}
	for k, v := range meta.BrokerStartedMs {
		startMs[k] = v - meta.BrokerExecMs[k]
	}
	res.Real = Real{BrokerVersion: meta.BrokerVersion, ClientVersions: meta.ClientVersions, Dir: dir,
		WallMs: meta.WallMs, SetupMs: meta.SetupMs, BrokerStartMs: startMs,
		JVMToReadyMs: harness.DurationStats(jvmToReady), StartToFirstJoinMs: harness.DurationStats(startToJoin), TimelineLateMs: harness.DurationStats(lateness),
		LoadAvgStart: meta.LoadAvgStart, LoadAvgEnd: meta.LoadAvgEnd,
		Dropped: meta.Dropped, Notes: meta.Notes, NotMeasured: slices.Clone(NotMeasured),
		FirstJoinMs: firstJoin, RebalanceNoticeMs: notice}
	res.Real.HeartbeatGapMs, res.Real.HeartbeatGaps = heartbeatGap(beatGaps)
	res.Real.AssignMs, res.Real.SyncAppendMs = joinCost(assignMs), joinCost(syncMs)
	if res.Real.AssignMs != nil {
		res.Real.AssignMs.LeftOut = assignBusy
	}
	if len(assignMs) == 0 {
		res.Real.NotMeasured = append(res.Real.NotMeasured,
			"assign_ms (no classic generation with both its \"Stabilized group\" and \"Assignment received from leader\" broker lines and a leader that owned no partition: consumer protocol, every leader's SyncGroup after the group had moved on, or every leader kept partitions)")
	}
	if len(syncMs) == 0 {
		res.Real.NotMeasured = append(res.Real.NotMeasured,
			"sync_append_ms (no classic generation with its \"Assignment received from leader\" broker line and a member's \"Successfully synced group\" client line)")
	}
	res.Real.ConsumerFirstAssignMs, res.Real.ConsumerAssignMs, res.Real.ConsumerFirstHeartbeatMs,
		res.Real.ConsumerFirstAnswerMs, res.Real.ConsumerJoinAnswerMs = consumerCosts(consumerJoin, idInc, firstCState, joinAnswer, targetTook)
	for id, ts := range consumerJoin {
		// Only a member's first process: a restarted one's consumer join
		// (the classic → consumer migration) is not its first join.
		if n, ok := idName[id]; ok && idInc[id] == 1 {
			if prev, seen := brokerJoin[n]; !seen || rel(ts) < prev {
				brokerJoin[n] = rel(ts)
			}
		}
	}
	proxy := false
	for n, ts := range clientMemberID {
		if _, ok := brokerJoin[n]; !ok {
			brokerJoin[n], proxy = ts, true
		}
	}
	if len(lastHB) > 0 {
		res.Real.LastHeartbeatMs = lastHB
	}
	if len(brokerJoin) > 0 {
		res.Real.BrokerFirstJoinMs = brokerJoin
	}
	if proxy {
		res.Real.Notes = append(slices.Clone(res.Real.Notes), "broker_first_join_ms: for some members the client's receipt of MEMBER_ID_REQUIRED (the broker's line is not in this repetition's logs)")
	}
	if !sawBeats {
		res.Real.NotMeasured = append(res.Real.NotMeasured,
			"heartbeat_gap_ms and failovers[].recovery_ms (no DEBUG heartbeat line in this repetition's client logs: consumer protocol, or a run before the testbed logged them)")
	}
	return res, nil
}

// triggerOf names a Preparing line's reason in INTERFACE.md's trigger
// vocabulary (harness/metrics.go triggerName), from the reason strings of
// GroupCoordinator.scala@v7.9.0 and GroupMetadataManager.java@v8.0.0 (§2.1).
func triggerOf(reason string, g *groupConv) string {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "on heartbeat expiration"):
		return "session-expired"
	case strings.Contains(r, "pending sync request expiration"):
		return "rebalance-timeout"
	case strings.Contains(r, "leavegroup"):
		if strings.Contains(r, "poll timeout") || g.lastLeavePoll {
			return "poll-timeout"
		}
		return "leave"
	case strings.Contains(r, "metadata has changed") || strings.Contains(r, "subscription"):
		return "metadata"
	case strings.Contains(r, "adding new member") || strings.Contains(r, "joining group") || strings.Contains(r, "updating metadata for") || strings.Contains(r, "pending member"):
		return "join"
	case strings.Contains(r, "when storing group assignment"):
		return "append-error"
	}
	return "other"
}

// brokerOfAddr maps "10.77.0.2:9092" to "broker-1".
func brokerOfAddr(addr string, brokers int) string {
	for i := 0; i < brokers; i++ {
		if strings.HasPrefix(addr, BrokerHost(i).Addr+":") {
			return "broker-" + strconv.Itoa(i)
		}
	}
	return ""
}

// heartbeatGap is the mean of the gaps between half and twice their median
// (a pause or a stalled thread, a retry, left out), rounded to 0.1 ms, and
// how many there are.
func heartbeatGap(gaps []float64) (float64, int) {
	if len(gaps) == 0 {
		return 0, 0
	}
	s := slices.Clone(gaps)
	slices.Sort(s)
	med := s[len(s)/2]
	sum, n := 0.0, 0
	for _, g := range s {
		if g >= med/2 && g <= 2*med {
			sum += g
			n++
		}
	}
	return harness.Round(sum/float64(n), 1), n
}
