package coordinator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// The runtime's costs (runtime.go): a heartbeat's answer leaves when its
// records are committed (CoordinatorRuntime.CoordinatorContext.append: the
// response is a deferred event completed when the high watermark passes
// its batch, v8.0.0), the assignor runs on the shard's event loop
// (GroupMetadataManager.updateTargetAssignment inside
// consumerGroupHeartbeat), so a heartbeat arriving meanwhile waits, and a
// heartbeat that writes nothing waits for the last pending write ("a read
// operation after all"). The timeline is cal-consumer-crash 4.4.0 rep 1's
// (broker log): the first member's heartbeat handled in 0.785 s, its
// answer 2.11 s after; the next members' answers at the same commit.
func TestCostsDelayAnswers(t *testing.T) {
	ms := func(n int64) protocol.Instant { return protocol.Instant(0).Add(time.Duration(n) * time.Millisecond) }
	h := newH(t, "kafka-4.4", func(c *Config) {
		c.Costs = Costs{FirstTargetTime: 785 * time.Millisecond, AssignTime: 100 * time.Millisecond,
			FirstAppendLatency: 2110 * time.Millisecond, AppendLatency: 10 * time.Millisecond}
	})
	// A creates the group: the coordinator's first target (cold), its
	// first write (cold).
	r := h.hb(join("A"))
	require.Equal(t, protocol.None, r.Error)
	assert.Equal(t, ms(785+2110), h.out.ReplyAt, "A: handled 785 ms, committed 2110 ms after")

	// B joins while A's heartbeat still runs: it waits for the loop
	// (to 785 ms); its records (epoch bump, and a target when the
	// interval allows) commit after A's: its answer not before A's commit.
	h.now = ms(500)
	r = h.hb(join("B"))
	require.Equal(t, protocol.None, r.Error)
	assert.Equal(t, ms(785+2110), h.out.ReplyAt, "B: behind A's commit")

	// After A's commit, a heartbeat that writes waits AppendLatency (and
	// any assignor run), one that writes nothing is answered at once.
	h.now = ms(4000)
	r = h.hb(beat("A", r.MemberEpoch, nil))
	require.Equal(t, protocol.None, r.Error)
	g := h.c.Group("g")
	a := g.Member("A")
	h.now = ms(4100)
	r = h.hb(beat("A", a.Epoch(), a.Assigned()))
	require.Equal(t, protocol.None, r.Error)
	assert.Equal(t, ms(4110), h.out.ReplyAt, "A's new epoch is a write: 10 ms to commit")
	h.now = ms(4200)
	r = h.hb(beat("A", g.Member("A").Epoch(), g.Member("A").Assigned()))
	require.Equal(t, protocol.None, r.Error)
	assert.Equal(t, ms(4200), h.out.ReplyAt, "nothing written, no write pending: a read, answered at once")
	h.now = ms(5000)
	h.hb(join("C")) // a new member: a bump and (interval passed) a target
	assert.Equal(t, ms(5000+100+10), h.out.ReplyAt, "a write with an assignor run: 100 ms on the loop, 10 ms to commit")
	h.now = ms(5050)
	h.hb(beat("A", g.Member("A").Epoch(), g.Member("A").Assigned()))
	assert.GreaterOrEqual(t, h.out.ReplyAt, ms(5110), "A's heartbeat waits for C's: on the loop until 5100, its answer not before C's commit")

	// An error answer waits for the queue only.
	h.now = ms(6000)
	h.hb(beat("nobody", 3, nil))
	assert.Equal(t, protocol.UnknownMemberID, h.out.Resp.Error)
	assert.Equal(t, ms(6000), h.out.ReplyAt)
}

// Without costs (the default) every answer leaves at once.
func TestNoCostsAnswerAtOnce(t *testing.T) {
	h := newH(t, "kafka-4.4")
	h.hb(join("A"))
	assert.Equal(t, h.now, h.out.ReplyAt)
	h.now = h.now.Add(time.Second)
	h.hb(join("B"))
	assert.Equal(t, h.now, h.out.ReplyAt)
}
