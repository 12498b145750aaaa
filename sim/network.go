package sim

import (
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"
)

// NodeID names an endpoint of the network.
type NodeID int32

// Verdict is what a message filter decides for one message.
type Verdict struct {
	Drop  bool
	Delay time.Duration // extra one-way delay (still FIFO per connection)
}

// Filter inspects each message at send time; the zero Verdict passes it.
type Filter[M any] func(now Instant, from, to NodeID, msg M) Verdict

// segKind is what a scheduled network event is.
type segKind uint8

const (
	segData   segKind = iota // a message (or its retransmission) arrives at To
	segRetx                  // the sender's retransmission timer for the head of a direction fires
	segSyn                   // the initiator (From) transmits a SYN
	segSynAck                // the SYN-ACK (or the RST refusing it) arrives back at the initiator
	segReady                 // the ApiVersions exchange after the handshake is done
)

// Delivery is one scheduled network event: a message arriving, a
// retransmission timer, a handshake step or a FIN. The network hands it to
// the scheduler installed with SetScheduler; the caller schedules it at At
// and hands it back to Handle when it comes due.
type Delivery[M any] struct {
	At       Instant
	From, To NodeID
	Ch       uint8 // the connection's channel: two endpoints may hold several connections
	kind     segKind
	refused  bool // segSynAck: the peer answered RST (no listener)
	fin      bool // the segment is a FIN/RST, not a message
	tries    uint8
	epoch    uint32
	seq      uint32        // per direction; 2^32 messages on one direction is beyond any run
	tx       Instant       // when this copy was transmitted
	extra    time.Duration // filter delay
	Msg      M
}

// IsMessage reports whether d carries an application message (else it is a
// handshake step or a FIN).
func (d *Delivery[M]) IsMessage() bool { return (d.kind == segData || d.kind == segRetx) && !d.fin }

// Epoch names the connection d belongs to (it changes at every open and
// close of the connection between the same endpoints on the same channel).
func (d *Delivery[M]) Epoch() uint32 { return d.epoch }

// DropReason says why a message was not delivered.
type DropReason uint8

const (
	NotDropped    DropReason = iota
	DropLoss                 // the transmission was lost; TCP retransmits it (not a drop for the application)
	DropPartition            // the transmission was lost to a partition; TCP retransmits it
	DropReset                // the connection was closed or reset while the message was in flight
	DropFilter               // a message filter dropped it (an application-level drop, not TCP)
	DropClosed               // sent on a connection that is not open
	DropHeld                 // queued behind a lost segment (head-of-line blocking)
)

func (r DropReason) String() string {
	switch r {
	case NotDropped:
		return "delivered"
	case DropLoss:
		return "loss"
	case DropPartition:
		return "partition"
	case DropReset:
		return "reset"
	case DropFilter:
		return "filter"
	case DropClosed:
		return "closed"
	case DropHeld:
		return "held"
	}
	return "unknown"
}

// Outcome is what Handle makes of a due Delivery.
type Outcome uint8

const (
	// Deliver: the message arrives at d.To now.
	Deliver Outcome = iota
	// Pending: nothing for the endpoints (a segment was lost and its
	// retransmission is scheduled, a message waits behind a lost one, a
	// handshake step went on).
	Pending
	// Dropped: the connection the event belonged to is gone; discard it.
	Dropped
	// Established: the connection initiated by d.From is open and ready.
	Established
	// ConnectFailed: d.From's connection attempt failed: refused by RST (no
	// process listening) or given up after tcp_syn_retries.
	ConnectFailed
	// Disconnect: the connection was torn down under the endpoint Handle
	// names (a FIN/RST from a crashed peer, an RST from a rebooted host, or
	// the sender's kernel giving up after tcp_retries2).
	Disconnect
	// Lost: a transmission of the message was lost (on the way, or a
	// retransmission); the next retransmission is scheduled. Nothing for
	// the endpoints; for traces.
	Lost
	// Retransmitted: a retransmission of the message got through; it (and
	// what waited behind it) arrives shortly. For traces.
	Retransmitted
)

