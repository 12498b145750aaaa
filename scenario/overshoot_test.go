package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWaitOvershoot: workload wait.overshoot is the classic heartbeat
// thread's measured wait lateness (harness/testdata/WaitOvershoot.java):
// unwritten, DefaultWaitOvershoot under realistic timing and 0 under
// timing: exact; written, as written under both; refused outside [0, 1 s].
func TestWaitOvershoot(t *testing.T) {
	sc, err := Parse("f.yaml", []byte(minimal))
	require.NoError(t, err)
	g := &sc.Groups[0]
	require.Equal(t, DefaultWaitOvershoot, g.HeartbeatWaitOvershoot(TimingRealistic))
	require.Zero(t, g.HeartbeatWaitOvershoot(TimingExact))

	sc, err = Parse("f.yaml", []byte(minimal+"    workload: {wait.overshoot: 2ms}\n"))
	require.NoError(t, err)
	g = &sc.Groups[0]
	require.Equal(t, 2*time.Millisecond, g.HeartbeatWaitOvershoot(TimingRealistic))
	require.Equal(t, 2*time.Millisecond, g.HeartbeatWaitOvershoot(TimingExact))

	for _, c := range []struct{ v, err string }{
		{"-1ms", "f.yaml:8: groups[0].workload.wait.overshoot: negative duration -1ms"},
		{"2s", "f.yaml:8: groups[0].workload.wait.overshoot: must be between 0s and 1s (how late each heartbeat-thread wait returns; a longer stall is a pause fault)"},
	} {
		_, err = Parse("f.yaml", []byte(minimal+"    workload: {wait.overshoot: "+c.v+"}\n"))
		require.EqualError(t, err, c.err)
	}
}

// TestDefaultWaitOvershootIsTheRealClients ties DefaultWaitOvershoot to the
// data it rests on: the real Java consumer's mean heartbeat gap
// (real.heartbeat_gap_ms, heartbeat.interval.ms 3000 and retry.backoff.ms
// 100, so 30 waits a heartbeat) in every committed calibration repetition
// whose 1-minute load average at start was at most 2.5. The default is the
// median of (gap − 3000 ms) / 30 over them, rounded to 10 µs; new
// repetitions that move it fail here, so the default moves only when
// someone changes it.
func TestDefaultWaitOvershootIsTheRealClients(t *testing.T) {
	const (
		interval = 3000.0 // heartbeat.interval.ms of every calibration scenario
		waits    = 30     // ceil(heartbeat.interval.ms / retry.backoff.ms 100)
		maxLoad  = 2.5
	)
	paths, err := filepath.Glob("../results/calibration/real/*/kafka-*/rep-*/summary.json")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var perWait []float64 // ms
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var s struct {
			Real struct {
				HeartbeatGapMs float64 `json:"heartbeat_gap_ms"`
				LoadAvgStart   string  `json:"loadavg_start"`
			} `json:"real"`
		}
		require.NoError(t, json.Unmarshal(b, &s), p)
		fields := strings.Fields(s.Real.LoadAvgStart)
		if s.Real.HeartbeatGapMs == 0 || len(fields) == 0 {
			continue // a consumer-protocol run: no heartbeat thread
		}
		load, err := strconv.ParseFloat(fields[0], 64)
		require.NoError(t, err, p)
		if load > maxLoad {
			continue
		}
		perWait = append(perWait, (s.Real.HeartbeatGapMs-interval)/waits)
	}
	require.Len(t, perWait, 14, "low-load repetitions (the count DefaultWaitOvershoot's comment quotes)")
	slices.Sort(perWait)
	n := len(perWait)
	median := (perWait[(n-1)/2] + perWait[n/2]) / 2
	got := time.Duration(median * float64(time.Millisecond)).Round(10 * time.Microsecond)
	require.Equal(t, DefaultWaitOvershoot, got, "median %.4f ms a wait over %d repetitions", median, n)
}
