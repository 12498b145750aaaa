package experiments

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTidyFiles: points_long.csv has one row per point, seed and figure,
// written with encoding/csv (a value with a comma is quoted, not altered),
// with the same numbers as points.csv; effective_config.jsonl has one line
// per point with the profile defaults filled in.
func TestTidyFiles(t *testing.T) {
	src := strings.Replace(testExperiment, "groups[0].client.profile: [kafka-2.x, kafka-3.x]",
		"groups[0].client.partition.assignment.strategy: [[range, cooperative-sticky], [roundrobin]]", 1)
	src = src[:strings.Index(src, "plots:")]
	e, err := Parse("t.yaml", []byte(src))
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = Sweep(context.Background(), e, Options{Out: dir, Workers: 2, Runner: fakeRunner})
	require.NoError(t, err)

	f, err := os.Open(filepath.Join(dir, "points_long.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"point", "session_timeout_ms", "network_loss", "partition_assignment_strategy", "seed", "figure", "value"}, rows[0])
	assert.Len(t, rows, 1+e.NumPoints()*e.Seeds*len(FigureNames()))
	assert.Equal(t, "[range, cooperative-sticky]", rows[1][3], "quoted by encoding/csv, commas kept")

	// The same number as points.csv, cell for cell.
	pf, err := os.Open(filepath.Join(dir, "points.csv"))
	require.NoError(t, err)
	defer pf.Close()
	wide, err := csv.NewReader(pf).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range wide[0] {
		col[h] = i
	}
	for _, r := range rows[1:200] {
		found := false
		for _, w := range wide[1:] {
			if w[0] == r[0] && w[col["seed"]] == r[4] {
				assert.Equal(t, w[col[r[5]]], r[6], "%v", r)
				found = true
			}
		}
		assert.True(t, found, "%v", r)
	}

	cf, err := os.Open(filepath.Join(dir, "effective_config.jsonl"))
	require.NoError(t, err)
	defer cf.Close()
	sc := bufio.NewScanner(cf)
	n := 0
	for sc.Scan() {
		var line struct {
			Point  string         `json:"point"`
			Values map[string]any `json:"values"`
			Config Config         `json:"effective_config"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		assert.Contains(t, line.Values, "session_timeout_ms")
		assert.Equal(t, line.Values["session_timeout_ms"], float64(line.Config.Groups[0].Client["session.timeout.ms"].(float64)))
		assert.Equal(t, float64(300000), line.Config.Groups[0].Client["max.poll.interval.ms"], "a profile default, filled in")
		n++
	}
	assert.Equal(t, e.NumPoints(), n)
}