func (o Outcome) String() string {
	switch o {
	case Deliver:
		return "deliver"
	case Pending:
		return "pending"
	case Dropped:
		return "dropped"
	case Established:
		return "established"
	case ConnectFailed:
		return "connect-failed"
	case Disconnect:
		return "disconnect"
	case Lost:
		return "lost"
	case Retransmitted:
		return "retransmitted"
	}
	return "unknown"
}

// TCP holds the Linux TCP constants the model uses (network-model.md §1).
type TCP struct {
	RTOMin  time.Duration // TCP_RTO_MIN, 200 ms (T1)
	RTOMax  time.Duration // TCP_RTO_MAX, 120 s (T1)
	RTOInit time.Duration // TCP_TIMEOUT_INIT, 1 s, before any RTT sample (T2)
	// GiveUp is tcp_retries2 (15) as time: the connection is aborted once
	// the oldest unacknowledged segment has waited this long, 924.6 s (T5).
	GiveUp time.Duration
	// SynRetries is tcp_syn_retries (6): SYNs at 0, 1, 3, 7, 15, 31, 63 s,
	// abort at 127 s (T7, kernels before 6.5).
	SynRetries int
}

// LinuxTCP is the default: Linux's constants.
var LinuxTCP = TCP{
	RTOMin: 200 * time.Millisecond, RTOMax: 120 * time.Second, RTOInit: time.Second,
	GiveUp: 924600 * time.Millisecond, SynRetries: 6,
}

// dir is one direction of a TCP connection: the sender's retransmission
// state and the FIFO of what it sent.
//
// Every member node has four (two connections, two directions each), so a
// dir's size is paid per member (dirSize); mind the padding when adding
// fields.
type dir[M any] struct {
	last   Instant // latest arrival scheduled (in-order delivery)
	srtt   time.Duration
	rttvar time.Duration
	seq    uint32 // next sequence number (uint32: a direction sends a message every few seconds)
	head   uint32
	// rec is 1 + the index in Network.recs of the direction's recovery
	// (its segment head is lost and awaits retransmission: when the head
	// was first sent, what waits behind it); 0 when not recovering. An
	// index, not a pointer, and the loss time out of line: a direction
	// recovers rarely, so it does not carry the recovery's state (dirSize).
	rec     uint32
	sampled bool
	backoff uint8
}

// dirSize is dir's size on 64-bit platforms; change it deliberately.
const dirSize = 40

var _ [dirSize - unsafe.Sizeof(dir[int]{})]struct{} // fails to compile if dir grows

// recovering: the direction's segment head is lost and awaits
// retransmission.
func (d *dir[M]) recovering() bool { return d.rec != 0 }

// recovery is a recovering direction's state (dir.rec).
type recovery[M any] struct {
	firstLoss Instant       // first transmission of the head (tcp_retries2 clock)
	held      []Delivery[M] // the messages behind the head, by seq
}

// conn is one TCP connection between two nodes on one channel. epoch
// changes on every open and close, so events of an older connection are
// recognised and dropped.
type conn[M any] struct {
	epoch uint32
	open  bool      // established: data may be sent
	boot  [2]uint32 // the endpoints' boot counts (lo, hi) when it opened
	d     [2]dir[M] // lo→hi, hi→lo
}

type nodeState struct {
	down   bool   // host down or unreachable: every segment to or from it is lost silently
	refuse bool   // host up, no process: SYNs and segments of old connections get RST
	boot   uint32 // incremented when the host reboots or the process restarts (sockets gone)
}

