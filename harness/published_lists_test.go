package harness

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestPublishedPartitionListsNeverChange guards the slot metrics'
// aliasing (metrics.go setOwned keeps an assigned event's partition list
// instead of a copy: 24 bytes a partition per member saved): no model may change a
// partition list after publishing it in an event. Every event's list is
// remembered as published, with a copy of its contents, and compared at
// the end of the run, for every built-in, three seeds, with the classic
// members eager and cooperative.
func TestPublishedPartitionListsNeverChange(t *testing.T) {
	type published struct {
		list, copy []protocol.TopicPartition
		kind       protocol.EventKind
		at         int64
	}
	for _, name := range scenario.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc := load(t, name)
			for seed := uint64(1); seed <= 3; seed++ {
				var seen []published
				run(t, sc, seed, Options{Observe: func(e *TraceEvent) {
					if len(e.Partitions) > 0 {
						seen = append(seen, published{list: e.Partitions, copy: slices.Clone(e.Partitions), kind: e.Kind, at: int64(e.At)})
					}
				}})
				require.NotEmpty(t, seen, "seed %d: no event published a partition list", seed)
				for _, p := range seen {
					require.Equal(t, p.copy, p.list, "seed %d: the %s event at %d ns had its partition list changed after it was published", seed, p.kind, p.at)
				}
			}
		})
	}
}
