package realkafka

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestFirstRecordsOf: per incarnation (numbered by its pid's first event),
// its first non-empty assignment → first_records; an empty assignment does
// not start it, and an incarnation without first_records is left out.
func TestFirstRecordsOf(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "members"), 0o755); err != nil {
		t.Fatal(err)
	}
	events := `{"ts_ms":1000,"member":"g-0","pid":7,"event":"jvm_start","at_ms":900}
not a driver line
{"ts_ms":1500,"member":"g-0","pid":7,"event":"partitions_assigned","generation":1,"member_id":"m","partitions":[]}
{"ts_ms":4000,"member":"g-0","pid":9,"event":"jvm_start","at_ms":3900}
{"ts_ms":6000,"member":"g-0","pid":7,"event":"partitions_assigned","generation":2,"member_id":"m","partitions":["orders-0"]}
{"ts_ms":6252,"member":"g-0","pid":7,"event":"first_records","count":10}
{"ts_ms":9000,"member":"g-0","pid":9,"event":"partitions_assigned","generation":3,"member_id":"n","partitions":["orders-0"]}
{"ts_ms":9100,"member":"g-0","pid":9,"event":"first_records","count":3}
`
	other := `{"ts_ms":1000,"member":"g-1","pid":8,"event":"partitions_assigned","generation":1,"member_id":"k","partitions":["orders-1"]}
`
	for name, s := range map[string]string{"g-0.events.jsonl": events, "g-1.events.jsonl": other} {
		if err := os.WriteFile(filepath.Join(dir, "members", name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FirstRecordsOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]FirstRecords{"g-0.1": {6000, 6252}, "g-0.2": {9000, 9100}}
	if !maps.Equal(got, want) {
		t.Errorf("FirstRecordsOf = %v, want %v", got, want)
	}
}