// Network is a TCP network generic over the message type (network-model.md
// §1, §8): connections are opened with a handshake (SYNs retransmitted at
// 1, 3, 7, … s), deliver in order and reliably, and retransmit a lost
// segment after the RTO (RFC 6298 with Linux's 200 ms minimum and 120 s
// maximum, doubling per consecutive loss); later messages on the connection
// wait behind it (head-of-line blocking). A partition loses every
// transmission, so data flows again at the first retransmission after the
// heal; the kernel gives up after tcp_retries2. Hosts can go silent (down)
// or lose their process (a crash: RST to anything that reaches them).
//
// Deviations, each small against Kafka's timers: a message is one segment
// (no segmentation, no congestion window: what waits behind a lost segment
// arrives with it in one burst); the tail-loss probe is not modelled (its
// probe would come after 2·SRTT + 200 ms, within a few ms of the RTO on a
// LAN, T8), nor fast retransmit (it needs later segments, T9, and group
// messages are rarely pipelined); an ACK is never lost on its own (a lost
// pure ACK is covered by the next one, §5); the RTT sample of a message is
// twice its one-way latency; the ApiVersions exchange after the handshake
// takes one round trip and is not itself lost; a connection closed by the
// application is gone at once (the orphaned socket's retransmissions,
// T10, are not modelled).
type Network[M any] struct {
	rng     *rand.Rand
	latency Dist
	loss    float64
	// lossUp is the loss for messages to nodes below lossSplit (when
	// lossSplit > 0): a per-direction loss.
	lossUp    float64
	lossSplit NodeID
	// conns holds each node's connections to lower-numbered nodes (a
	// connection is filed under its higher endpoint), in pages of
	// connPage nodes: a member's few connections to the brokers are found
	// by a short scan, not a map lookup, on every send and arrival.
	conns []*[connPage]nodeConns[M]
	// more holds a node's connections beyond the two nodeConns keeps
	// inline (a member that followed its coordinator to another broker);
	// a map, not a slice in every nodeConns: 24 bytes less per node.
	more map[NodeID][]connRef[M]
	// recs are the recovering directions' states (dir.rec), recFree the
	// free entries.
	recs    []recovery[M]
	recFree []uint32
	cuts    map[uint64]*[2]bool // per node pair, lo→hi and hi→lo
	ncuts   int
	nodes   []nodeState
	ndown   int // nodes down, to skip the check when 0
	filter  Filter[M]
	sched   func(Delivery[M])
	tcp     TCP

	// Bandwidth (SetBandwidth): each node's egress sends one message at a
	// time at bytesPerSecond; txFree[n] is when node n's link is free.
	bytesPerSecond int64
	size           func(M) int
	txFree         []Instant
}

// NewNetwork returns a network drawing latency and loss from rng. Loss is
// the probability that one transmission of one segment is lost.
func NewNetwork[M any](rng *rand.Rand, latency Dist, loss float64) *Network[M] {
	return &Network[M]{rng: rng, latency: latency, loss: loss, lossUp: loss,
		cuts: make(map[uint64]*[2]bool), tcp: LinuxTCP}
}

// SetScheduler installs the function that schedules the network's events.
// It must be set before the first Open or Send.
func (n *Network[M]) SetScheduler(f func(Delivery[M])) { n.sched = f }

// SetTCP replaces the TCP constants.
func (n *Network[M]) SetTCP(t TCP) { n.tcp = t }

// SetBandwidth gives every node an egress link of bytesPerSecond (0: no
// limit): a message occupies its sender's link for size(msg)/bandwidth, one
// message after another, before its latency starts.
func (n *Network[M]) SetBandwidth(bytesPerSecond int64, size func(M) int) {
	n.bytesPerSecond, n.size = bytesPerSecond, size
}

// SetLatency replaces the latency distribution (a latency window fault).
func (n *Network[M]) SetLatency(d Dist) { n.latency = d }

// Latency is the current latency distribution.
func (n *Network[M]) Latency() Dist { return n.latency }

// SetLoss replaces the loss probability of every transmission (a loss
// window fault).
func (n *Network[M]) SetLoss(p float64) { n.loss, n.lossUp = p, p }

// SetDirectionalLoss makes transmissions to nodes below split lose with
// probability up and all others with down.
func (n *Network[M]) SetDirectionalLoss(split NodeID, up, down float64) {
	n.lossSplit, n.lossUp, n.loss = split, up, down
}

// Loss is the current loss probability (of transmissions to nodes at or
// above the split when the loss is directional).
func (n *Network[M]) Loss() float64 { return n.loss }

