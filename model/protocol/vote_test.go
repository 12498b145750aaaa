package protocol

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The protocol vote both coordinators share (the classic coordinator's
// TestSelectProtocol drives it through JoinGroup; the consumer-group
// coordinator's downgrade calls it on its classic members).
//
// Kafka: GroupMetadataTest.testSelectProtocol @3.6.1
// Kafka: GroupMetadataTest.testSelectProtocolChoosesCompatibleProtocol @3.6.1
// Kafka: ClassicGroupTest.testSelectProtocol @3.7.0
// Kafka: ClassicGroupTest.testSelectProtocolRaisesIfNoMembers @3.7.0
func TestSelectProtocolVote(t *testing.T) {
	cases := []struct {
		name  string
		prefs [][]string
		want  string
	}{
		{"no members", nil, ""},
		{"majority", [][]string{{"range", "roundrobin"}, {"roundrobin", "range"}, {"roundrobin", "range"}}, "roundrobin"},
		{"only compatible", [][]string{{"sticky", "range"}, {"range"}}, "range"},
		{"tie: first member's preference", [][]string{{"roundrobin", "range"}, {"range", "roundrobin"}}, "roundrobin"},
		{"candidates only", [][]string{{"sticky", "range", "roundrobin"}, {"roundrobin", "range"}, {"sticky", "roundrobin"}, {"range", "roundrobin"}}, "roundrobin"},
		{"no common protocol", [][]string{{"range"}, {"roundrobin"}}, ""},
		{"more protocols than the small tally", [][]string{{"a", "b", "c", "d", "e"}, {"e", "d"}, {"e"}}, "e"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lists := make([][]GroupProtocol, len(tc.prefs))
			for i, p := range tc.prefs {
				for _, name := range p {
					lists[i] = append(lists[i], GroupProtocol{Name: name})
				}
			}
			all := func(name string) bool {
				for _, l := range lists {
					if !slices.ContainsFunc(l, func(q GroupProtocol) bool { return q.Name == name }) {
						return false
					}
				}
				return len(lists) > 0
			}
			got := SelectProtocol(len(lists), func(i int) []GroupProtocol { return lists[i] }, all)
			assert.Equal(t, tc.want, got)
		})
	}
}
