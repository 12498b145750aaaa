package client

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestScripts runs the client interaction scripts of testdata/scripts: a
// test plays the coordinator by hand, one command at a time, and each
// command prints what the member did (requests sent, trace events), one
// line each with its virtual time. A new client behaviour then costs a text
// file, not Go code. Commands:
//
//	new profile=P [instance=ID] [session=D] [max-poll=D] [poll=D] [assign-time=D] [callback-time=D] [auto-commit] [coop]
//	start                     the application thread's first poll()
//	advance D [ack-heartbeats] run both threads' timers up to now+D (answering
//	                          every heartbeat NONE at each whole second)
//	respond API [err=CODE] [node=N] [gen=G member=M leader=L members=(M1 M2) skip-assignment] [parts=(0 1)]
//	                          answer the oldest pending request of API
//	drop API                  forget every pending request of API (lost)
//	disconnect [broker=N]     the connections to broker N were reset
//	slow-poll D               the application is stuck for D more
//	close                     KafkaConsumer.close()
//	tick                      both threads' ticks at now, due or not
//	deadlines                 NextAppDeadline and NextHeartbeatDeadline
//	state                     the member's state, generation, owned partitions
//	_breakpoint               nothing (datadriven.RunScripts: a debugger breakpoint line)
func TestScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/scripts/*.txt", func(t *testing.T) datadriven.Handler {
		var d *driver
		return func(c *datadriven.Case, b *strings.Builder) error {
			if c.Cmd != "new" && d == nil {
				return fmt.Errorf("%s before new", c.Cmd)
			}
			return scriptCommand(t, &d, c, b)
		}
	})
}

func scriptCommand(t *testing.T, dp **driver, c *datadriven.Case, b *strings.Builder) error {
	arg := func(k string) string { v, _ := c.Arg(k); return v }
	dur := func(s string) (time.Duration, error) { return time.ParseDuration(s) }
	switch c.Cmd {
	case "new":
		var mods []func(*Config)
		for _, a := range c.Args {
			a := a
			v := a.Val()
			switch a.Key {
			case "profile":
			case "instance":
				mods = append(mods, func(cfg *Config) { cfg.GroupInstanceID = v })
			case "auto-commit":
				mods = append(mods, func(cfg *Config) { cfg.AutoCommit = true })
			case "coop":
				mods = append(mods, func(cfg *Config) { cfg.Assignors = []string{"cooperative-sticky"} })
			case "session", "max-poll", "poll", "assign-time", "callback-time":
				d, err := dur(v)
				if err != nil {
					return err
				}
				mods = append(mods, func(cfg *Config) {
					switch a.Key {
					case "session":
						cfg.SessionTimeout = d
					case "max-poll":
						cfg.MaxPollInterval = d
					case "poll":
						cfg.PollInterval = Const(d)
					case "assign-time":
						cfg.AssignTime = Const(d)
					case "callback-time":
						cfg.CallbackTime = Const(d)
					}
				})
			default:
				return fmt.Errorf("new: unknown argument %q", a.Key)
			}
		}
		d := newDriver(t, arg("profile"), mods...)
		d.log = func(now protocol.Instant, out *Output) { writeOutput(b, now, out) }
		*dp = d
	case "start":
		(*dp).start()
	case "advance", "slow-poll":
		p, err := c.Duration()
		if err != nil {
			return err
		}
		d := *dp
		_, ack := c.Arg("ack-heartbeats")
		switch {
		case c.Cmd == "advance" && ack:
			d.advanceAcking(p)
		case c.Cmd == "advance":
			d.advance(p)
		default:
			d.call(func(o *Output) { d.m.SlowPoll(d.now, p, o) })
		}
	case "respond":
		return scriptRespond(*dp, c, b)
	case "drop":
		api, err := apiNamed(c.Args[0].Key)
		if err != nil {
			return err
		}
		(*dp).drop(api)
	case "disconnect":
		n, _ := strconv.Atoi(arg("broker"))
		d := *dp
		d.call(func(o *Output) { d.m.Disconnected(d.now, int32(n), o) })
	case "close":
		d := *dp
		d.call(func(o *Output) { d.m.Close(d.now, o) })
	case "tick":
		// Both threads' ticks at now, whatever their deadlines say.
		d := *dp
		d.call(func(o *Output) { d.m.TickApp(d.now, o); d.m.TickHeartbeat(d.now, o) })
	case "deadlines":
		m := (*dp).m
		fmt.Fprintf(b, "app=%s heartbeat=%s\n", m.NextAppDeadline(), m.NextHeartbeatDeadline())
	case "state":
		m := (*dp).m
		gen, id := m.Generation()
		fmt.Fprintf(b, "%s gen=%d member=%q owned=%s", m.State(), gen, id, partList(m.Owned()))
		if m.Stopped() {
			fmt.Fprintf(b, " stopped=%s", m.FatalError())
		}
		b.WriteString("\n")
	default:
		return fmt.Errorf("unknown command %q", c.Cmd)
	}
	return nil
}

func scriptRespond(d *driver, c *datadriven.Case, b *strings.Builder) error {
	if len(c.Args) == 0 {
		return fmt.Errorf("respond: which API?")
	}
	api, err := apiNamed(c.Args[0].Key)
	if err != nil {
		return err
	}
	if d.count(api) == 0 {
		fmt.Fprintf(b, "no %s pending\n", api)
		return nil
	}
	code := protocol.None
	if v, ok := c.Arg("err"); ok {
		if code, err = errorNamed(v); err != nil {
			return err
		}
	}
	num := func(k string, def int) int {
		if v, ok := c.Arg(k); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
		return def
	}
	str := func(k, def string) string {
		if v, ok := c.Arg(k); ok {
			return v
		}
		return def
	}
	var parts []protocol.TopicPartition
	for _, a := range c.Args {
		if a.Key == "parts" {
			for _, v := range a.Vals {
				n, _ := strconv.Atoi(v)
				parts = append(parts, tp(int32(n)))
			}
		}
	}
	var resp protocol.Response
	switch api {
	case protocol.APIFindCoordinator:
		resp = &protocol.FindCoordinatorResponse{Error: code, NodeID: int32(num("node", 0))}
	case protocol.APIJoinGroup:
		jr := &protocol.JoinGroupResponse{Error: code, GenerationID: int32(num("gen", 1)), ProtocolType: "consumer",
			ProtocolName: str("protocol", "range"), Leader: str("leader", "leader"), MemberID: str("member", "m1")}
		_, jr.SkipAssignment = c.Arg("skip-assignment")
		for _, a := range c.Args {
			if a.Key == "members" { // the leader's member list, each subscribed to t
				for _, id := range a.Vals {
					jr.Members = append(jr.Members, protocol.JoinGroupMember{MemberID: id,
						Metadata: protocol.Subscription{Topics: []string{"t"}, GenerationID: protocol.NoGeneration}})
				}
			}
		}
		resp = jr
	case protocol.APISyncGroup:
		resp = &protocol.SyncGroupResponse{Error: code, ProtocolType: "consumer", ProtocolName: str("protocol", "range"),
			Assignment: protocol.Assignment{Partitions: parts}}
	case protocol.APIHeartbeat:
		resp = &protocol.HeartbeatResponse{Error: code}
	case protocol.APIOffsetCommit:
		resp = &protocol.OffsetCommitResponse{Error: code}
	case protocol.APILeaveGroup:
		resp = &protocol.LeaveGroupResponse{Error: code}
	case protocol.APIConsumerGroupHeartbeat:
		fallthrough
	default:
		return fmt.Errorf("respond: no response for %s", api)
	}
	d.respond(d.pop(api), resp)
	return nil
}

func apiNamed(name string) (protocol.APIKey, error) {
	for _, a := range []protocol.APIKey{protocol.APIFindCoordinator, protocol.APIJoinGroup, protocol.APISyncGroup,
		protocol.APIHeartbeat, protocol.APILeaveGroup, protocol.APIOffsetCommit} {
		if a.String() == name {
			return a, nil
		}
	}
	return 0, fmt.Errorf("unknown API %q", name)
}

func errorNamed(name string) (protocol.ErrorCode, error) {
	for _, e := range protocol.AllErrorCodes {
		if e.String() == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown error code %q", name)
}

func partList(ps []protocol.TopicPartition) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p.Partition))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// writeOutput prints one call's output, one line each at now: its trace
// events, then the requests it sent.
func writeOutput(b *strings.Builder, now protocol.Instant, out *Output) {
	for _, e := range out.Events {
		fmt.Fprintf(b, "%s %s", now, e.Kind)
		for _, kv := range [][2]string{{"state", e.State}, {"detail", e.Detail}, {"reason", e.Reason}, {"peer", e.Peer}} {
			if kv[1] != "" {
				fmt.Fprintf(b, " %s=%s", kv[0], kv[1])
			}
		}
		if e.API != 0 || e.Kind == protocol.EvRequestTimeout || e.Kind == protocol.EvGenerationReset {
			fmt.Fprintf(b, " api=%s", e.API)
		}
		if e.Err != protocol.None {
			fmt.Fprintf(b, " err=%s", e.Err)
		}
		fmt.Fprintf(b, " gen=%d", e.Gen)
		if e.Partitions != nil {
			fmt.Fprintf(b, " parts=%s", partList(e.Partitions))
		}
		b.WriteString("\n")
	}
	for _, s := range out.Sends {
		fmt.Fprintf(b, "%s send %s broker=%d", now, s.Req.API(), s.Broker)
		if s.Coord {
			b.WriteString(" coord")
		}
		switch r := s.Req.(type) {
		case *protocol.JoinGroupRequest:
			fmt.Fprintf(b, " v%d member=%q rebalance-timeout=%s", r.Version, r.MemberID, r.RebalanceTimeout)
			if r.Reason != "" {
				fmt.Fprintf(b, " reason=%q", r.Reason)
			}
		case *protocol.SyncGroupRequest:
			fmt.Fprintf(b, " gen=%d member=%q assignments=%d", r.GenerationID, r.MemberID, len(r.Assignments))
			for _, a := range r.Assignments {
				fmt.Fprintf(b, " %s=%s", a.MemberID, partList(a.Assignment.Partitions))
			}
		case *protocol.HeartbeatRequest:
			fmt.Fprintf(b, " gen=%d member=%q", r.GenerationID, r.MemberID)
		case *protocol.OffsetCommitRequest:
			fmt.Fprintf(b, " gen=%d member=%q parts=%s", r.GenerationID, r.MemberID, partList(r.Partitions))
		case *protocol.LeaveGroupRequest:
			fmt.Fprintf(b, " members=%d", len(r.Members))
		}
		b.WriteString("\n")
	}
}