// SetFilter installs (or with nil removes) a message filter.
func (n *Network[M]) SetFilter(f Filter[M]) { n.filter = f }

func pairKey(a, b NodeID) (uint64, int) {
	if a <= b {
		return uint64(uint32(a))<<32 | uint64(uint32(b)), 0
	}
	return uint64(uint32(b))<<32 | uint64(uint32(a)), 1
}

// connPage is how many nodes' connections one page of Network.conns holds:
// 78 × nodeConnsSize (208) bytes fill the 16 KiB size class to within 160
// bytes (64 would leave 3 KiB of it unused).
const connPage = 78

var _ [16384 - connPage*unsafe.Sizeof(nodeConns[int]{})]struct{} // fails to compile if a page outgrows 16 KiB

// nodeConns are the connections filed under one node (Network.conns): the
// first two inline, with their keys together in front, so that finding a
// member's connection to its coordinator reads this record and the
// connection itself, not a slice header, a slice and then a separately
// allocated connection: one cache miss fewer per send and per arrival,
// which shows in a 10,000-member world. Pages never move, so a *conn stays
// valid however many nodes are added. The third connection on is in
// Network.more.
type nodeConns[M any] struct {
	keys [2]connKey
	c    [2]conn[M]
}

// nodeConnsSize is nodeConns' size on 64-bit platforms: every member node
// has one, and connPage of them fill a page; change it deliberately.
const nodeConnsSize = 208

var _ [nodeConnsSize - unsafe.Sizeof(nodeConns[int]{})]struct{} // fails to compile if nodeConns grows

// connKey names a connection filed under a node: the other endpoint lo and
// the channel; used says the slot holds one.
type connKey struct {
	lo   NodeID
	ch   uint8
	used bool
}

// connRef is a connection of Network.more.
type connRef[M any] struct {
	connKey
	c *conn[M]
}

// lookup finds the a–b connection on ch (nil if it never existed) and
// which side a is (0: a is the lower node).
func (n *Network[M]) lookup(a, b NodeID, ch uint8) (*conn[M], int) {
	lo, hi, side := a, b, 0
	if b < a {
		lo, hi, side = b, a, 1
	}
	if int(hi)/connPage < len(n.conns) {
		nc := &n.conns[int(hi)/connPage][int(hi)%connPage]
		k := connKey{lo: lo, ch: ch, used: true}
		if nc.keys[0] == k {
			return &nc.c[0], side
		}
		if nc.keys[1] == k {
			return &nc.c[1], side
		}
		if len(n.more) > 0 {
			more := n.more[hi]
			for i := range more {
				if more[i].connKey == k {
					return more[i].c, side
				}
			}
		}
	}
	return nil, side
}

func (n *Network[M]) conn(a, b NodeID, ch uint8) (*conn[M], int) {
	c, side := n.lookup(a, b, ch)
	if c == nil {
		lo, hi := min(a, b), max(a, b)
		for int(hi)/connPage >= len(n.conns) {
			n.conns = append(n.conns, new([connPage]nodeConns[M]))
		}
		nc := &n.conns[int(hi)/connPage][int(hi)%connPage]
		k := connKey{lo: lo, ch: ch, used: true}
		switch {
		case !nc.keys[0].used:
			nc.keys[0], c = k, &nc.c[0]
		case !nc.keys[1].used:
			nc.keys[1], c = k, &nc.c[1]
		default:
			c = &conn[M]{}
			if n.more == nil {
				n.more = make(map[NodeID][]connRef[M])
			}
			n.more[hi] = append(n.more[hi], connRef[M]{connKey: k, c: c})
		}
	}
	return c, side
}

func (n *Network[M]) node(id NodeID) *nodeState {
	if int(id) >= len(n.nodes) {
		n.nodes = append(n.nodes, make([]nodeState, int(id)+1-len(n.nodes))...)
	}
	return &n.nodes[id]
}

// IsOpen reports whether the a–b connection on ch is established.
func (n *Network[M]) IsOpen(a, b NodeID, ch uint8) bool {
	c, _ := n.lookup(a, b, ch)
	return c != nil && c.open
}

