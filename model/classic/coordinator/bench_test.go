package coordinator

// Goal: the heartbeat path is hot (>= 1M simulated member-seconds per wall
// second). Method: a Stable group; measure allocations and time per
// heartbeat into a reused Output.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rebalsim/rebalsim/model/protocol"
)

func TestHeartbeatDoesNotAllocate(t *testing.T) {
	f := newFixture(t, "kafka-3.x")
	ids, gen := f.stableGroup(2)
	req := hbReq(ids[0], gen)
	var out Output
	out.Replies = make([]Reply, 0, 4)
	allocs := testing.AllocsPerRun(1000, func() {
		out.Reset()
		f.now = f.now.Add(time.Microsecond)
		f.b.Handle(f.now, 1, 1, req, &out)
	})
	assert.Equal(t, 0.0, allocs)
	assert.Equal(t, protocol.None, out.Replies[0].Resp.Err())
}

func BenchmarkHeartbeat(b *testing.B) {
	f := newFixture(&testing.T{}, "kafka-3.x")
	ids, gen := f.stableGroup(4)
	reqs := make([]*protocol.HeartbeatRequest, len(ids))
	for i, id := range ids {
		reqs[i] = hbReq(id, gen)
	}
	var out Output
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out.Reset()
		f.now = f.now.Add(time.Microsecond)
		f.b.Handle(f.now, 1, 1, reqs[i%len(reqs)], &out)
	}
}
