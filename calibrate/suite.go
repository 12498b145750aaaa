package calibrate

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rebalsim/rebalsim/realkafka"
	"github.com/rebalsim/rebalsim/scenario"
)

// builtin is the built-in suite (calibrate/suite/*.yaml).
//
//go:embed suite
var builtin embed.FS

// Suite is a calibration suite: scenario files by name.
type Suite struct {
	Name      string // "built-in" or the directory
	Scenarios []SuiteScenario
}

// SuiteScenario is one scenario file of a suite.
type SuiteScenario struct {
	Name   string // the file name without .yaml
	Source string
	Data   []byte
}

// LoadSuite reads every *.yaml of dir, in name order; dir "" is the
// built-in suite.
func LoadSuite(dir string) (*Suite, error) {
	var fsys fs.FS
	s := &Suite{Name: dir}
	if dir == "" {
		sub, err := fs.Sub(builtin, "suite")
		if err != nil {
			return nil, err
		}
		fsys, s.Name = sub, "built-in"
	} else {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("suite: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("suite %s: not a directory of scenario files", dir)
		}
		fsys = os.DirFS(dir)
	}
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		src := filepath.Join(dir, n)
		if dir == "" {
			src = "calibrate/suite/" + n
		}
		s.Scenarios = append(s.Scenarios, SuiteScenario{Name: strings.TrimSuffix(n, ".yaml"), Source: src, Data: b})
	}
	if len(s.Scenarios) == 0 {
		return nil, fmt.Errorf("suite %s has no scenario files (*.yaml)", s.Name)
	}
	return s, nil
}

// BrokerVersion turns a --kafka entry ("3.9", "4.4", "4.4.0") into the
// broker release run (the latest of its line, realkafka's table).
func BrokerVersion(v string) (string, error) {
	v = strings.TrimPrefix(v, "kafka-")
	if strings.Count(v, ".") >= 2 {
		return v, nil
	}
	return realkafka.BrokerVersionFor("kafka-" + v)
}

// ForVersion parses the scenario as run on broker version v: its
// coordinator.profile and every group's client.profile set to kafka-v
// (same-line clients). A scenario that does not parse so (the consumer
// protocol on 3.9) is not applicable on v: the error says why.
func (ss *SuiteScenario) ForVersion(v string) (*scenario.Scenario, error) {
	plain, err := scenario.Parse(ss.Source, ss.Data)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(plain.Coordinator.Profile, "kafka-4") && !strings.HasPrefix(v, "4") {
		return nil, fmt.Errorf("written for a 4.x coordinator (coordinator.profile %s)", plain.Coordinator.Profile)
	}
	ov := []scenario.Override{{Path: "coordinator.profile", Value: "kafka-" + v}}
	for i := range plain.Groups {
		ov = append(ov, scenario.Override{Path: fmt.Sprintf("groups[%d].client.profile", i), Value: "kafka-" + v})
	}
	return scenario.ParseWithOverrides(ss.Source, ss.Data, ov)
}