// RTO is the current retransmission timeout of a→b on ch (no backoff).
func (n *Network[M]) RTO(a, b NodeID, ch uint8) time.Duration {
	c, side := n.conn(a, b, ch)
	return n.rto(&c.d[side])
}

// rto is RFC 6298's RTO with Linux's floor on the variance term: SRTT +
// max(4·RTTVAR, rto_min), within [rto_min, rto_max]; 1 s before any sample
// (network-model.md T1–T3).
func (n *Network[M]) rto(d *dir[M]) time.Duration {
	if !d.sampled {
		return n.tcp.RTOInit
	}
	return min(max(d.srtt+max(4*d.rttvar, n.tcp.RTOMin), n.tcp.RTOMin), n.tcp.RTOMax)
}

// sample is RFC 6298 §2's SRTT/RTTVAR update.
func (d *dir[M]) sample(r time.Duration) {
	if !d.sampled {
		d.srtt, d.rttvar, d.sampled = r, r/2, true
		return
	}
	diff := d.srtt - r
	if diff < 0 {
		diff = -diff
	}
	d.rttvar = (3*d.rttvar + diff) / 4
	d.srtt = (7*d.srtt + r) / 8
}

// MinDelay is the least one-way delay of a segment: a message always
// costs some time (a zero latency setting would let a request and its
// answer, and a client retrying at once, loop at one virtual instant).
const MinDelay = time.Microsecond

// delay draws one one-way latency, at least MinDelay.
func (n *Network[M]) delay() time.Duration { return max(n.latency.Draw(n.rng), MinDelay) }

// lost draws whether one transmission from→to at now is lost: the path
// is cut (or an end is down), else the loss probability decides.
func (n *Network[M]) lost(from, to NodeID) (bool, DropReason) {
	if n.cut(from, to) {
		return true, DropPartition
	}
	p := n.loss
	if to < n.lossSplit {
		p = n.lossUp
	}
	if p > 0 && n.rng.Float64() < p {
		return true, DropLoss
	}
	return false, NotDropped
}

// Open starts a connection from a (the client) to b on ch: the previous
// connection on that channel, if any, is gone, and the first SYN leaves now.
func (n *Network[M]) Open(now Instant, a, b NodeID, ch uint8) {
	c, side := n.conn(a, b, ch)
	c.epoch++
	c.open = false
	n.dropRec(&c.d[0])
	n.dropRec(&c.d[1])
	c.d[0], c.d[1] = dir[M]{}, dir[M]{}
	c.boot[side], c.boot[1-side] = n.node(a).boot, n.node(b).boot
	n.sched(Delivery[M]{At: now, From: a, To: b, Ch: ch, kind: segSyn, epoch: c.epoch, tx: now})
}

// Close ends the connection (an application close or a reset): everything
// in flight on it, both ways, is discarded.
func (n *Network[M]) Close(a, b NodeID, ch uint8) {
	c, _ := n.conn(a, b, ch)
	c.epoch++
	c.open = false
	n.dropRec(&c.d[0])
	n.dropRec(&c.d[1])
	c.d[0], c.d[1] = dir[M]{}, dir[M]{}
}

// Abort closes the connection because from's process ended (crashed, or
// exited after close()): its kernel sends what the process had written,
// then a FIN, in order; the peer sees the disconnect when the FIN arrives.
// Nothing more can be sent on it. A connection still being set up is left
// to its handshake (the peer answers RST to what follows).
func (n *Network[M]) Abort(now Instant, from, to NodeID, ch uint8) {
	c, side := n.conn(from, to, ch)
	if !c.open {
		return
	}
	c.open = false
	dd := &c.d[side]
	d := Delivery[M]{From: from, To: to, Ch: ch, kind: segData, fin: true, epoch: c.epoch, seq: dd.seq, tx: now}
	dd.seq++
	if dd.recovering() {
		n.hold(dd, d)
		return
	}
	n.transmit(now, dd, &d)
}

