package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/scenario"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocsYAMLExamplesParse: every ```yaml block of README.md and docs/ is
// valid YAML; a complete scenario (name + groups) parses as a scenario, a
// complete experiment (scenario + sweep or plots) as an experiment (a user
// copies them: INTERFACE.md's own experiment example was once invalid YAML).
func TestDocsYAMLExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files = append(files, "../../README.md")
	blocks := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range yamlBlock.FindAllSubmatchIndex(b, -1) {
			src := b[m[2]:m[3]]
			line := 1 + strings.Count(string(b[:m[2]]), "\n")
			where := filepath.Base(f) + ":" + itoa(line)
			blocks++
			var top map[string]any
			if err := yaml.Unmarshal(src, &top); err != nil {
				var any []any
				if yaml.Unmarshal(src, &any) == nil {
					continue // a list fragment
				}
				t.Errorf("%s: invalid YAML: %v", where, err)
				continue
			}
			_, hasName := top["name"]
			_, hasGroups := top["groups"]
			_, hasScenario := top["scenario"]
			_, hasSweep := top["sweep"]
			_, hasPlots := top["plots"]
			switch {
			case hasScenario && (hasSweep || hasPlots):
				_, err := experiments.Parse(where, src)
				assert.NoError(t, err, "%s: experiment example", where)
			case hasName && hasGroups:
				_, err := scenario.Parse(where, src)
				assert.NoError(t, err, "%s: scenario example", where)
			}
		}
	}
	assert.Positive(t, blocks)
}

func itoa(n int) string { return strconv.Itoa(n) }
