package client

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/internal/protoscript"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestProcessScripts runs the process interaction scripts of
// testdata/process/*.txt: the script plays the brokers (bootstrap broker
// 0) around one consumer Process — the AsyncKafkaConsumer's application
// thread, network thread and membership — answering its requests one at
// a time; each command prints what the process did (trace events,
// requests sent, connections closed), one line each with its virtual time.
// Connections the process opens are READY at once (as with Kafka's
// MockClient), unless a script closes them. Commands:
//
//	new [auto-commit] [instance=I] [max-poll=D] [poll=D] [callback-time=D]
//	start                     the process starts (its first poll() is due)
//	respond API [err=E] [node=N] [epoch=N] [interval=D] [assignment=(...)]
//	                          answer the oldest pending request of API
//	                          (FindCoordinator, ConsumerGroupHeartbeat, OffsetCommit)
//	drop API                  forget every pending request of API (lost)
//	disconnect broker=N [coord]   the connection was reset
//	slow-poll D               the application is stuck for D more
//	advance D                 run both threads' deadlines up to now+D
//	close                     KafkaConsumer.close()
//	state                     the membership's state, epoch, owned partitions
func TestProcessScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/process/*.txt", func(t *testing.T) datadriven.Handler {
		e := &processEnv{}
		return e.handle
	})
}

type processEnv struct {
	p       *Process
	now     protocol.Instant
	pending []Send
}

func (e *processEnv) handle(c *datadriven.Case, b *strings.Builder) error {
	if c.Cmd != "new" && e.p == nil {
		return fmt.Errorf("before new")
	}
	switch c.Cmd {
	case "new":
		cfg := ProcessConfig{Member: Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{protoscript.DefaultTopic}},
			Brokers: []int32{0}}
		for _, a := range c.Args {
			if a.Key == "auto-commit" {
				cfg.AutoCommit = true
				continue
			}
			if a.Key == "instance" {
				cfg.Member.InstanceID = a.Vals[0]
				continue
			}
			d, err := time.ParseDuration(a.Vals[0])
			if err != nil {
				return fmt.Errorf("%s: %v", a.Key, err)
			}
			switch a.Key {
			case "max-poll":
				cfg.Member.MaxPollInterval = d
			case "poll":
				cfg.PollInterval, cfg.PollTimeout = Const(d), Const(d)
			case "callback-time":
				cfg.CallbackTime = Const(d)
			default:
				return fmt.Errorf("unknown argument %q", a.Key)
			}
		}
		e.p, e.now, e.pending = NewProcess(cfg, rand.New(rand.NewPCG(1, 2))), 0, nil
	case "start":
		e.call(b, func(o *ProcOutput) { e.p.Start(e.now, o) })
	case "respond":
		return e.respond(c, b)
	case "drop":
		if len(c.Args) == 0 {
			return fmt.Errorf("which API?")
		}
		kept := e.pending[:0]
		for _, s := range e.pending {
			if s.Req.API().String() != c.Args[0].Key {
				kept = append(kept, s)
			}
		}
		e.pending = kept
	case "disconnect":
		v, _ := c.Arg("broker")
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("broker: %v", err)
		}
		_, coord := c.Arg("coord")
		e.call(b, func(o *ProcOutput) { e.p.ConnectionClosed(e.now, int32(n), coord, "reset", o) })
	case "slow-poll":
		d, err := c.Duration()
		if err != nil {
			return err
		}
		e.call(b, func(o *ProcOutput) { e.p.SlowPoll(e.now, d, o) })
	case "advance":
		d, err := c.Duration()
		if err != nil {
			return err
		}
		end := e.now.Add(d)
		for range 100_000 {
			a, h := e.p.NextAppDeadline(), e.p.NextHeartbeatDeadline()
			if min(a, h) > end {
				break
			}
			e.now = max(e.now, min(a, h))
			if a <= e.now {
				e.call(b, func(o *ProcOutput) { e.p.TickApp(e.now, o) })
			}
			if h <= e.now {
				e.call(b, func(o *ProcOutput) { e.p.TickHeartbeat(e.now, o) })
			}
			if e.p.NextAppDeadline() == a && e.p.NextHeartbeatDeadline() == h {
				return fmt.Errorf("deadlines do not advance at %s", e.now)
			}
		}
		e.now = end
	case "close":
		e.call(b, func(o *ProcOutput) { e.p.Close(e.now, o) })
	case "state":
		m := e.p.m
		fmt.Fprintf(b, "%s epoch=%d owned=%s", m.State(), m.Epoch(), protoscript.FormatParts(m.Owned()))
		if e.p.Stopped() {
			fmt.Fprintf(b, " stopped fatal=%s", e.p.FatalError())
		}
		b.WriteByte('\n')
	default:
		return fmt.Errorf("unknown command")
	}
	return nil
}

// call runs f, prints its output and makes the connections it opened READY.
func (e *processEnv) call(b *strings.Builder, f func(*ProcOutput)) {
	var out ProcOutput
	f(&out)
	for _, ev := range out.Events {
		protoscript.WriteEvent(b, e.now, ev)
	}
	for _, s := range out.Sends {
		e.pending = append(e.pending, s)
		fmt.Fprintf(b, "%s send %s broker=%d", e.now, s.Req.API(), s.Broker)
		if s.Coord {
			b.WriteString(" coord")
		}
		switch r := s.Req.(type) {
		case *protocol.ConsumerGroupHeartbeatRequest:
			fmt.Fprintf(b, " epoch=%d", r.MemberEpoch)
			if r.SubscribedTopics != nil {
				b.WriteString(" full")
			}
			if r.OwnedSent {
				fmt.Fprintf(b, " owned=%s", protoscript.FormatParts(r.Owned))
			}
		case *protocol.OffsetCommitRequest:
			fmt.Fprintf(b, " gen=%d parts=%s", r.GenerationID, protoscript.FormatParts(r.Partitions))
		}
		b.WriteByte('\n')
	}
	for _, op := range out.Conns {
		if op.Open {
			e.call(b, func(o *ProcOutput) { e.p.Connected(e.now, op.Broker, op.Coord, o) })
			continue
		}
		fmt.Fprintf(b, "%s close broker=%d", e.now, op.Broker)
		if op.Coord {
			b.WriteString(" coord")
		}
		b.WriteByte('\n')
	}
}

func (e *processEnv) respond(c *datadriven.Case, b *strings.Builder) error {
	if len(c.Args) == 0 {
		return fmt.Errorf("which API?")
	}
	api := c.Args[0].Key
	i := 0
	for i < len(e.pending) && e.pending[i].Req.API().String() != api {
		i++
	}
	if i == len(e.pending) {
		fmt.Fprintf(b, "no %s pending\n", api)
		return nil
	}
	s := e.pending[i]
	e.pending = append(e.pending[:i], e.pending[i+1:]...)
	code := protocol.None
	if v, ok := c.Arg("err"); ok {
		var err error
		if code, err = protoscript.ErrorNamed(v); err != nil {
			return err
		}
	}
	var resp protocol.Response
	switch api {
	case "FindCoordinator":
		node := 0
		if v, ok := c.Arg("node"); ok {
			node, _ = strconv.Atoi(v)
		}
		resp = &protocol.FindCoordinatorResponse{Error: code, NodeID: int32(node)}
	case "OffsetCommit":
		resp = &protocol.OffsetCommitResponse{Error: code}
	case "ConsumerGroupHeartbeat":
		r, err := heartbeatResponse(&datadriven.Case{Args: c.Args[1:]})
		if err != nil {
			return err
		}
		resp = r
	default:
		return fmt.Errorf("no response for %s", api)
	}
	e.call(b, func(o *ProcOutput) { e.p.Step(e.now, s.Broker, s.Corr, resp, o) })
	return nil
}
