package sim

import (
	"math/rand/v2"
	"time"
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

// Delivery is a message in flight. The caller schedules it at At and hands it
// back to Accept when it comes due.
type Delivery[M any] struct {
	At       Instant
	From, To NodeID
	epoch    uint32
	Msg      M
}

// DropReason says why a message was not delivered.
type DropReason uint8

const (
	NotDropped    DropReason = iota
	DropLoss                 // per-message loss probability
	DropPartition            // the path was cut (at send or while in flight)
	DropReset                // the connection was reset while the message was in flight
	DropFilter               // a message filter dropped it
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
	}
	return "unknown"
}

// link is the connection between two nodes (unordered pair): one epoch and a
// FIFO arrival watermark per direction, as on a TCP connection.
type link struct {
	epoch uint32
	last  [2]Instant // last arrival lo→hi, hi→lo
	cut   [2]bool    // partitioned lo→hi, hi→lo
}

// Network is a lossy, partitionable network generic over the message type.
// Every connection delivers in order (TCP-like); latency is drawn per message
// from a distribution; messages can be lost with a probability; two endpoints
// can be partitioned (both ways or one way) and healed; a connection reset
// drops everything in flight on it in both directions.
type Network[M any] struct {
	rng     *rand.Rand
	latency Dist
	loss    float64
	links   map[uint64]*link
	filter  Filter[M]
	cuts    int // number of cut directions, to skip partition checks when 0

	// Bandwidth (SetBandwidth): each node's egress sends one message at a
	// time at bytesPerSecond; txFree[n] is when node n's link is free.
	bytesPerSecond int64
	size           func(M) int
	txFree         []Instant

	// Retransmission (SetRetransmit): a lost message is sent again after
	// rto, doubling, up to maxRetries times, instead of being dropped.
	rto        time.Duration
	maxRetries int
}

// SetBandwidth gives every node an egress link of bytesPerSecond (0: no
// limit): a message occupies its sender's link for size(msg)/bandwidth, one
// message after another, before its latency starts. A broker answering N
// members therefore needs N transmission times, and a large message (a
// leader's JoinGroup response listing every member) takes longer than a
// heartbeat.
func (n *Network[M]) SetBandwidth(bytesPerSecond int64, size func(M) int) {
	n.bytesPerSecond, n.size = bytesPerSecond, size
}

// SetRetransmit makes loss cost time instead of the message: each loss draw
// that hits delays the message by rto, doubling per consecutive loss (TCP's
// retransmission timeout backoff), and only after maxRetries consecutive
// losses is it dropped (a stalled connection). rto 0 restores dropping.
func (n *Network[M]) SetRetransmit(rto time.Duration, maxRetries int) {
	n.rto, n.maxRetries = rto, maxRetries
}

// NewNetwork returns a network drawing latency and loss from rng.
func NewNetwork[M any](rng *rand.Rand, latency Dist, loss float64) *Network[M] {
	return &Network[M]{rng: rng, latency: latency, loss: loss, links: make(map[uint64]*link)}
}

// SetLatency replaces the latency distribution (a latency window fault).
func (n *Network[M]) SetLatency(d Dist) { n.latency = d }

// Latency is the current latency distribution.
func (n *Network[M]) Latency() Dist { return n.latency }

// SetLoss replaces the loss probability (a loss window fault).
func (n *Network[M]) SetLoss(p float64) { n.loss = p }

// Loss is the current loss probability.
func (n *Network[M]) Loss() float64 { return n.loss }

// SetFilter installs (or with nil removes) a message filter.
func (n *Network[M]) SetFilter(f Filter[M]) { n.filter = f }

func key(a, b NodeID) (uint64, int) {
	if a <= b {
		return uint64(uint32(a))<<32 | uint64(uint32(b)), 0
	}
	return uint64(uint32(b))<<32 | uint64(uint32(a)), 1
}

func (n *Network[M]) link(a, b NodeID) (*link, int) {
	k, dir := key(a, b)
	l := n.links[k]
	if l == nil {
		l = &link{}
		n.links[k] = l
	}
	return l, dir
}

// Send puts msg on the wire from→to at now. It returns the delivery to
// schedule, or a drop reason. Loss is drawn for every message (even when the
// loss probability is 0, no draw is made, so enabling a loss window later
// does not shift earlier draws of other subsystems: they have their own streams).
func (n *Network[M]) Send(now Instant, from, to NodeID, msg M) (Delivery[M], DropReason) {
	l, dir := n.link(from, to)
	d := Delivery[M]{From: from, To: to, Msg: msg, epoch: l.epoch}
	if n.cuts > 0 && l.cut[dir] {
		return d, DropPartition
	}
	var extra time.Duration
	if n.filter != nil {
		v := n.filter(now, from, to, msg)
		if v.Drop {
			return d, DropFilter
		}
		extra = v.Delay
	}
	if n.loss > 0 && n.rng.Float64() < n.loss {
		if n.rto <= 0 {
			return d, DropLoss
		}
		backoff := n.rto
		for tries := 1; ; tries++ {
			if tries > n.maxRetries {
				return d, DropLoss
			}
			extra += backoff
			backoff *= 2
			if n.rng.Float64() >= n.loss {
				break
			}
		}
	}
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
	at := start.Add(n.latency.Draw(n.rng) + extra)
	if at < l.last[dir] {
		at = l.last[dir] // FIFO per connection direction
	}
	l.last[dir] = at
	d.At = at
	return d, NotDropped
}

// Accept is called when a delivery comes due; it reports whether the message
// arrives, or why not (the path was cut or the connection reset meanwhile).
func (n *Network[M]) Accept(d *Delivery[M]) DropReason {
	l, dir := n.link(d.From, d.To)
	if l.epoch != d.epoch {
		return DropReset
	}
	if n.cuts > 0 && l.cut[dir] {
		return DropPartition
	}
	return NotDropped
}

// Cut partitions a→b (one way). Cutting both ways is Cut(a,b); Cut(b,a).
func (n *Network[M]) Cut(a, b NodeID) {
	l, dir := n.link(a, b)
	if !l.cut[dir] {
		l.cut[dir] = true
		n.cuts++
	}
}

// Heal removes the a→b partition.
func (n *Network[M]) Heal(a, b NodeID) {
	l, dir := n.link(a, b)
	if l.cut[dir] {
		l.cut[dir] = false
		n.cuts--
	}
}

// Reset resets the connection between a and b: everything in flight on it,
// both ways, is dropped. The caller tells both endpoints.
func (n *Network[M]) Reset(a, b NodeID) {
	l, _ := n.link(a, b)
	l.epoch++
}
