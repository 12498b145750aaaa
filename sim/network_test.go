package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tnet drives a Network on its own queue and logs what the endpoints see.
type tnet struct {
	q   *Queue[Delivery[toy]]
	n   *Network[toy]
	log []string
	at  map[int]Instant // message → arrival
}

const ms = time.Millisecond

func newTNet(lat Dist, loss float64) *tnet {
	t := &tnet{q: NewQueue[Delivery[toy]](), at: map[int]Instant{}}
	t.n = NewNetwork[toy](NewStreams(1).Stream("net"), lat, loss)
	t.n.SetScheduler(func(d Delivery[toy]) { t.q.Schedule(d.At, d) })
	return t
}

// run fires every event up to until.
func (t *tnet) run(until Instant) {
	t.q.Run(Budget{Until: until}, func(now Instant, d Delivery[toy]) {
		o, who := t.n.Handle(now, &d)
		switch o {
		case Deliver:
			t.at[d.Msg.n] = now
			t.log = append(t.log, fmt.Sprintf("%v deliver %d", now, d.Msg.n))
		case Established, ConnectFailed, Disconnect:
			t.log = append(t.log, fmt.Sprintf("%v %v %d", now, o, who))
		case Pending, Dropped, Lost, Retransmitted:
		}
	})
}

// established opens 1→2 and runs until it is ready (4 one-way latencies).
func (t *tnet) established(tb testing.TB) {
	t.n.Open(0, 1, 2, 0)
	t.run(Instant(time.Second))
	require.True(tb, t.n.IsOpen(1, 2, 0))
	t.log = nil
}

type toy struct{ n int }

func TestTCPHandshakeThenReady(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.n.Open(0, 1, 2, 0)
	tn.run(Instant(time.Second))
	// SYN + SYN-ACK (2 ms), then ApiVersions (2 ms).
	assert.Equal(t, []string{"4ms established 1"}, tn.log)
	assert.Equal(t, 200*ms+2*ms, tn.n.RTO(1, 2, 0), "RTO = SRTT + max(4·RTTVAR, 200 ms)... with RTTVAR decayed: here SRTT 2 ms + 200 ms floor")
}

func TestTCPFIFOPerConnection(t *testing.T) {
	tn := newTNet(Uniform{Min: 1, Max: 1000}, 0)
	tn.established(t)
	start := tn.q.Now()
	for i := 0; i < 1000; i++ {
		require.Equal(t, NotDropped, tn.n.Send(start+Instant(i), 1, 2, 0, toy{i}))
	}
	tn.run(Never - 1)
	for i := 1; i < 1000; i++ {
		require.GreaterOrEqual(t, tn.at[i], tn.at[i-1], "message %d overtook an earlier one", i)
	}
}

// TestTCPOneLossCostsOneRTO: a lost segment arrives at send + RTO + latency
// (network-model.md §5: recovery by RTO at R0 ≈ SRTT + 200 ms on a LAN).
func TestTCPOneLossCostsOneRTO(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.established(t)
	rto := tn.n.RTO(1, 2, 0)
	send := Instant(time.Second)
	tn.n.SetLoss(1)
	assert.Equal(t, DropLoss, tn.n.Send(send, 1, 2, 0, toy{1}))
	tn.n.SetLoss(0)
	tn.run(Never - 1)
	assert.Equal(t, send.Add(rto+ms), tn.at[1])
}

// TestTCPTwoLossesCostThreeRTOs: the second attempt is lost too; the third
// goes after another 2·RTO (T4: the RTO doubles per consecutive loss).
func TestTCPTwoLossesCostThreeRTOs(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.established(t)
	rto := tn.n.RTO(1, 2, 0)
	send := Instant(time.Second)
	tn.n.SetLoss(1)
	tn.n.Send(send, 1, 2, 0, toy{1})
	tn.run(send.Add(rto)) // the first retransmission is lost too
	tn.n.SetLoss(0)
	tn.run(Never - 1)
	assert.Equal(t, send.Add(3*rto+ms), tn.at[1])
}

