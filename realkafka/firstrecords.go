package realkafka

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// FirstRecords is one process incarnation's first non-empty
// partitions_assigned and its first_records (the driver's events, wall-clock
// ms): between them the real consumer's poll() calls returned nothing (the
// committed offsets fetched, the first Fetch answered), and the driver takes
// its first poll.interval draw only after the second (Driver.java consume).
type FirstRecords struct {
	AssignedMs, RecordsMs int64
}

// FirstRecordsOf reads a repetition's driver events (members/*.events.jsonl,
// raw or from logs.tar.gz) and returns each process incarnation's
// FirstRecords by "member.inc", as meta.json's driver_seeds names it. An
// incarnation that never got both events is left out. Incarnations are
// numbered by their pids' first events in the file, as the orchestrator
// starts them (a prepared process's jvm_start comes after the previous
// incarnation's).
func FirstRecordsOf(dir string) (map[string]FirstRecords, error) {
	src, err := openLogs(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]FirstRecords{}
	for _, f := range src.glob("members/*.events.jsonl") {
		member := strings.TrimSuffix(path.Base(f), ".events.jsonl")
		type proc struct {
			pid               int
			firstTs           int64
			assigned, records int64 // ts_ms; 0: not seen
		}
		var procs []*proc
		byPid := map[int]*proc{}
		for _, l := range src.lines(f) {
			var d DriverEvent
			if json.Unmarshal([]byte(l), &d) != nil || d.Event == "" {
				continue
			}
			p := byPid[d.Pid]
			if p == nil {
				p = &proc{pid: d.Pid, firstTs: d.TsMs}
				byPid[d.Pid] = p
				procs = append(procs, p)
			}
			p.firstTs = min(p.firstTs, d.TsMs)
			switch {
			case d.Event == "partitions_assigned" && len(d.Partitions) > 0 && p.assigned == 0:
				p.assigned = d.TsMs
			case d.Event == "first_records" && p.records == 0:
				p.records = d.TsMs
			}
		}
		sort.SliceStable(procs, func(i, j int) bool { return procs[i].firstTs < procs[j].firstTs })
		for i, p := range procs {
			if p.assigned != 0 && p.records >= p.assigned {
				out[fmt.Sprintf("%s.%d", member, i+1)] = FirstRecords{AssignedMs: p.assigned, RecordsMs: p.records}
			}
		}
	}
	return out, nil
}
