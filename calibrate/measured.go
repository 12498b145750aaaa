package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/realkafka"
	"github.com/rebalsim/rebalsim/scenario"
)

// DefaultLatencyOneWay is the testbed's veth one-way latency when a
// repetition did not record its measurement.
const DefaultLatencyOneWay = realkafka.VethOneWay

// Rep is one finished real repetition: its converted summary and the
// measured facts the matched simulation is fed.
type Rep struct {
	N       int // 1-based
	Dir     string
	Summary harness.Summary
	Real    realFacts
	Meta    realkafka.Meta
	// FaultAtMs: each scenario fault's measured instant (ms after t0), by
	// the fault's description in faults.jsonl.
	FaultAtMs map[string]int64
	// FaultTarget: the target of each fault's first action (a join's new
	// member).
	FaultTarget map[string]string
	// StartMs: each member's "go" instant (ms after t0), from faults.jsonl.
	StartMs map[string]int64
	// FirstRecords: each process incarnation's first non-empty
	// assignment and first poll with records ("member.inc"), from the
	// driver events (realkafka.FirstRecordsOf).
	FirstRecords map[string]realkafka.FirstRecords
}

// realFacts is the part of summary.json's `real` section calibrate reads
// (calib-interface: every field optional; a missing one falls back).
type realFacts struct {
	BrokerVersion      string             `json:"broker_version"`
	ClientVersions     map[string]string  `json:"client_versions"`
	WallMs             int64              `json:"wall_ms"`
	SetupMs            int64              `json:"setup_ms"`
	StartToFirstJoinMs harness.Stats      `json:"start_to_first_join_ms"`
	TimelineLateMs     harness.Stats      `json:"timeline_late_ms"`
	FirstJoinMs        map[string]float64 `json:"first_join_ms"`
	// BrokerFirstJoinMs: when the broker received each member's first
	// join (calib-interface: a warm broker's instant, without the fresh
	// broker's cold path); preferred over FirstJoinMs when present.
	BrokerFirstJoinMs map[string]float64 `json:"broker_first_join_ms"`
	HeartbeatGapMs    json.RawMessage    `json:"heartbeat_gap_ms"`
	LatencyOneWayMs   float64            `json:"latency_one_way_ms"`
	RebalanceNoticeMs map[string]float64 `json:"rebalance_notice_ms"`
	// LastHeartbeatMs: each member's last heartbeat sent at or before the
	// first fault (ms after t0): the phase of the fault in the group's
	// heartbeat cycle (phaseShift).
	LastHeartbeatMs map[string]float64 `json:"last_heartbeat_ms"`
	// AssignMs, SyncAppendMs: the classic join's measured costs per
	// generation (realkafka.Real): the leader's assignment (Stabilized →
	// Assignment received) and the group record's append with the
	// SyncGroup answer (Assignment received → first synced).
	AssignMs     *realkafka.JoinCost `json:"assign_ms"`
	SyncAppendMs *realkafka.JoinCost `json:"sync_append_ms"`
	// The consumer-group coordinator's measured costs (realkafka.Real's
	// Consumer* fields): the first and later assignor runs, the first
	// member's first heartbeat's handling and its answer's commit.
	ConsumerFirstAssignMs    *realkafka.JoinCost `json:"consumer_first_assign_ms"`
	ConsumerAssignMs         *realkafka.JoinCost `json:"consumer_assign_ms"`
	ConsumerFirstHeartbeatMs *realkafka.JoinCost `json:"consumer_first_heartbeat_ms"`
	ConsumerFirstAnswerMs    *realkafka.JoinCost `json:"consumer_first_answer_ms"`
	NotMeasured              []string            `json:"not_measured"`
}