// TestTCPHeadOfLineBlocking: a message sent after a lost one waits behind
// it and arrives with it (in order), although its own transmission would
// have been on time.
func TestTCPHeadOfLineBlocking(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.established(t)
	rto := tn.n.RTO(1, 2, 0)
	send := Instant(time.Second)
	tn.n.SetLoss(1)
	tn.n.Send(send, 1, 2, 0, toy{1})
	tn.n.SetLoss(0)
	assert.Equal(t, DropHeld, tn.n.Send(send.Add(10*ms), 1, 2, 0, toy{2}))
	assert.Equal(t, NotDropped, tn.n.Send(send.Add(10*ms), 2, 1, 0, toy{3}), "the other direction is independent")
	tn.run(Never - 1)
	assert.Equal(t, send.Add(rto+ms), tn.at[1])
	assert.Equal(t, send.Add(rto+ms), tn.at[2], "held behind the lost segment, then delivered in the same burst")
	assert.Equal(t, send.Add(11*ms), tn.at[3])
	assert.Equal(t, []string{
		fmt.Sprintf("%v deliver 3", send.Add(11*ms)),
		fmt.Sprintf("%v deliver 1", send.Add(rto+ms)),
		fmt.Sprintf("%v deliver 2", send.Add(rto+ms)),
	}, tn.log)
}

// TestTCPPartitionDeliversAtFirstRetransmissionAfterHeal: a 20 s partition;
// the retransmission chain is send + R0·(2^k − 1): with R0 = 202 ms the
// attempts fall at 0.202, 0.606, 1.414, 3.03, 6.262, 12.726, 25.654 s, so
// the message arrives 25.654 s after it was sent (+1 ms), 5.654 s after the
// heal (network-model.md §1 heal rule, §6.3).
func TestTCPPartitionDeliversAtFirstRetransmissionAfterHeal(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.established(t)
	rto := tn.n.RTO(1, 2, 0)
	require.Equal(t, 202*ms, rto)
	send := Instant(time.Second)
	tn.n.Cut(1, 2)
	tn.n.Cut(2, 1)
	assert.Equal(t, DropPartition, tn.n.Send(send, 1, 2, 0, toy{1}))
	tn.run(send.Add(20 * time.Second))
	tn.n.Heal(1, 2)
	tn.n.Heal(2, 1)
	tn.run(Never - 1)
	assert.Equal(t, send.Add(127*rto+ms), tn.at[1])
}

// TestTCPPartitionLosesSegmentsInFlight: a segment already on the wire when
// the path is cut is lost and retransmitted from its own transmission.
func TestTCPPartitionLosesSegmentsInFlight(t *testing.T) {
	tn := newTNet(Constant(10*ms), 0)
	tn.established(t)
	rto := tn.n.RTO(1, 2, 0)
	send := Instant(time.Second)
	tn.n.Send(send, 1, 2, 0, toy{1})
	tn.run(send.Add(5 * ms))
	tn.n.Cut(1, 2)
	tn.run(send.Add(100 * ms))
	tn.n.Heal(1, 2)
	tn.run(Never - 1)
	assert.Equal(t, send.Add(rto+10*ms), tn.at[1])
}

// TestTCPGiveUpResetsTheConnection: tcp_retries2 = 15: the sender aborts
// 924.6 s after the first transmission of the unacknowledged segment (T5).
func TestTCPGiveUpResetsTheConnection(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.established(t)
	tn.n.SetTCP(TCP{RTOMin: 200 * ms, RTOMax: 120 * time.Second, RTOInit: time.Second, GiveUp: 924600 * ms, SynRetries: 6})
	send := Instant(time.Second)
	tn.n.Cut(1, 2)
	tn.n.Send(send, 1, 2, 0, toy{1})
	tn.run(Never - 1)
	require.Len(t, tn.log, 1)
	// With R0 = 202 ms the chain reaches the 120 s cap later than with
	// 200 ms; the abort is the first retransmission instant ≥ 924.6 s.
	var at, gap time.Duration = 0, 202 * ms
	for at < 924600*ms {
		at += gap
		gap = min(2*gap, 120*time.Second)
	}
	assert.Equal(t, fmt.Sprintf("%v disconnect 1", send.Add(at)), tn.log[0])
	assert.False(t, tn.n.IsOpen(1, 2, 0))
}

// TestTCPSynRetries: SYNs at 0, 1, 3, 7, 15, 31, 63 s; the attempt fails at
// 127 s (T7, tcp_syn_retries = 6). Healed at 10 s, the SYN of 15 s gets
// through.
func TestTCPSynRetries(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.n.Cut(1, 2)
	tn.n.Open(0, 1, 2, 0)
	tn.run(Never - 1)
	assert.Equal(t, []string{"2m7s connect-failed 1"}, tn.log)

	tn = newTNet(Constant(ms), 0)
	tn.n.Cut(1, 2)
	tn.n.Open(0, 1, 2, 0)
	tn.run(Instant(10 * time.Second))
	tn.n.Heal(1, 2)
	tn.run(Never - 1)
	assert.Equal(t, []string{"15.004s established 1"}, tn.log)
}

