package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/realkafka"
	"github.com/rebalsim/rebalsim/scenario"
)

// fakeT0 stands for a repetition's wall-clock t0 (Unix ms).
const fakeT0 = 1_796_000_000_000

// fakeRunner is a RepFunc without Java or root: a "real" repetition is a
// simulated run on its own seed (1000 + rep), with testbed facts made up
// per repetition (members' first JoinGroup 0.3 s + 40 ms × rep after their
// written start, a cold JVM's stand-in; each fault 137 ms × rep late) and
// fed to the run (the classic members joining 0.8 s after the instant
// reported), written in the files a real repetition leaves:
// summary.json, meta.json, faults.jsonl. calls counts the repetitions
// made; cancel, when set, is called before repetition number cancelAt
// (1-based over calls) and the repetition then fails as an interrupted
// one does.
type fakeRunner struct {
	calls    int
	cancelAt int
	cancel   context.CancelFunc
	failAt   int // this call fails as a broken repetition does (0: none)
}

func (f *fakeRunner) run(ctx context.Context, plan *realkafka.Plan, dir string, rep int) error {
	f.calls++
	if f.cancel != nil && f.calls == f.cancelAt {
		f.cancel()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if f.calls == f.failAt {
		_ = os.WriteFile(filepath.Join(dir, "half.log"), []byte("a JVM died\n"), 0o644)
		return errors.New("broker-0 did not start")
	}
	sc := plan.Scenario
	first := map[string]float64{}
	var faults []realkafka.Record
	for _, g := range sc.Groups {
		for i := 0; i < g.Members; i++ {
			name := scenario.MemberName(g.ID, g.FirstIndex+i)
			at := g.Start.At + time.Duration(i)*g.Start.Stagger
			first[name] = float64((at + 300*time.Millisecond + time.Duration(rep)*40*time.Millisecond).Milliseconds())
			faults = append(faults, realkafka.Record{AtMs: at.Milliseconds(), TsMs: fakeT0 + at.Milliseconds(), Kind: "start", Target: name, Fault: "start"})
		}
	}
	for i := range sc.Faults {
		fl := &sc.Faults[i]
		at := fl.At.Milliseconds() + 137*int64(rep)
		faults = append(faults, realkafka.Record{AtMs: fl.At.Milliseconds(), TsMs: fakeT0 + at, Kind: string(fl.Kind), Target: fl.Target, Fault: faultKey(fl)})
	}
	r := &Rep{N: rep, Real: realFacts{FirstJoinMs: first, LatencyOneWayMs: 0.06}, FaultAtMs: map[string]int64{}}
	for _, rec := range faults {
		if rec.Kind != "start" {
			r.FaultAtMs[rec.Fault] = rec.TsMs - fakeT0
		}
	}
	// The classic scenarios' "real" members join 0.8 s after the first
	// JoinGroup they report (a cold broker's MEMBER_ID_REQUIRED stand-in):
	// a disagreement in the initial join for the report to show.
	cold := &Rep{N: r.N, Real: r.Real, FaultAtMs: r.FaultAtMs}
	if !sc.Groups[0].Consumer() {
		cold.Real.FirstJoinMs = map[string]float64{}
		for k, v := range first {
			cold.Real.FirstJoinMs[k] = v + 800
		}
	}
	m, _ := Match(sc, cold)
	notice := map[string]float64{}
	lastHB := map[string]float64{}
	var faultAt int64 = -1
	res, err := harness.Run(m, uint64(1000+rep), harness.Options{Observe: func(e *harness.TraceEvent) {
		if e.Kind == tracing.EvFault && faultAt < 0 {
			faultAt = int64(e.At)
		}
		if faultAt < 0 && e.Kind == tracing.EvSend && e.Req && e.API == protocol.APIHeartbeat {
			lastHB[e.Node] = float64(int64(e.At) / 1e6)
		}
		if _, ok := notice[e.Node]; faultAt >= 0 && !ok && e.Kind == protocol.EvRejoinRequested && !touched(sc, e.Node) {
			notice[e.Node] = float64(int64(e.At)/1e6) + 3 // a notice logged 3 ms after it came
		}
	}})
	if err != nil {
		return err
	}
	out := realkafka.Result{Summary: res.Summary}
	out.Summary.Seed, out.Summary.TraceSHA256 = 0, ""
	out.Real = realkafka.Real{BrokerVersion: plan.BrokerVersion, Dir: dir,
		StartToFirstJoinMs: harness.Stats{Mean: 300 + 40*float64(rep)}, TimelineLateMs: harness.Stats{Mean: 0.5}}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	real := doc["real"].(map[string]any)
	real["dir"] = "" // no absolute path in the committed fixtures
	real["first_join_ms"] = first
	real["latency_one_way_ms"] = 0.06
	real["heartbeat_gap_ms"] = 3020.5
	if sc.Name != "leave" { // the leave repetitions stand for ones made before the notices were converted
		real["rebalance_notice_ms"] = notice
	}
	if sc.Name == "crash" && len(lastHB) > 0 { // the others stand for ones without the heartbeat phase
		real["last_heartbeat_ms"] = lastHB
	}
	if b, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	meta := realkafka.Meta{Scenario: sc.Name, BrokerVersion: plan.BrokerVersion, T0Ms: fakeT0, DurationMs: sc.Duration.Milliseconds(),
		ClientVersions: map[string]string{}}
	for _, g := range sc.Groups {
		meta.Groups = append(meta.Groups, realkafka.MetaGroup{ID: g.ID})
		meta.ClientVersions[g.ID] = plan.BrokerVersion
	}
	if b, err = json.MarshalIndent(meta, "", "  "); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var lines []byte
	for _, rec := range faults {
		b, _ := json.Marshal(rec)
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "faults.jsonl"), lines, 0o644); err != nil {
		return err
	}
	return nil
}

// touched: a fault names the member (the real converter leaves it out of
// the notices).
func touched(sc *scenario.Scenario, member string) bool {
	for _, f := range sc.Faults {
		if f.Target == member || f.Peers[0] == member || f.Peers[1] == member {
			return true
		}
	}
	return false
}
