package coordinator

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/internal/protoscript"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestScripts runs the classic coordinator's interaction scripts of
// testdata/*.txt: the script plays the members, each on its own connection
// (conn=N, client.id cN), one request at a time, and each command prints
// the replies the broker sent (to any connection: a JoinGroup completing
// answers every parked member) and its trace events, one line each with its
// virtual time. The constants are GroupCoordinatorTest's (session and
// rebalance timeouts 500 ms, group.initial.rebalance.delay.ms 50 ms,
// group.max.size 4; helpers_test.go), and after every command the broker's
// incremental indexes are recounted (checkIndexes). A connection remembers
// the member id and generation its last JoinGroup response gave it, so
// member= and gen= are needed only to say something else. Commands:
//
//	new [profile=P] [max-size=N] [initial-delay=D] [append-latency=D]
//	join conn=N [member=ID|none] [instance=I] [v=V] [session=D] [rebalance=D] [protocols=(range roundrobin)]
//	                      JoinGroup (v3 for a dynamic member, v5 for a static one)
//	sync conn=N [member=ID] [gen=G] [assign=(1:0,1 2:2-3)]   SyncGroup; assign by connection
//	heartbeat conn=N [member=ID] [gen=G] [instance=I]
//	commit conn=N [member=ID] [gen=G]
//	leave conn=N [member=ID] [instance=I]
//	advance D             move the clock, firing every timer due at its instant (Tick)
//	failover [load=D]     broker 1 resigns; broker 2 loads the last persisted record
//	state                 the group's state, generation, leader and members
func TestScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/*.txt", func(t *testing.T) datadriven.Handler {
		e := &classicEnv{t: t}
		return e.handle
	})
}

type classicEnv struct {
	t        *testing.T
	f        *fixture
	ids      map[Conn]string
	gens     map[Conn]int32
	mods     []func(*Config)
	brokerID int32 // the broker coordinating the group now
}

func (e *classicEnv) handle(c *datadriven.Case, b *strings.Builder) error {
	if c.Cmd != "new" && e.f == nil {
		return fmt.Errorf("before new")
	}
	conn := Conn(0)
	if v, ok := c.Arg("conn"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("conn: %v", err)
		}
		conn = Conn(n)
	}
	member := func() string {
		if v, ok := c.Arg("member"); ok {
			if v == "none" {
				return ""
			}
			return v
		}
		return e.ids[conn]
	}
	gen := func() int32 {
		if v, ok := c.Arg("gen"); ok {
			n, _ := strconv.Atoi(v)
			return int32(n)
		}
		return e.gens[conn]
	}
	instance, _ := c.Arg("instance")
	switch c.Cmd {
	case "new":
		return e.newBroker(c)
	case "join":
		r := staticJoin(member(), instance)
		r.GroupID, r.ClientID = testGroup, fmt.Sprint("c", conn)
		if instance == "" {
			r.Version = 3
		}
		for _, a := range c.Args {
			switch a.Key {
			case "v":
				n, _ := strconv.Atoi(a.Vals[0])
				r.Version = int16(n)
			case "session", "rebalance":
				d, err := time.ParseDuration(a.Vals[0])
				if err != nil {
					return err
				}
				if a.Key == "session" {
					r.SessionTimeout = d
				} else {
					r.RebalanceTimeout = d
				}
			case "protocols":
				r.Protocols = protocols(a.Vals...)
			}
		}
		e.send(b, conn, r)
	case "sync":
		r := syncReq(member(), gen())
		for _, a := range c.Args {
			if a.Key != "assign" {
				continue
			}
			for _, w := range a.Vals {
				who, parts, _ := strings.Cut(w, ":")
				n, err := strconv.Atoi(who)
				if err != nil {
					return fmt.Errorf("assign %q: want conn:partitions", w)
				}
				ps, err := protoscript.Parts([]string{parts})
				if err != nil {
					return err
				}
				r.Assignments = append(r.Assignments, protocol.SyncGroupAssignment{MemberID: e.ids[Conn(n)],
					Assignment: protocol.Assignment{Partitions: ps}})
			}
		}
		e.send(b, conn, r)
	case "heartbeat":
		r := hbReq(member(), gen())
		r.GroupInstanceID = instance
		e.send(b, conn, r)
	case "commit":
		e.send(b, conn, &protocol.OffsetCommitRequest{GroupID: testGroup, GenerationID: gen(), MemberID: member(), GroupInstanceID: instance})
	case "leave":
		e.send(b, conn, leaveReq(protocol.LeaveGroupMember{MemberID: member(), GroupInstanceID: instance}))
	case "advance":
		d, err := c.Duration()
		if err != nil {
			return err
		}
		// Timer by timer, so each line shows the instant it happened.
		end := e.f.now.Add(d)
		for dl := e.f.b.NextDeadline(); dl <= end; dl = e.f.b.NextDeadline() {
			e.write(b, e.f.advance(max(dl, e.f.now).Sub(e.f.now)))
			if e.f.b.NextDeadline() == dl {
				break // a timer that stays due (cannot happen; never spin)
			}
		}
		e.write(b, e.f.advance(end.Sub(e.f.now)))
	case "failover":
		load := time.Duration(0)
		if v, ok := c.Arg("load"); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			load = d
		}
		old := e.f
		old.out.Reset()
		old.b.Resign(old.now, testGroup, &old.out)
		e.write(b, append([]Reply(nil), old.out.Replies...))
		e.brokerID++
		mods := append(append([]func(*Config){}, e.mods...), func(cfg *Config) {
			cfg.BrokerID, cfg.Name = e.brokerID, fmt.Sprint("broker-", e.brokerID)
		})
		f := newFixture(e.t, "", mods...)
		f.b.Resign(0, testGroup, &f.out)
		f.b.ContinueMemberIDs(old.b)
		f.now = old.now
		f.out.Reset()
		f.b.Elect(f.now, testGroup, load, old.persisted, &f.out)
		f.notePersist()
		e.f = f
		e.write(b, append([]Reply(nil), f.out.Replies...))
	case "state":
		s, g, ok := e.f.b.GroupState(testGroup)
		if !ok {
			b.WriteString("no group\n")
			return nil
		}
		fmt.Fprintf(b, "%s gen=%d leader=%q members=%v\n", s, g, e.f.b.Leader(testGroup), e.f.b.Members(testGroup))
	default:
		return fmt.Errorf("unknown command")
	}
	return nil
}

func (e *classicEnv) newBroker(c *datadriven.Case) error {
	profile := "kafka-3.x"
	var mods []func(*Config)
	for _, a := range c.Args {
		v := a.Val()
		switch a.Key {
		case "profile":
			profile = v
		case "max-size":
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			mods = append(mods, func(cfg *Config) { cfg.MaxSize = n })
		case "initial-delay", "append-latency":
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			key := a.Key
			mods = append(mods, func(cfg *Config) {
				if key == "initial-delay" {
					cfg.InitialRebalanceDelay = d
				} else {
					cfg.AppendLatency = Const(d)
				}
			})
		default:
			return fmt.Errorf("unknown argument %q", a.Key)
		}
	}
	mods = append([]func(*Config){func(cfg *Config) { cfg.Profile = Profile(profile) }}, mods...)
	e.f = newFixture(e.t, profile, mods...)
	e.mods, e.brokerID = mods, 1
	e.ids, e.gens = map[Conn]string{}, map[Conn]int32{}
	return nil
}

// send handles req on conn and prints what came of it.
func (e *classicEnv) send(b *strings.Builder, conn Conn, req protocol.Request) {
	e.write(b, e.f.send(conn, req))
}

// write prints the broker's events and then its replies, remembering the
// member id and generation each JoinGroup response gives its connection.
func (e *classicEnv) write(b *strings.Builder, replies []Reply) {
	now := e.f.now
	for _, ev := range e.f.out.Events {
		protoscript.WriteEvent(b, now, ev)
	}
	for _, r := range replies {
		fmt.Fprintf(b, "%s reply conn=%d %s %s", now, r.Conn, r.Resp.API(), r.Resp.Err())
		switch resp := r.Resp.(type) {
		case *protocol.JoinGroupResponse:
			fmt.Fprintf(b, " gen=%d member=%s leader=%s", resp.GenerationID, resp.MemberID, resp.Leader)
			if resp.ProtocolName != "" {
				fmt.Fprintf(b, " protocol=%s", resp.ProtocolName)
			}
			if len(resp.Members) > 0 {
				fmt.Fprintf(b, " members=%d", len(resp.Members))
			}
			if resp.SkipAssignment {
				b.WriteString(" skip-assignment")
			}
			if resp.MemberID != "" {
				e.ids[r.Conn] = resp.MemberID
			}
			if resp.Error == protocol.None {
				e.gens[r.Conn] = resp.GenerationID
			}
		case *protocol.SyncGroupResponse:
			if resp.Error == protocol.None {
				fmt.Fprintf(b, " parts=%s", protoscript.FormatParts(resp.Assignment.Partitions))
			}
		case *protocol.LeaveGroupResponse:
			for _, m := range resp.Members {
				if m.Error != protocol.None {
					fmt.Fprintf(b, " %s=%s", m.MemberID, m.Error)
				}
			}
		}
		b.WriteByte('\n')
	}
}