// TestTCPRefusedAndCrash: no process listening answers a SYN with RST (T12);
// a crashed process's kernel sends FIN/RST on its connections, so the peer
// learns at once; a rebooted host answers the old connection's next
// segment with RST.
func TestTCPRefusedAndCrash(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.n.Crash(2)
	tn.n.Open(0, 1, 2, 0)
	tn.run(Never - 1)
	assert.Equal(t, []string{"2ms connect-failed 1"}, tn.log)

	tn = newTNet(Constant(ms), 0)
	tn.established(t)
	now := Instant(time.Second)
	tn.n.Crash(2)
	tn.n.Abort(now, 2, 1, 0)
	tn.run(Never - 1)
	assert.Equal(t, []string{"1.001s disconnect 1"}, tn.log)

	tn = newTNet(Constant(ms), 0)
	tn.established(t)
	tn.n.HostDown(2)
	tn.n.Send(Instant(time.Second), 1, 2, 0, toy{1}) // lost: the host is silent
	tn.run(Instant(2 * time.Second))
	assert.Empty(t, tn.log, "a silent host is not noticed")
	tn.n.HostUp(2, true)
	tn.run(Never - 1)
	// Retransmissions at 1.202, 1.606, 2.414 s: the one after the reboot gets RST.
	// (it arrives 1 ms later, where no socket answers it).
	assert.Equal(t, []string{"2.415s disconnect 1"}, tn.log)
}

func TestTCPLossRate(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	tn.established(t)
	tn.n.SetLoss(0.01)
	late := 0
	start := tn.q.Now()
	for i := 0; i < 20000; i++ {
		at := start + Instant(i)*Instant(time.Second)
		tn.run(at)
		tn.n.Send(at, 1, 2, 0, toy{i})
	}
	tn.run(Never - 1)
	for i := 0; i < 20000; i++ {
		if tn.at[i]-(start+Instant(i)*Instant(time.Second)) > Instant(100*ms) {
			late++
		}
	}
	assert.Len(t, tn.at, 20000, "TCP loses no message")
	assert.InDelta(t, 200, late, 45, "about p of the messages need a retransmission")
}

func TestTCPClosedConnectionAndFilter(t *testing.T) {
	tn := newTNet(Constant(10), 0)
	assert.Equal(t, DropClosed, tn.n.Send(0, 1, 2, 0, toy{1}), "no connection yet")
	tn.established(t)
	tn.n.SetFilter(func(_ Instant, from, to NodeID, m toy) Verdict {
		return Verdict{Drop: m.n%2 == 0, Delay: 5}
	})
	now := tn.q.Now()
	assert.Equal(t, DropFilter, tn.n.Send(now, 1, 2, 0, toy{2}))
	assert.Equal(t, NotDropped, tn.n.Send(now, 1, 2, 0, toy{3}))
	tn.n.Send(now, 1, 2, 0, toy{5})
	tn.n.Close(1, 2, 0)
	tn.run(Never - 1)
	assert.Empty(t, tn.at, "a closed connection's messages are discarded")
}

func TestTCPBandwidthSerialisesSenderEgress(t *testing.T) {
	tn := newTNet(Constant(ms), 0)
	for _, p := range [][2]NodeID{{1, 2}, {1, 3}, {4, 2}} {
		tn.n.Open(0, p[0], p[1], 0)
	}
	tn.run(Instant(time.Second))
	tn.n.SetBandwidth(1000, func(m toy) int { return m.n }) // 1000 B/s
	now := tn.q.Now()
	tn.n.Send(now, 1, 2, 0, toy{500}) // 0.5 s on the wire
	tn.n.Send(now, 1, 3, 0, toy{100}) // queued behind it: 0.6 s
	tn.n.Send(now, 4, 2, 0, toy{101}) // another sender: 0.101 s
	tn.run(Never - 1)
	assert.Equal(t, now.Add(501*ms), tn.at[500])
	assert.Equal(t, now.Add(601*ms), tn.at[100])
	assert.Equal(t, now.Add(102*ms), tn.at[101])
}