// Crash is the process on node dying while its host stays up: later SYNs
// and segments of its old connections are answered with RST. The caller
// aborts the node's connections (Abort) to send their FINs.
func (n *Network[M]) Crash(node NodeID) {
	s := n.node(node)
	s.boot++
	s.refuse = true
}

// Restart is a new process on node listening again.
func (n *Network[M]) Restart(node NodeID) {
	n.node(node).refuse = false
}

// HostDown makes node silent: every segment to or from it is lost, nothing
// is answered (a power loss, a kernel panic, a vanished pod).
func (n *Network[M]) HostDown(node NodeID) {
	if s := n.node(node); !s.down {
		s.down = true
		n.ndown++
	}
}

// IsHostDown says whether node's host is down (HostDown without HostUp).
func (n *Network[M]) IsHostDown(node NodeID) bool { return n.node(node).down }

// HostUp is node booting again with no sockets: segments of its old
// connections are answered with RST when they reach it.
func (n *Network[M]) HostUp(node NodeID, listening bool) {
	s := n.node(node)
	if s.down {
		s.down = false
		n.ndown--
	}
	s.boot++
	s.refuse = !listening
}

// Epoch is the current epoch of the a–b connection on ch.
func (n *Network[M]) Epoch(a, b NodeID, ch uint8) uint32 {
	c, _ := n.conn(a, b, ch)
	return c.epoch
}

// SendOn is Send on the connection of the given epoch: a reply to a request
// that came in on a connection since closed is dropped (DropClosed), as a
// broker drops responses for closed channels.
func (n *Network[M]) SendOn(now Instant, from, to NodeID, ch uint8, epoch uint32, msg M) DropReason {
	c, side := n.conn(from, to, ch)
	if c.epoch != epoch {
		return DropClosed
	}
	return n.send(now, c, side, from, to, ch, msg)
}

// Send puts msg on the from→to connection on ch at now. Unless the
// connection is not open or a filter drops the message, the network now
// owns it and will deliver it, in order, however many retransmissions that
// takes. The returned reason says what happened to its first transmission
// (NotDropped, DropLoss, DropPartition, DropHeld behind a lost segment) or
// why it was refused (DropClosed, DropFilter).
func (n *Network[M]) Send(now Instant, from, to NodeID, ch uint8, msg M) DropReason {
	c, side := n.conn(from, to, ch)
	return n.send(now, c, side, from, to, ch, msg)
}

func (n *Network[M]) send(now Instant, c *conn[M], side int, from, to NodeID, ch uint8, msg M) DropReason {
	if !c.open {
		return DropClosed
	}
	d := Delivery[M]{From: from, To: to, Ch: ch, kind: segData, epoch: c.epoch, Msg: msg}
	if n.filter != nil {
		v := n.filter(now, from, to, msg)
		if v.Drop {
			return DropFilter
		}
		d.extra = v.Delay
	}
	dd := &c.d[side]
	d.seq = dd.seq
	dd.seq++
	start := now
	if n.bytesPerSecond > 0 {
		if int(from) >= len(n.txFree) {
			n.txFree = append(n.txFree, make([]Instant, int(from)+1-len(n.txFree))...)
		}
		start = max(now, n.txFree[from])
		tx := time.Duration(int64(n.size(msg)) * int64(time.Second) / n.bytesPerSecond)
		start = start.Add(tx)
		n.txFree[from] = start
	}
	if dd.recovering() {
		d.tx = start
		n.hold(dd, d)
		return DropHeld
	}
	d.tx = start
	return n.transmit(start, dd, &d)
}

// transmit sends the first copy of d (of direction dd) at t: on loss the
// retransmission timer is armed (the head of the direction), else its
// arrival is scheduled.
func (n *Network[M]) transmit(t Instant, dd *dir[M], d *Delivery[M]) DropReason {
	if lost, why := n.lost(d.From, d.To); lost {
		n.lose(t, dd, d)
		return why
	}
	n.arrive(t, dd, d, true)
	return NotDropped
}