// heartbeatGap is the measured mean gap between heartbeats (ms), NaN when
// not recorded; a per-member map is averaged in member order.
func (f *realFacts) heartbeatGap() float64 {
	if len(f.HeartbeatGapMs) == 0 {
		return math.NaN()
	}
	var x float64
	if json.Unmarshal(f.HeartbeatGapMs, &x) == nil {
		return x
	}
	var m map[string]float64
	if json.Unmarshal(f.HeartbeatGapMs, &m) == nil && len(m) > 0 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sum := 0.0
		for _, k := range keys {
			sum += m[k]
		}
		return sum / float64(len(keys))
	}
	return math.NaN()
}

// repDir is where repetition n of a scenario on a broker version lives.
func repDir(out, scen, version string, n int) string {
	return filepath.Join(out, "real", scen, "kafka-"+version, fmt.Sprintf("rep-%03d", n))
}

// isDone reports whether a repetition directory holds a finished one.
func isDone(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "done"))
	return err == nil
}

// readReps reads the finished repetitions of one scenario on one version,
// in repetition order (every rep-NNN with a done marker).
func readReps(out, scen, version string) ([]*Rep, error) {
	base := filepath.Join(out, "real", scen, "kafka-"+version)
	ents, err := os.ReadDir(base)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var reps []*Rep
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "rep-%03d", &n); err != nil || !e.IsDir() || fmt.Sprintf("rep-%03d", n) != e.Name() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if !isDone(dir) {
			continue
		}
		r, err := readRep(dir, n)
		if err != nil {
			return nil, err
		}
		reps = append(reps, r)
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].N < reps[j].N })
	return reps, nil
}

