// Test driver: a scripted fake coordinator for model/classic/client tests.
//
// Goal: drive one Member the way the harness will (Start, Step, Tick*,
// Next*Deadline) and let each test play the broker by hand: it pops the
// requests the member sent and answers them, advancing virtual time through
// the member's own deadlines. Method: etcd raft-style interaction tests, but
// scripted in Go; the tests port cases of Kafka's AbstractCoordinatorTest and
// ConsumerCoordinatorTest, each naming the Java test it comes from.
package client

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// stubRange is a tiny range assignor: contiguous ranges in member order.
type stubRange struct {
	name string
	coop bool
}

func (s stubRange) Name() string { return s.name }
func (s stubRange) SupportedProtocols() []assign.RebalanceProtocol {
	if s.coop {
		return []assign.RebalanceProtocol{assign.Eager, assign.Cooperative}
	}
	return []assign.RebalanceProtocol{assign.Eager}
}
func (s stubRange) Assign(members []assign.Member, topics []assign.Topic) [][]protocol.TopicPartition {
	out := make([][]protocol.TopicPartition, len(members))
	for _, t := range topics {
		for p := int32(0); p < t.Partitions; p++ {
			i := int(p) * len(members) / int(t.Partitions)
			out[i] = append(out[i], protocol.TopicPartition{Topic: t.Name, Partition: p})
		}
	}
	return out
}

func stubLookup(name string) (assign.Assignor, bool) {
	switch name {
	case "range":
		return stubRange{name: name}, true
	case "cooperative-sticky":
		return stubRange{name: name, coop: true}, true
	}
	return nil, false
}

func testConfig(profile string) Config {
	return Config{
		Name: "c-0", GroupID: "g", Topics: []string{"t"},
		Metadata:       Metadata{Topics: []assign.Topic{{Name: "t", Partitions: 4}}},
		Brokers:        []int32{0, 1},
		Profile:        Profile(profile),
		SessionTimeout: 10 * time.Second, HeartbeatInterval: 3 * time.Second,
		MaxPollInterval: 300 * time.Second, RetryBackoff: 100 * time.Millisecond,
		RetryBackoffMax: time.Second, RequestTimeout: 30 * time.Second,
		Assignors:    []string{"range"},
		PollInterval: Const(100 * time.Millisecond), PollTimeout: Const(100 * time.Millisecond),
		AssignTime: Const(0), CallbackTime: Const(0),
	}
}

type driver struct {
	t      *testing.T
	m      *Member
	now    protocol.Instant
	out    Output
	sends  []Send
	events []protocol.Event
	// manualConns: connections are not READY at once; the test answers
	// the ConnOps (collected in conns) with Connected/ConnectFailed.
	manualConns bool
	conns       []ConnOp
	// log, when set, sees each call's output as it is produced (scripted
	// tests print it: script_test.go).
	log func(now protocol.Instant, out *Output)
}

func newDriver(t *testing.T, profile string, mutate ...func(*Config)) *driver {
	t.Helper()
	cfg := testConfig(profile)
	for _, f := range mutate {
		f(&cfg)
	}
	return &driver{t: t, m: newMember(cfg, rand.New(rand.NewPCG(1, 2)), stubLookup)}
}

// call runs f and collects its output. Connections the member opens are
// READY at once (as with Kafka's MockClient in the Java tests).
func (d *driver) call(f func(*Output)) {
	d.out.Reset()
	f(&d.out)
	if d.log != nil {
		d.log(d.now, &d.out)
	}
	d.sends = append(d.sends, d.out.Sends...)
	d.events = append(d.events, d.out.Events...)
	if d.manualConns {
		d.conns = append(d.conns, d.out.Conns...)
		return
	}
	var opens []ConnOp
	for _, op := range d.out.Conns {
		if op.Open {
			opens = append(opens, op)
		}
	}
	for _, op := range opens {
		d.call(func(o *Output) { d.m.Connected(d.now, op.Broker, op.Coord, o) })
	}
}

func (d *driver) start() { d.call(func(o *Output) { d.m.Start(d.now, o) }) }

// pop removes and returns the oldest unanswered request of api.
func (d *driver) pop(api protocol.APIKey) Send {
	d.t.Helper()
	for i, s := range d.sends {
		if s.Req.API() == api {
			d.sends = append(d.sends[:i], d.sends[i+1:]...)
			return s
		}
	}
	require.FailNowf(d.t, "no request sent", "want %v; pending %v", api, d.pendingAPIs())
	return Send{}
}

func (d *driver) count(api protocol.APIKey) int {
	n := 0
	for _, s := range d.sends {
		if s.Req.API() == api {
			n++
		}
	}
	return n
}

func (d *driver) pendingAPIs() []protocol.APIKey {
	var r []protocol.APIKey
	for _, s := range d.sends {
		r = append(r, s.Req.API())
	}
	return r
}

func (d *driver) drop(api protocol.APIKey) {
	for d.count(api) > 0 {
		d.pop(api)
	}
}

func (d *driver) respond(s Send, resp protocol.Response) {
	d.call(func(o *Output) { d.m.Step(d.now, s.Broker, s.Corr, resp, o) })
}

// advance runs both threads' timers in deadline order up to now+dur.
func (d *driver) advance(dur time.Duration) {
	d.t.Helper()
	target := d.now.Add(dur)
	for range 1_000_000 {
		a, h := d.m.NextAppDeadline(), d.m.NextHeartbeatDeadline()
		next := min(a, h)
		if next > target {
			break
		}
		if next > d.now {
			d.now = next
		}
		if a <= d.now {
			d.call(func(o *Output) { d.m.TickApp(d.now, o) })
		}
		if h <= d.now {
			d.call(func(o *Output) { d.m.TickHeartbeat(d.now, o) })
		}
		if d.m.NextAppDeadline() <= d.now && d.m.NextHeartbeatDeadline() <= d.now && a == d.m.NextAppDeadline() && h == d.m.NextHeartbeatDeadline() {
			require.FailNow(d.t, "deadlines do not advance")
		}
	}
	d.now = target
}

func (d *driver) eventsOf(kind protocol.EventKind) []protocol.Event {
	var r []protocol.Event
	for _, e := range d.events {
		if e.Kind == kind {
			r = append(r, e)
		}
	}
	return r
}

func tp(p int32) protocol.TopicPartition { return protocol.TopicPartition{Topic: "t", Partition: p} }

// findCoordinator answers the pending FindCoordinator with broker 0.
func (d *driver) findCoordinator() {
	d.t.Helper()
	s := d.pop(protocol.APIFindCoordinator)
	d.respond(s, &protocol.FindCoordinatorResponse{NodeID: 0})
}

// joinFollower answers the pending JoinGroup (follower) and SyncGroup.
func (d *driver) joinFollower(gen int32, member string, parts ...protocol.TopicPartition) {
	d.t.Helper()
	j := d.pop(protocol.APIJoinGroup)
	d.respond(j, &protocol.JoinGroupResponse{GenerationID: gen, ProtocolType: "consumer", ProtocolName: "range", Leader: "leader", MemberID: member})
	s := d.pop(protocol.APISyncGroup)
	d.respond(s, &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: "range", Assignment: protocol.Assignment{Partitions: parts}})
}

// stable brings a fresh member to STABLE in generation 1 as follower "m1".
func (d *driver) stable(parts ...protocol.TopicPartition) {
	d.t.Helper()
	d.start()
	d.findCoordinator()
	d.joinFollower(1, "m1", parts...)
	require.Equal(d.t, Stable, d.m.State())
}
