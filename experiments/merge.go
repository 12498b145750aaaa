package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rebalsim/rebalsim/internal/outdir"
)

// Merge joins the sweep directories of the shards of one experiment into
// out: it checks that they hold the same experiment (same experiment file
// and base scenario bytes), copies every finished point file (a point
// finished in two directories must be byte-identical), and writes the
// result files with Finalize — the same bytes as an unsharded sweep. out
// may be one of dirs.
func Merge(dirs []string, out string) (*Experiment, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no directories")
	}
	var e *Experiment
	for _, d := range dirs {
		de, err := LoadDir(d)
		if err != nil {
			return nil, err
		}
		if e == nil {
			e = de
			continue
		}
		if !bytes.Equal(de.Data, e.Data) || !bytes.Equal(de.ScenarioData, e.ScenarioData) || de.Source != e.Source {
			return nil, fmt.Errorf("merge: %s holds another experiment than %s (experiment file or scenario differ)", d, dirs[0])
		}
	}
	if err := checkOwner(e, out); err != nil {
		return nil, err
	}
	if err := outdir.MkdirAll(out, filepath.Join(out, pointsDir)); err != nil {
		return nil, err
	}
	if err := writeSweepMeta(e, out); err != nil {
		return nil, err
	}
	sums, _ := loadSums(out)
	for _, pt := range e.Points() {
		var have []byte
		for _, d := range dirs {
			if _, ok := e.readPoint(d, pt); !ok {
				if _, err := os.Stat(pointPath(d, pt)); err == nil {
					// Same experiment and scenario (checked above), so a
					// point file whose key differs was written by a
					// simulator that behaves differently.
					return nil, fmt.Errorf("merge: %s was written by another simrun version (or another build of the simulator): rerun that shard with this simrun, or merge with the one that ran it", pointPath(d, pt))
				}
				continue
			}
			b, err := os.ReadFile(pointPath(d, pt))
			if err != nil {
				return nil, err
			}
			if have != nil && !bytes.Equal(have, b) {
				return nil, fmt.Errorf("merge: point %s differs between directories (%s): the runs are not deterministic", pt.ID, d)
			}
			have = b
		}
		if have == nil {
			continue // LoadResults names the missing points
		}
		dst := pointPath(out, pt)
		if old, err := os.ReadFile(dst); err != nil || !bytes.Equal(old, have) {
			if err := outdir.WriteFile(out, dst, have); err != nil {
				return nil, err
			}
		}
		if sums[pt.ID] != sha(have) {
			if err := appendSum(out, pt.ID, have); err != nil {
				return nil, err
			}
		}
	}
	return e, Finalize(e, out)
}