func readRep(dir string, n int) (*Rep, error) {
	r := &Rep{N: n, Dir: dir, FaultAtMs: map[string]int64{}, FaultTarget: map[string]string{}, StartMs: map[string]int64{}}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, fmt.Errorf("repetition %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &r.Summary); err != nil {
		return nil, fmt.Errorf("repetition %s: summary.json: %w", dir, err)
	}
	var wrap struct {
		Real realFacts `json:"real"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return nil, fmt.Errorf("repetition %s: summary.json: %w", dir, err)
	}
	r.Real = wrap.Real
	if mb, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
		if err := json.Unmarshal(mb, &r.Meta); err != nil {
			return nil, fmt.Errorf("repetition %s: meta.json: %w", dir, err)
		}
	}
	if r.FirstRecords, err = realkafka.FirstRecordsOf(dir); err != nil {
		return nil, fmt.Errorf("repetition %s: %w", dir, err)
	}
	fb, err := os.ReadFile(filepath.Join(dir, "faults.jsonl"))
	if err != nil {
		if os.IsNotExist(err) {
			return r, nil
		}
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(fb))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec realkafka.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("repetition %s: faults.jsonl: %w", dir, err)
		}
		at := rec.TsMs - r.Meta.T0Ms
		if r.Meta.T0Ms == 0 {
			at = rec.AtMs
		}
		if rec.Kind == "start" && rec.Fault == "start" {
			if rec.DoneMs > rec.TsMs && r.Meta.T0Ms != 0 {
				// The go is the last thing a start does (realkafka's
				// converter reads the member's start as done_ms).
				at = rec.DoneMs - r.Meta.T0Ms
			}
			if _, ok := r.StartMs[rec.Target]; !ok {
				r.StartMs[rec.Target] = at
			}
			continue
		}
		if rec.Kind == "prepare" {
			continue // a member's JVM started ahead of its fault, not the fault
		}
		if rec.Kind == "start" && rec.DoneMs > rec.TsMs && r.Meta.T0Ms != 0 {
			at = rec.DoneMs - r.Meta.T0Ms // the go, after the old process exited
		}
		if old, ok := r.FaultAtMs[rec.Fault]; !ok || at < old {
			r.FaultAtMs[rec.Fault] = at
			r.FaultTarget[rec.Fault] = rec.Target
		}
	}
	return r, sc.Err()
}

// faultKey is how faults.jsonl names a scenario fault (realkafka.NewPlan's
// description of the fault its actions come from).
func faultKey(f *scenario.Fault) string {
	return fmt.Sprintf("{at: %v, %s: %s}", f.At, f.Kind, f.Target)
}

// Match returns the scenario as the repetition ran it, where the testbed
// is a measured fact: the measured one-way latency; each member a cohort
// of its own starting at its measured first join (memberStart; no phase
// drawn); each fault at its measured instant (no phase drawn; a join's
// member at its first join, joinStart). It also says what it fed and what
// it fell back on. sc is not modified (the copy shares the slices it does
// not change).
func Match(sc *scenario.Scenario, r *Rep) (*scenario.Scenario, []string) {
	m := *sc
	var notes []string
	lat := DefaultLatencyOneWay
	if r.Real.LatencyOneWayMs > 0 {
		lat = time.Duration(math.Round(r.Real.LatencyOneWayMs * 1e6))
	} else {
		notes = append(notes, "latency: not recorded, the testbed's 0.05 ms one way")
	}
	m.Network.Latency = scenario.Dist{Kind: scenario.DistConstant, Value: lat}
	if d, ok := measuredAppend(sc, r); ok {
		m.Coordinator.AppendLatency = scenario.Dist{Kind: scenario.DistConstant, Value: d}
		m.Coordinator.AppendLatencySet = true
		notes = append(notes, fmt.Sprintf("sync append: measured %g ms (%d generation(s)) as the coordinator's append.latency %v (real.sync_append_ms)", r.Real.SyncAppendMs.Mean, r.Real.SyncAppendMs.N, d))
	}
	notes = append(notes, feedConsumerCosts(sc, r, &m.Coordinator)...)

	// One cohort per member at its measured first join.
	startNote, overshootNote, assignNote := false, false, false
	m.Groups = nil
	for _, g := range sc.Groups {
		for i := 0; i < g.Members; i++ {
			name := scenario.MemberName(g.ID, g.FirstIndex+i)
			at, how := memberStart(r, name, g.Start.At+time.Duration(i)*g.Start.Stagger)
			if how != "" && !startNote {
				notes = append(notes, "member starts: "+how)
				startNote = true
			}
			c := g
			c.Members = 1
			c.FirstIndex = g.FirstIndex + i
			c.Start = scenario.Start{At: at, Exact: true}
			if o, ok := measuredOvershoot(r, &c); ok {
				c.Workload.WaitOvershoot, c.Workload.WaitOvershootSet = o, true
				if !overshootNote {
					notes = append(notes, fmt.Sprintf("heartbeat cadence: the measured %.1f ms between heartbeats as the heartbeat thread's wait overshoot %v (real.heartbeat_gap_ms)", r.Real.heartbeatGap(), o))
					overshootNote = true
				}
			}
			if d, ok := measuredAssign(r, &c); ok {
				c.Workload.AssignTime, c.Workload.AssignTimeSet = scenario.Dist{Kind: scenario.DistConstant, Value: d}, true
				if !assignNote {
					notes = append(notes, fmt.Sprintf("assignment: measured %g ms (%d generation(s)) as assign.time (real.assign_ms)", r.Real.AssignMs.Mean, r.Real.AssignMs.N))
					assignNote = true
				}
			}
			m.Groups = append(m.Groups, c)
		}
		if g.Members == 0 { // an entry that only join faults fill
			m.Groups = append(m.Groups, g)
		}
	}
	cohort := map[string]int{}
	for i := range m.Groups {
		m.Groups[i].Cohort = cohort[m.Groups[i].ID]
		cohort[m.Groups[i].ID]++
	}

	m.Faults = slices.Clone(sc.Faults)
	missing := 0
	for i := range m.Faults {
		f := &m.Faults[i]
		key := faultKey(f)
		if at, ok := r.FaultAtMs[key]; ok {
			f.At = time.Duration(at) * time.Millisecond
			f.Jitter, f.JitterSet = 0, true
			if at, ok := r.joinStart(f, key); ok {
				f.At = at
			}
		} else {
			missing++
		}
	}
	if missing > 0 {
		notes = append(notes, fmt.Sprintf("%d fault(s) without a recorded instant: their phase drawn as written", missing))
	}
	scenario.SortFaults(m.Faults)
	if seeds, classic, consumer := driverSeeds(sc, r); len(seeds) > 0 {
		m.DriverSeeds = seeds
		note := fmt.Sprintf("workload draws: %d classic process incarnation(s) replay their driver's poll.interval/poll.timeout/callback.time draws from their own seed (meta.json driver_seeds)", classic)
		if consumer > 0 {
			note += fmt.Sprintf("; %d consumer-protocol incarnation(s) draw from their stream (the model has no per-poll loop to replay)", consumer)
		}
		notes = append(notes, note)
		m.FirstRecords = map[string]time.Duration{}
		for key, fr := range r.FirstRecords { // a copy: the order does not matter
			if _, ok := seeds[key]; ok {
				if g := groupOf(sc, key); g != nil && !incarnationConsumer(sc, g, key) {
					m.FirstRecords[key] = time.Duration(fr.RecordsMs-fr.AssignedMs) * time.Millisecond
				}
			}
		}
		if len(m.FirstRecords) > 0 {
			notes = append(notes, fmt.Sprintf("first records: %d replayed incarnation(s) start their processing steps after their measured wait for records (the driver's first non-empty partitions_assigned → first_records)", len(m.FirstRecords)))
		}
	}
	return &m, notes
}

// driverSeeds is the repetition's driver seed of each process incarnation
// ("member.inc" → seed, meta.json driver_seeds; a restarted process has its
// own), which a classic member incarnation of the matched run draws its
// workload from (harness/replay.go), and how many of them run the classic
// and the consumer protocol (incarnationConsumer). Nil when the repetition
// recorded none.
func driverSeeds(sc *scenario.Scenario, r *Rep) (seeds map[string]int64, classic, consumer int) {
	if len(r.Meta.DriverSeeds) == 0 {
		return nil, 0, 0
	}
	for key := range r.Meta.DriverSeeds { // a count: the order does not matter
		g := groupOf(sc, key)
		switch {
		case g == nil:
		case incarnationConsumer(sc, g, key):
			consumer++
		default:
			classic++
		}
	}
	return maps.Clone(r.Meta.DriverSeeds), classic, consumer
}

// incarnationConsumer reports whether the process incarnation key
// ("member.inc") of group g runs the consumer protocol: g's own protocol,
// or, for a later incarnation (inc > 1), a rolling restart of g with
// `set: {group.protocol: consumer}` (the harness starts the group's
// processes with the new settings from that restart on: faults.go
// rollingStep). It takes a member's incarnations after the first as the
// rolling restart's, which holds for the suite's migration (one restart
// per member); a scenario that also restarts a member before its rolling
// restart would have that earlier incarnation counted as consumer here.
// Only the notes depend on it: the harness replays no consumer-protocol
// incarnation whatever the seeds say.
func incarnationConsumer(sc *scenario.Scenario, g *scenario.Group, key string) bool {
	if g.Consumer() {
		return true
	}
	dot := strings.LastIndexByte(key, '.')
	if dot < 0 || key[dot+1:] == "1" {
		return false
	}
	return slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool {
		return f.Kind == scenario.FaultRollingRestart && f.Target == g.ID && f.Set != nil && f.Set.GroupProtocol == scenario.ProtocolConsumer
	})
}

// groupOf is the group entry of a "member.inc" key's member (its name is
// the group id, "-", its index; the longest matching id), or nil.
func groupOf(sc *scenario.Scenario, key string) *scenario.Group {
	var best *scenario.Group
	for i := range sc.Groups {
		g := &sc.Groups[i]
		if strings.HasPrefix(key, g.ID+"-") && (best == nil || len(g.ID) > len(best.ID)) {
			best = g
		}
	}
	return best
}

// feedConsumerCosts sets the consumer-group coordinator's costs
// (model/consumer/coordinator Costs) that the repetition measured, and
// says what it fed: consumer.first.target.time, the first member's first
// heartbeat's handling ("joins the consumer group" → its "new assignment
// state", real.consumer_first_heartbeat_ms; else the coordinator's first
// assignor run, real.consumer_first_assign_ms: a migration's first
// consumer heartbeat is not the group's creation); consumer.assign.time,
// the later assignor runs' mean (real.consumer_assign_ms; the log's whole
// ms: mostly 0 or 1); consumer.first.append.latency, the first answer's
// wait for its commit (real.consumer_first_answer_ms). Each a constant in
// whole microseconds (a group that speaks the consumer protocol, or a
// rolling restart that moves one to it). consumer.append.latency is not fed: the lines
// resolve only the members' first heartbeats' answers
// (real.consumer_join_answer_ms), on a still cold broker and behind the
// first write, not a later write's commit; the model's 0 stays. None for
// a scenario without consumer groups or one that writes its own costs.
func feedConsumerCosts(sc *scenario.Scenario, r *Rep, c *scenario.Coordinator) []string {
	consumer := slices.ContainsFunc(sc.Groups, func(g scenario.Group) bool { return g.Consumer() }) ||
		slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool { return f.Set != nil && f.Set.GroupProtocol == scenario.ProtocolConsumer })
	if sc.Coordinator.ConsumerCostsSet || sc.Coordinator.ConsumerProfile == "" || !consumer {
		return nil
	}
	var fed []string
	first, what := r.Real.ConsumerFirstHeartbeatMs, "the first member's first heartbeat, real.consumer_first_heartbeat_ms"
	if first == nil || first.N == 0 {
		first, what = r.Real.ConsumerFirstAssignMs, "the first assignor run, real.consumer_first_assign_ms"
	}
	if first != nil && first.N > 0 {
		c.ConsumerFirstTargetTime = first.MeanDuration()
		fed = append(fed, fmt.Sprintf("%g ms as consumer.first.target.time (%s)", first.Mean, what))
	}
	if a := r.Real.ConsumerAssignMs; a != nil && a.N > 0 {
		c.ConsumerAssignTime = a.MeanDuration()
		fed = append(fed, fmt.Sprintf("%g ms (%d run(s)) as consumer.assign.time (real.consumer_assign_ms)", a.Mean, a.N))
	}
	if a := r.Real.ConsumerFirstAnswerMs; a != nil && a.N > 0 {
		c.ConsumerFirstAppendLatency = max(a.MeanDuration(), 0)
		fed = append(fed, fmt.Sprintf("%g ms as consumer.first.append.latency (real.consumer_first_answer_ms)", a.Mean))
	}
	if len(fed) == 0 {
		return nil
	}
	return []string{"consumer coordinator: measured " + strings.Join(fed, ", ") + "; consumer.append.latency not measured, 0"}
}

// measuredOvershoot is the classic heartbeat thread's wait overshoot that
// gives the repetition's measured heartbeat cadence: HeartbeatThread.run
// waits retry.backoff.ms between iterations and restarts its grid at each
// heartbeat sent (model/classic/client/hbgrid.go), so a heartbeat goes out
// ceil(interval / backoff) waits after the last and the measured gap less
// the interval, spread over those waits, is each wait's lateness. None for
// a consumer-protocol group (no such thread), when the cadence was not
// measured, or when the scenario writes its own wait.overshoot.
func measuredOvershoot(r *Rep, g *scenario.Group) (time.Duration, bool) {
	gap := r.Real.heartbeatGap()
	if g.Consumer() || g.Workload.WaitOvershootSet || math.IsNaN(gap) || g.Client.HeartbeatInterval <= 0 || g.Client.RetryBackoff <= 0 {
		return 0, false
	}
	interval, backoff := g.Client.HeartbeatInterval, g.Client.RetryBackoff
	waits := (interval + backoff - 1) / backoff
	late := time.Duration((gap - float64(interval.Milliseconds())) * float64(time.Millisecond))
	if late <= 0 {
		return 0, true
	}
	// Whole microseconds keep the matched scenario readable.
	return (late / waits).Round(time.Microsecond), true
}

// measuredAssign is the leader's assignment time that the repetition
// measured (real.assign_ms: the coordinator's JoinGroup answers → the
// leader's SyncGroup: its assignor run in ConsumerCoordinator
// .onLeaderElected @3.9.0-rc3, less the round trip), as the workload's
// assign.time: the model's leader is busy that long between its JoinGroup
// answer and its SyncGroup (model/classic/client/join.go onJoinLeader). A
// constant, the repetition's mean: a generation's own is not known to the
// model (the group's first, on a cold JVM, is the longest: cal-rolling-eager
// 3.9.1, 59–94 ms for the first and 10–42 ms for the six after). None
// for a consumer-protocol group, when not measured, or when the scenario
// writes its own assign.time. Whole microseconds.
func measuredAssign(r *Rep, g *scenario.Group) (time.Duration, bool) {
	a := r.Real.AssignMs
	if g.Consumer() || g.Workload.AssignTimeSet || a == nil || a.N == 0 || a.Mean < 0 {
		return 0, false
	}
	return a.MeanDuration(), true
}

// measuredAppend is the group record's append that the repetition measured
// (real.sync_append_ms: the leader's SyncGroup → the first member synced,
// GroupCoordinator.doSyncGroup → GroupMetadataManager.storeGroup →
// appendForGroup with offsets.commit.required.acks, -1, @3.9.0-rc3, less
// the answer's one way), as the coordinator's
// append.latency, the repetition's mean as a constant. The model's
// append.latency delays every storeGroup (model/classic/coordinator
// append.go): the SyncGroup's, a static member's replacement in Stable and
// the Empty group's record — in Kafka one path (appendForGroup to the
// group's __consumer_offsets partition), so the measured SyncGroup append
// stands for all three; offset commits, the other appends Kafka makes
// there, are answered at once in the model (OffsetCommit has only its
// membership effects) and are not delayed by it. With the Java
// coordinator's fixed append linger (4.0–4.1: 5 ms) the record waits in
// the open batch before the append starts; the model adds that wait
// itself (linger.go), so it is taken off. None when not measured or when
// the scenario writes its own append.latency.
func measuredAppend(sc *scenario.Scenario, r *Rep) (time.Duration, bool) {
	a := r.Real.SyncAppendMs
	if sc.Coordinator.AppendLatencySet || a == nil || a.N == 0 {
		return 0, false
	}
	d := a.MeanDuration()
	if !sc.Coordinator.AppendLingerAdaptive {
		d -= sc.Coordinator.AppendLinger
	}
	return max(d, 0), true
}

// memberStart is when the broker received a member's first join (ms after
// t0), else the member's measured first JoinGroup, else its recorded go
// plus the repetition's mean start → first JoinGroup, else the written
// start; the second result names a fallback ("" for none).
func memberStart(r *Rep, name string, written time.Duration) (time.Duration, string) {
	if ms, ok := r.Real.BrokerFirstJoinMs[name]; ok {
		// A first member's first join comes before the first fault; one
		// after it is another join (the converter found no earlier one:
		// a migration's consumer-protocol join), not this member's start.
		if first := r.firstFaultMs(); first < 0 || ms < float64(first) {
			return time.Duration(math.Round(ms * 1e6)), ""
		}
	}
	if ms, ok := r.Real.FirstJoinMs[name]; ok {
		return time.Duration(math.Round(ms * 1e6)), ""
	}
	if at, ok := r.StartMs[name]; ok {
		return time.Duration(float64(at)*1e6 + math.Round(r.Real.StartToFirstJoinMs.Mean*1e6)), "first JoinGroup not recorded per member: the recorded start plus the mean start → first JoinGroup"
	}
	return written, "not recorded: as written, no phase drawn"
}

// joinStart is when a join fault's member starts in the matched run: as
// the first members do, at its measured first JoinGroup (its JVM's start
// is not the model's), else the fault's go plus the repetition's mean
// start → first JoinGroup. ok is false for any other fault.
func (r *Rep) joinStart(f *scenario.Fault, key string) (time.Duration, bool) {
	if f.Kind != scenario.FaultJoin {
		return 0, false
	}
	if ms, ok := r.Real.FirstJoinMs[r.FaultTarget[key]]; ok {
		return time.Duration(math.Round(ms * 1e6)), true
	}
	at, ok := r.FaultAtMs[key]
	if !ok || r.Real.StartToFirstJoinMs.Mean <= 0 {
		return 0, false
	}
	return time.Duration(float64(at)*1e6 + math.Round(r.Real.StartToFirstJoinMs.Mean*1e6)), true
}

// faultsAsMade maps each instant (ms) Match moved a join fault to (its
// member's first JoinGroup) to the instant the fault was made (its go):
// fault-relative figures count from the fault as made on both sides.
func faultsAsMade(sc *scenario.Scenario, r *Rep) map[int64]int64 {
	out := map[int64]int64{}
	for i := range sc.Faults {
		f := &sc.Faults[i]
		key := faultKey(f)
		if at, ok := r.joinStart(f, key); ok {
			out[at.Milliseconds()] = r.FaultAtMs[key]
		}
	}
	return out
}

// firstFaultMs is the earliest fault instant the repetition recorded (ms
// after t0), -1 without one.
func (r *Rep) firstFaultMs() int64 {
	first := int64(-1)
	for _, at := range r.FaultAtMs {
		if first < 0 || at < first {
			first = at
		}
	}
	return first
}

// phaseShift is how far to move the matched run's faults so that each
// falls at the phase of the simulated heartbeat cycle at which the real
// fault fell in the real one: the fault came fault − realLast after a
// member's real last heartbeat, so it moves to simLast + (fault −
// realLast), by simLast − realLast, taken modulo the heartbeat interval
// into (−interval/2, interval/2] (the two cycles differ by the real
// group's cold first sync and its heartbeat drift, and the wrap keeps a
// member whose heartbeat came just after the fault on one side and just
// before it on the other from counting a whole interval). For a fault on
// one member (target) that member's own shift decides — its eviction or
// leave follows its own cycle; otherwise the mean of the members' shifts.
// Rounded to the ms; ok is false when no member has a heartbeat on both
// sides.
func phaseShift(realLast, simLast map[string]float64, interval time.Duration, target string) (time.Duration, int, bool) {
	if interval <= 0 {
		return 0, 0, false
	}
	iv := float64(interval) / 1e6
	wrap := func(d float64) float64 {
		d = math.Mod(d, iv)
		if d > iv/2 {
			d -= iv
		} else if d <= -iv/2 {
			d += iv
		}
		return d
	}
	if r, ok := realLast[target]; ok {
		if sl, ok := simLast[target]; ok {
			return time.Duration(math.Round(wrap(sl-r))) * time.Millisecond, 1, true
		}
	}
	names := make([]string, 0, len(realLast))
	for k := range realLast {
		if _, ok := simLast[k]; ok {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return 0, 0, false
	}
	slices.Sort(names)
	sum := 0.0
	for _, k := range names {
		sum += wrap(simLast[k] - realLast[k])
	}
	return time.Duration(math.Round(sum/float64(len(names)))) * time.Millisecond, len(names), true
}

// firstFaultTarget is the member the scenario's first fault is on ("" when
// it is not on one member: a group's join or rolling restart, a broker).
func firstFaultTarget(sc *scenario.Scenario) string {
	if len(sc.Faults) == 0 {
		return ""
	}
	f := sc.Faults[0]
	for i := range sc.Faults {
		if sc.Faults[i].At < f.At {
			f = sc.Faults[i]
		}
	}
	if _, _, ok := sc.ResolveMember(f.Target); ok {
		return f.Target
	}
	return ""
}

// shiftFaults returns sc with every fault moved by d (a copy).
func shiftFaults(sc *scenario.Scenario, d time.Duration) *scenario.Scenario {
	m := *sc
	m.Faults = slices.Clone(sc.Faults)
	for i := range m.Faults {
		m.Faults[i].At += d
	}
	return &m
}
