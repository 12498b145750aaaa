package netclient

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// owner is a test Owner: it records the requests that failed.
type owner struct {
	cfg     Config
	rng     *rand.Rand
	scratch []Request[int]
	failed  []Request[int]
	disc    []bool
	timed   []uint64
}

func newOwner(era Era) *owner {
	o := &owner{cfg: Config{Era: era}, rng: rand.New(rand.NewPCG(1, 2))}
	o.cfg.ApplyDefaults()
	return o
}

func (o *owner) Net() *Config                        { return &o.cfg }
func (o *owner) Rand() *rand.Rand                    { return o.rng }
func (o *owner) Emit(out *Output, ev protocol.Event) { out.Events = append(out.Events, ev) }
func (o *owner) Stopped() bool                       { return false }
func (o *owner) Scratch() *[]Request[int]            { return &o.scratch }
func (o *owner) Invariant(_ *Output, msg string)     { panic(msg) }
func (o *owner) TimedOut(_ protocol.Instant, _ *Output, r Request[int]) {
	o.timed = append(o.timed, r.Corr)
}
func (o *owner) Failed(_ protocol.Instant, _ *Output, r Request[int], disconnect bool) {
	o.failed = append(o.failed, r)
	o.disc = append(o.disc, disconnect)
}

// ClusterConnectionStatesTest.testExponentialReconnectBackoff @3.7.0: each
// disconnect doubles reconnect.backoff.ms (± 20 % jitter) up to
// reconnect.backoff.max.ms; READY resets it.
func TestExponentialReconnectBackoff(t *testing.T) {
	o := newOwner(Era37)
	var n Client[int]
	c := n.ConnFor(0, true)
	for k, want := range []time.Duration{50, 100, 200, 400, 800, 1000, 1000} {
		c.state = Ready
		n.Disconnect(0, c, o)
		want *= time.Millisecond
		require.GreaterOrEqual(t, c.backoff, time.Duration(float64(want)*0.8)-time.Millisecond, "attempt %d", k)
		require.LessOrEqual(t, c.backoff, min(time.Duration(float64(want)*1.2), time.Second), "attempt %d: capped at the max (3.x)", k)
	}
	// 0.10: a fixed reconnect.backoff.ms.
	o = newOwner(Era010)
	c = n.ConnFor(1, true)
	for range 4 {
		c.state = Ready
		n.Disconnect(0, c, o)
		require.Equal(t, 50*time.Millisecond, c.backoff)
	}
}

// A request sent while its connection is set up waits unsent. Under
// ConsumerNetworkClient (the classic KafkaConsumer) its request.timeout.ms
// restarts when it leaves (trySend); under NetworkClientDelegate (the
// AsyncKafkaConsumer) the enqueue's timer goes on (makeClientRequest passes
// unsent.timer.remainingMs() @v8.0.0, Kafka 4.0).
func TestRequestTimerStartsAtSendOrEnqueue(t *testing.T) {
	for _, c := range []struct {
		name string
		era  Era
		want protocol.Instant
	}{
		{"ConsumerNetworkClient", Era37, protocol.Instant(0).Add(5*time.Second + 30*time.Second)},
		{"NetworkClientDelegate", AsyncEra(), protocol.Instant(0).Add(30 * time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOwner(c.era)
			var n Client[int]
			var out Output
			corr := n.Send(0, &out, 1, false, &protocol.FindCoordinatorRequest{Key: "g"}, 30*time.Second, 7, o)
			require.Len(t, out.Conns, 1, "the connection is opened")
			require.Empty(t, out.Sends, "unsent while connecting")
			require.True(t, n.Connected(protocol.Instant(0).Add(5*time.Second), &out, 1, false, o))
			require.Len(t, out.Sends, 1)
			r := n.Find(corr)
			require.NotNil(t, r)
			require.Equal(t, c.want, r.Deadline)
			require.Equal(t, 7, r.Data)
		})
	}
}

// NetworkClient.handleTimedOutRequests: the timed-out request closes its
// connection, and every request on that connection (not on the broker's
// other connection) fails as a disconnect, the timed-out one included.
func TestRequestTimeoutFailsTheConnectionsRequests(t *testing.T) {
	o := newOwner(AsyncEra())
	var n Client[int]
	var out Output
	for _, coord := range []bool{true, false} {
		n.ConnFor(0, coord).state = Ready
	}
	hb := n.Send(0, &out, 0, true, &protocol.ConsumerGroupHeartbeatRequest{}, 30*time.Second, 1, o)
	commit := n.Send(protocol.Instant(0).Add(time.Second), &out, 0, true, &protocol.OffsetCommitRequest{}, 30*time.Second, 2, o)
	find := n.Send(0, &out, 0, false, &protocol.FindCoordinatorRequest{}, time.Minute, 3, o)
	n.HandleTimeouts(protocol.Instant(0).Add(30*time.Second), &out, o)
	require.Equal(t, []uint64{hb}, o.timed)
	require.Len(t, o.failed, 2)
	require.Equal(t, []uint64{hb, commit}, []uint64{o.failed[0].Corr, o.failed[1].Corr})
	require.Equal(t, []bool{true, true}, o.disc)
	require.Equal(t, ConnOp{Broker: 0, Coord: true, AfterSends: 3}, out.Conns[len(out.Conns)-1])
	require.Len(t, n.Inflight(), 1)
	require.Equal(t, find, n.Inflight()[0].Corr)
	require.True(t, n.Conn(0, true).InBackoff(protocol.Instant(0).Add(30*time.Second)))
}

// TestTagLast: TagLast tags the request Send recorded, in the byte beside
// the owner's datum (the classic member's commit kind, so that its Data is
// one pointer and the entry within requestSize).
func TestTagLast(t *testing.T) {
	o := newOwner(Era37)
	var n Client[int]
	n.ConnFor(0, true).state = Ready
	var out Output
	a := n.Send(0, &out, 0, true, &protocol.HeartbeatRequest{}, time.Second, 1, o)
	n.TagLast(3)
	b := n.Send(0, &out, 0, true, &protocol.HeartbeatRequest{}, time.Second, 2, o)
	n.TagLast(4)
	ra, _ := n.Complete(a)
	rb, _ := n.Complete(b)
	require.Equal(t, uint8(3), ra.Tag)
	require.Equal(t, uint8(4), rb.Tag)
}

// TestConnHintedIsConn: the hinted lookup returns what Conn returns, whatever
// the hint (a fresh one, one pointing at another connection, one past the
// end), and leaves the hint at the connection's position.
func TestConnHintedIsConn(t *testing.T) {
	var n Client[int]
	for _, b := range []int32{2, 0, 1} {
		n.ConnFor(b, false)
		n.ConnFor(b, true)
	}
	for _, b := range []int32{0, 1, 2, 3} {
		for _, coord := range []bool{false, true} {
			for _, start := range []uint16{0, 3, 5, 100} {
				hint := start
				got := n.ConnHinted(b, coord, &hint)
				require.Same(t, n.Conn(b, coord), got, "broker %d coord %v hint %d", b, coord, start)
				if got != nil {
					require.Same(t, got, &n.conns[hint], "the hint names the connection")
					again := hint
					require.Same(t, got, n.ConnHinted(b, coord, &again))
					require.Equal(t, hint, again)
				}
			}
		}
	}
}
