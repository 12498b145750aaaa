package calibrate

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.yaml.in/yaml/v3"
)

// explanationsYAML is calibrate/explanations.yaml: why a (scenario,
// figure) disagrees, with what was measured.
//
//go:embed explanations.yaml
var explanationsYAML []byte

// Causes an explanation may name.
var Causes = []string{"model", "testbed", "measurement"}

// Explanation is one entry of explanations.yaml.
type Explanation struct {
	Scenario string `yaml:"scenario"`
	Figure   string `yaml:"figure"`
	// Kafka is the broker version it holds for; "" for every version.
	Kafka    string `yaml:"kafka,omitempty"`
	Cause    string `yaml:"cause"`
	Measured string `yaml:"measured"`
	used     bool
}

// ParseExplanations reads explanations.yaml's format strictly: unknown
// keys, an unknown figure or cause, and a missing measurement are errors.
func ParseExplanations(source string, data []byte) ([]*Explanation, error) {
	var out []*Explanation
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&out); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	for i, e := range out {
		where := fmt.Sprintf("%s: entry %d (%s, %s)", source, i+1, e.Scenario, e.Figure)
		switch {
		case e.Scenario == "":
			return nil, fmt.Errorf("%s: no scenario", where)
		case figureIndex(e.Figure) < 0:
			return nil, fmt.Errorf("%s: unknown figure %q", where, e.Figure)
		case !slices.Contains(Causes, e.Cause):
			return nil, fmt.Errorf("%s: cause %q is not one of %v", where, e.Cause, Causes)
		case len(e.Measured) < 20:
			return nil, fmt.Errorf("%s: say what was measured (measured: …)", where)
		}
	}
	return out, nil
}

// explain attaches the matching explanation to each disagreeing row, and
// to each pending row that disagrees so far.
func explain(rows []Row, ex []*Explanation) {
	for i := range rows {
		r := &rows[i]
		if r.Verdict != Disagree && r.SoFar != Disagree {
			continue
		}
		for _, e := range ex {
			if e.Scenario == r.Scenario && e.Figure == r.Figure.Name && (e.Kafka == "" || e.Kafka == r.Version) {
				r.Explanation = e
				e.used = true
				break
			}
		}
	}
}
