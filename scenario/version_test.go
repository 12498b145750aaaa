package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveVersion: the Kafka versions users type resolve to the era
// profile that models them (the latest era at or before the release, within
// the span the era covers); releases no era models are errors listing the
// eras.
func TestResolveVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kafka-3.6.1", "kafka-3.6"},
		{"kafka-3.5", "kafka-3.6"},
		{"kafka-3.3.2", "kafka-3.2"},
		{"kafka-3.4.1", "kafka-3.4"},
		{"kafka-4.1.0", "kafka-4.1"},
		{"kafka-2.8.0", "kafka-2.8"},
		{"kafka-2.8.2", "kafka-2.8.1"}, // broker KAFKA-12890 fixed in 2.8.1
		{"kafka-2.8.1", "kafka-2.8.1"},
		{"kafka-2.6.0", "kafka-2.6"},
		{"kafka-2.6.2", "kafka-2.6.1"}, // broker KAFKA-10284, client KAFKA-10134
		{"kafka-2.7.1", "kafka-2.7"},
		{"kafka-2.7.2", "kafka-2.7.2"}, // client KAFKA-13214 fixed
		{"kafka-2.5.1", "kafka-2.5"},
		{"kafka-2.4.1", "kafka-2.4"},
		{"kafka-3.1.2", "kafka-3.0"},
		{"kafka-3.9.0", "kafka-3.9"},
		{"3.7.1", "kafka-3.7"},
		{"kafka-0.10.2.1", "kafka-0.10"},
		{"kafka-4.4.0", "kafka-4.4"}, // issue 23 item 8
		{"kafka-4.4.1", "kafka-4.4"},
		{"kafka-4.1.2", "kafka-4.1"}, // the classic layers: kafka-4.1; the consumer-group coordinator: kafka-4.1.2
	} {
		got, note, err := ResolveVersion(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Contains(t, note, c.want, c.in)
	}
	for _, bad := range []string{"kafka-1.1.0", "kafka-2.2", "kafka-9.0", "kafka-4.5.0", "kafka-x", "kafka-3", "latest"} {
		_, _, err := ResolveVersion(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "kafka-3.2 (3.2–3.3)", bad)
	}
}

// A scenario naming a version parses with the era profile and one note.
func TestVersionInScenarioFile(t *testing.T) {
	src := `name: v
duration: 10s
coordinator: {profile: kafka-2.8.0}
topics: [{name: t, partitions: 2}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.6.1}
`
	sc, err := Parse("v.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "kafka-3.6", sc.Groups[0].Client.Profile)
	assert.Equal(t, "kafka-2.8", sc.Coordinator.Profile)
	require.Len(t, sc.Notes, 2)
	assert.Equal(t, "v.yaml:9: groups[0].client.profile: Kafka 3.6.1 is modelled by profile kafka-3.6 (the era covering 3.5–3.6)", sc.Notes[1])

	_, err = Parse("v.yaml", []byte(strings.Replace(src, "kafka-3.6.1", "kafka-1.1.0", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "v.yaml:9")
	assert.Contains(t, err.Error(), "no profile models Kafka 1.1.0; known eras:")
}