// lose makes d (transmitted at t) the lost head of its direction: its
// retransmission timer fires after the backed-off RTO, unless that passes
// the give-up time.
func (n *Network[M]) lose(t Instant, dd *dir[M], d *Delivery[M]) {
	if !dd.recovering() || dd.head != d.seq {
		if dd.rec == 0 {
			n.newRec(dd)
		}
		dd.head, dd.backoff = d.seq, 0
		n.recs[dd.rec-1].firstLoss = t
	} else if dd.backoff < 30 {
		dd.backoff++
	}
	gap := min(n.rto(dd)<<dd.backoff, n.tcp.RTOMax)
	r := *d
	r.kind, r.At, r.tx = segRetx, t.Add(gap), t
	n.sched(r)
}

// Handle is called when a scheduled event comes due. It returns what the
// endpoints see, and for Established, ConnectFailed and Disconnect the node
// that is told.
func (n *Network[M]) Handle(now Instant, d *Delivery[M]) (Outcome, NodeID) {
	c, side := n.conn(d.From, d.To, d.Ch)
	if c.epoch != d.epoch {
		return Dropped, 0
	}
	dd := &c.d[side]
	switch d.kind {
	case segSyn:
		return n.syn(now, c, d)
	case segSynAck:
		if d.refused {
			c.epoch++
			return ConnectFailed, d.From
		}
		c.open = true
		r := time.Duration(now - d.tx)
		c.d[0].sample(r)
		c.d[1].sample(r)
		// ApiVersions: one more round trip before the connection is READY.
		rd := *d
		rd.kind = segReady
		rd.At = now.Add(n.delay() + n.delay())
		n.sched(rd)
		return Pending, 0
	case segReady:
		return Established, d.From
	case segRetx:
		if !dd.recovering() || dd.head != d.seq {
			return Dropped, 0
		}
		if time.Duration(now-n.recs[dd.rec-1].firstLoss) >= n.tcp.GiveUp {
			// tcp_retries2: the sender's kernel aborts with ETIMEDOUT.
			n.Close(d.From, d.To, d.Ch)
			return Disconnect, d.From
		}
		d.tries++
		if lost, _ := n.lost(d.From, d.To); lost {
			n.lose(now, dd, d)
			return Lost, 0
		}
		// The head gets through: the backoff is cleared and what waited
		// behind it follows in one burst, in order, with no loss draw of
		// its own (no RTT sample either: Karn).
		dd.backoff = 0
		held := n.recs[dd.rec-1].held
		n.dropRec(dd) // not recovering; arrive may hold anew: a new slice, not this one
		n.arrive(now, dd, d, false)
		for i := range held {
			n.arrive(now, dd, &held[i], false)
		}
		return Retransmitted, 0
	case segData:
		if dd.recovering() && d.seq > dd.head {
			n.insertHeld(dd, *d) // behind the lost head (whether or not it was lost too)
			return Pending, 0
		}
		if n.cut(d.From, d.To) {
			// Lost on the way (a partition began while it flew): the
			// sender retransmits from its own transmission time.
			n.lose(d.tx, dd, d)
			return Lost, 0
		}
		toSide := 1 - side
		if n.node(d.To).boot != c.boot[toSide] {
			// No socket for it there any more: the peer answers RST and
			// the sender's connection is reset.
			n.Close(d.From, d.To, d.Ch)
			if d.fin {
				return Dropped, 0
			}
			return Disconnect, d.From
		}
		if d.fin {
			c.epoch++
			c.open = false
			return Disconnect, d.To
		}
		return Deliver, d.To
	}
	return Dropped, 0
}

// cut reports whether from→to loses everything now: a partition, or an end
// whose host is down. A segment in flight is checked with it when it
// arrives (no fresh loss draw: that was made at transmission).
func (n *Network[M]) cut(from, to NodeID) bool {
	if n.ncuts > 0 {
		k, side := pairKey(from, to)
		if c := n.cuts[k]; c != nil && c[side] {
			return true
		}
	}
	return n.ndown > 0 && (n.node(from).down || n.node(to).down)
}

