package scenario

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile and careless input: every input here was found to
// hang, panic or be silently altered before. The files live in
// testdata/hostile/, which also seeds the whole-path fuzz target.

// TestMergeKeyBombIsBounded: 40 levels of doubling "<<:" merges took hours
// to read (2^40 visits); now the expansion is counted and bounded.
func TestMergeKeyBombIsBounded(t *testing.T) {
	b, err := os.ReadFile("testdata/hostile/merge-bomb.yaml")
	require.NoError(t, err)
	start := time.Now()
	_, err = Parse("bomb.yaml", b)
	require.Error(t, err)
	assert.ErrorContains(t, err, "expand to more than 200000 YAML nodes")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Positive(t, e.Line)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestHostileInputsRefused: each file of testdata/hostile is refused before
// any run with an error naming file, line and field — where it used to
// panic after validation, be silently altered, or overflow the clock.
func TestHostileInputsRefused(t *testing.T) {
	cases := []struct{ file, want string }{
		// item 3: panicked in client.NewMember / coordinator.NewBroker after parsing.
		{"retry-backoff-zero", "retry-backoff-zero.yaml:5: groups[0].client.retry.backoff.ms: must be at least 1 in the simulator (Kafka accepts 0"},
		{"min-session-zero", "min-session-zero.yaml:2: coordinator.group.min.session.timeout.ms: must be at least 1"},
		// item 4: rounded to 0 = unlimited; overflowed the virtual clock.
		{"bandwidth-below-8bit", `bandwidth-below-8bit.yaml:2: network.bandwidth: "4bit/s" is less than one byte per second`},
		{"session-int-overflow", "groups[0].client.session.timeout.ms: must be at most 2147483647 (Kafka's INT range), got 9223372036854"},
		{"retry-backoff-long-overflow", "groups[0].client.retry.backoff.ms: must be at most 31536000000 (the simulator's limit of one year)"},
		{"stagger-overflow", "groups[0].start.stagger: the last of 100000 members would start after 8760h0m0s"},
		// item 11: a duration of hours of wall time; a member that does not exist yet.
		{"duration-million-hours", `duration-million-hours.yaml:2: duration: "1000000h" is longer than 8760h0m0s`},
		{"member-before-join", `member-before-join.yaml:7: faults[0].crash: member "g-3" does not exist yet at 10s: the join fault that adds it comes at 1m0s`},
		// item 8: input limits.
		{"too-many-faults", "faults: 10001 faults, more than the limit of 10000"},
		// item 10: messages.
		{"name-list", "name-list.yaml:1: name: expected a string, got a list"},
		{"ansi-name", `ansi-name.yaml:1: name: must not contain control characters (such as tabs, newlines or terminal escapes), got "\x1b[31mred\x1b[0m"`},
		// YAML means what it says: read as YAML 1.1 reads them, these were 8 members, 9 partitions, 4, and the second document dropped.
		{"octal-members", `octal-members.yaml:5: the integer "010" has a leading zero, which YAML 1.1 reads as octal (8, not 10); write 10, or 0o10 if octal is meant`},
		{"octal-nine", `octal-nine.yaml:3: the integer "09" has a leading zero, which YAML 1.1 reads as octal (and 8 and 9 are not octal digits); write 9`},
		{"custom-tag", `custom-tag.yaml:3: unknown tag "!mytag": the simulator reads plain YAML values; remove the tag`},
		{"two-documents", `two-documents.yaml:6: a second YAML document starts here (after a --- line); a file holds one document`},
		{"long-scalar", `long-scalar.yaml:2: duration: expected a duration like "250ms" or "10s", got "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… (100000 bytes)`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, err := Load("testdata/hostile/" + c.file + ".yaml")
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), c.want)
			assert.Less(t, len(err.Error()), 400, "the message quotes little of the value")
		})
	}
}

// TestFaultAfterEndWarns (item 11): a fault at or after the end of the run
// does nothing; the scenario says so in a warning naming its line (an error
// would break INTERFACE.md's own example, whose faults outlast its 120 s).
func TestFaultAfterEndWarns(t *testing.T) {
	s, err := Load("testdata/hostile/fault-after-end.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"testdata/hostile/fault-after-end.yaml:7: faults[0].at: 1m30s is not before the end of the run (duration 1m0s): this crash fault never happens"}, s.Warnings)
}

// TestFileSizeLimit (item 8): a huge file, or /dev/zero, is refused after
// reading at most MaxFileBytes+1 bytes.
func TestFileSizeLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := Load("/dev/zero")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/dev/zero: larger than 4 MiB, the limit on an input file")
	}
	big := make([]byte, MaxFileBytes+1)
	for i := range big {
		big[i] = '#'
	}
	_, err := Parse("big.yaml", big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than the limit of 4 MiB on a scenario file")
}

// TestUnclosedFlowCitesItsLine (item 10): an unclosed [ or { names the line
// where it was opened, not only the line before the end of the file.
func TestUnclosedFlowCitesItsLine(t *testing.T) {
	for file, want := range map[string]string{
		"unclosed-bracket": "unclosed-bracket.yaml:5: invalid YAML: the [ opened here is never closed",
		"unclosed-brace":   "unclosed-brace.yaml:4: invalid YAML: the { opened here is never closed",
	} {
		_, err := Load("testdata/hostile/" + file + ".yaml")
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
}

// TestRandomScenariosParse: every scenario Random writes is valid, so the
// fuzz targets seeded from it start from inputs that reach the simulation.
func TestRandomScenariosParse(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	for i := 0; i < 500; i++ {
		data := Random(r, []int{0, 1}[i%2])
		_, err := Parse("random.yaml", data)
		require.NoError(t, err, string(data))
	}
}

// TestCheckMember: a member exists when it is an initial member or one a
// join fault adds (simrun explain --member checks with it).
func TestCheckMember(t *testing.T) {
	s, err := Load("testdata/interface-example.yaml")
	require.NoError(t, err)
	assert.NoError(t, s.CheckMember("payments-11"))
	assert.NoError(t, s.CheckMember("payments-12"), "the join fault adds it")
	assert.EqualError(t, s.CheckMember("payments-999"), `member "payments-999" never exists: group payments has members payments-0 to payments-12`)
	assert.ErrorContains(t, s.CheckMember("nobody-9"), `unknown member "nobody-9"`)
}