// arrive schedules the arrival of d, transmitted at t (or when it leaves
// its sender's egress, if later), in order behind what dd sent before.
// sample takes the RTT sample of a first transmission (Karn).
func (n *Network[M]) arrive(t Instant, dd *dir[M], d *Delivery[M], sample bool) {
	t = max(t, d.tx)
	lat := n.delay()
	at := t.Add(lat + d.extra)
	if at < dd.last {
		at = dd.last // in order
	}
	dd.last = at
	if sample {
		dd.sample(2 * lat)
	}
	d.tx, d.At, d.kind = t, at, segData
	n.sched(*d)
}

// hold queues d behind the lost head.
func (n *Network[M]) hold(dd *dir[M], d Delivery[M]) {
	h := n.heldOf(dd)
	*h = append(*h, d)
}

// heldOf is the held messages of dd, which is recovering.
func (n *Network[M]) heldOf(dd *dir[M]) *[]Delivery[M] {
	return &n.recs[dd.rec-1].held
}

// newRec gives dd an entry of Network.recs: it starts recovering.
func (n *Network[M]) newRec(dd *dir[M]) {
	if k := len(n.recFree); k > 0 {
		dd.rec = n.recFree[k-1] + 1
		n.recFree = n.recFree[:k-1]
	} else {
		n.recs = append(n.recs, recovery[M]{})
		dd.rec = uint32(len(n.recs))
	}
}

// dropRec frees dd's entry of Network.recs (its held slice is left to
// whoever still reads it): dd no longer recovers.
func (n *Network[M]) dropRec(dd *dir[M]) {
	if dd.rec != 0 {
		n.recs[dd.rec-1] = recovery[M]{}
		n.recFree = append(n.recFree, dd.rec-1)
		dd.rec = 0
	}
}

func (n *Network[M]) insertHeld(dd *dir[M], d Delivery[M]) {
	h := n.heldOf(dd)
	i, _ := slices.BinarySearchFunc(*h, d.seq, func(e Delivery[M], s uint32) int {
		switch {
		case e.seq < s:
			return -1
		case e.seq > s:
			return 1
		}
		return 0
	})
	*h = slices.Insert(*h, i, d)
}

// syn is one SYN transmission of the handshake a→b (T7): lost (the SYN or
// its answer), it is sent again at 1, 3, 7, 15, 31, 63 s after the first,
// and the attempt fails at 127 s; a host with no listener answers RST.
func (n *Network[M]) syn(now Instant, c *conn[M], d *Delivery[M]) (Outcome, NodeID) {
	if int(d.tries) > n.tcp.SynRetries {
		c.epoch++
		return ConnectFailed, d.From
	}
	lostOut, _ := n.lost(d.From, d.To)
	lostBack := false
	if !lostOut {
		lostBack, _ = n.lost(d.To, d.From)
	}
	if lostOut || lostBack {
		d.tries++
		first := d.tx
		// Attempt k leaves at first + (2^k − 1) s; the give-up comes one
		// more doubling after the last (127 s).
		r := *d
		r.At = first.Add(time.Duration(1<<d.tries-1) * time.Second)
		n.sched(r)
		return Pending, 0
	}
	r := *d
	r.kind = segSynAck
	r.refused = n.node(d.To).refuse
	r.At = now.Add(n.delay() + n.delay())
	r.tx = now
	n.sched(r)
	return Pending, 0
}

// Cut partitions a→b (one way): every transmission is lost until Heal.
// Cutting both ways is Cut(a,b); Cut(b,a).
func (n *Network[M]) Cut(a, b NodeID) {
	k, side := pairKey(a, b)
	c := n.cuts[k]
	if c == nil {
		c = &[2]bool{}
		n.cuts[k] = c
	}
	if !c[side] {
		c[side] = true
		n.ncuts++
	}
}

// Heal removes the a→b partition. Data flows again at each connection's
// next retransmission.
func (n *Network[M]) Heal(a, b NodeID) {
	k, side := pairKey(a, b)
	if c := n.cuts[k]; c != nil && c[side] {
		c[side] = false
		n.ncuts--
	}
}
