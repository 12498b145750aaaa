package coordinator

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/internal/protoscript"
	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestScripts runs the broker interaction scripts of testdata/*.txt: the
// script plays the members, one ConsumerGroupHeartbeat at a time, and each
// command prints the response and the events the coordinator emitted, one
// line each with its virtual time. Partitions are written a:0-2,5 (a bare
// number is topic t). Commands:
//
//	new [profile=P] [topics=(a:6 b:3)] [max-size=N] [session=D] [heartbeat=D]
//	    [assignors=(uniform range)] [policy=P] [group-session=D group-heartbeat=D group-assignment-interval=D]
//	join member=M [instance=I] [topics=(a b)] [assignor=A] [group=G] [owned=(...)]
//	                      a full heartbeat at epoch 0 (rebalance timeout 5m unless rebalance-timeout=D)
//	heartbeat member=M epoch=E [owned=(...)] [instance=I] [topics=(...)] [full] [group=G]
//	                      owned absent: the null field (still owns everything)
//	leave member=M [instance=I] [group=G]   epoch −1, or −2 with an instance id
//	advance D             move the clock and fire the timers due (Tick)
//	add-partitions topic=T n=N
//	failover              the group moves to a fresh coordinator (Unload, Load)
//	group [group=G]       the group's epochs and state, then each member
//
// Migration between the protocols (migration.go), members given by id:
//
//	upgrade gen=G members=(A:0-2 B:3-5)   a Stable classic group (protocol range,
//	                      topic t) converts online (ValidateUpgrade, Upgrade)
//	classic-join member=M|none [instance=I] [owned=(...)] [v=V]
//	classic-sync member=M gen=G
//	classic-heartbeat member=M gen=G
//	classic-leave member=M [instance=I]
func TestScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/*.txt", func(t *testing.T) datadriven.Handler {
		e := &env{}
		return e.handle
	})
}

// env is one script's broker: a coordinator, the virtual clock and the
// config it was built with (a failover builds the next one from it).
type env struct {
	c   *Coordinator
	cfg Config
	now protocol.Instant
}

func (e *env) handle(c *datadriven.Case, b *strings.Builder) error {
	if c.Cmd != "new" && e.c == nil {
		return fmt.Errorf("before new")
	}
	switch c.Cmd {
	case "new":
		return e.newCoordinator(c)
	case "join", "heartbeat", "leave":
		r, err := heartbeatRequest(c)
		if err != nil {
			return err
		}
		var out Output
		e.c.Heartbeat(e.now, r, &out)
		e.write(b, &out)
		resp := out.Resp
		fmt.Fprintf(b, "%s resp %s member=%s epoch=%d", e.now, resp.Error, resp.MemberID, resp.MemberEpoch)
		if resp.HasAssignment {
			fmt.Fprintf(b, " assignment=%s", protoscript.FormatParts(resp.Assignment))
		}
		b.WriteByte('\n')
	case "upgrade", "classic-join", "classic-sync", "classic-heartbeat", "classic-leave":
		return e.classic(c, b)
	case "advance":
		d, err := c.Duration()
		if err != nil {
			return err
		}
		e.now = e.now.Add(d)
		var out Output
		e.c.Tick(e.now, &out)
		e.write(b, &out)
	case "add-partitions":
		topic, _ := c.Arg("topic")
		v, _ := c.Arg("n")
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		e.c.AddPartitions(topic, int32(n))
	case "failover":
		next, err := New(e.c.cfg)
		if err != nil {
			return err
		}
		next.ContinueIDs(e.c)
		for _, g := range e.c.groups {
			next.Load(e.now, e.c.Unload(g.ID))
		}
		e.c = next
	case "group":
		id := "g"
		if v, ok := c.Arg("group"); ok {
			id = v
		}
		g := e.c.Group(id)
		if g == nil {
			b.WriteString("no group\n")
			return nil
		}
		fmt.Fprintf(b, "%s epoch=%d assignment-epoch=%d %s\n", g.ID, g.Epoch, g.AssignmentEpoch, g.State())
		for _, m := range g.members {
			fmt.Fprintf(b, "%s", m.ID)
			if m.InstanceID != "" {
				fmt.Fprintf(b, " instance=%s", m.InstanceID)
			}
			if m.classic != nil {
				b.WriteString(" classic")
			}
			fmt.Fprintf(b, " %s epoch=%d prev=%d assigned=%s", m.state, m.epoch, m.prevEpoch, protoscript.FormatParts(m.assigned))
			if len(m.revoking) > 0 {
				fmt.Fprintf(b, " revoking=%s", protoscript.FormatParts(m.revoking))
			}
			fmt.Fprintf(b, " target=%s\n", protoscript.FormatParts(m.target))
		}
	default:
		return fmt.Errorf("unknown command")
	}
	return nil
}

func (e *env) write(b *strings.Builder, out *Output) {
	for _, ev := range out.Events {
		protoscript.WriteEvent(b, e.now, ev)
	}
	if out.Downgrade != nil {
		fmt.Fprintf(b, "%s downgrade %s gen=%d members=%d\n", e.now, out.Downgrade.ID, out.Downgrade.Generation, len(out.Downgrade.Members))
	}
}

func (e *env) newCoordinator(c *datadriven.Case) error {
	cfg := Config{Name: "broker-0", Profile: "kafka-4.0", Topics: []assign.Topic{{Name: "t", Partitions: 6}}}
	var gc GroupConfig
	for _, a := range c.Args {
		v := a.Val()
		var err error
		switch a.Key {
		case "profile":
			cfg.Profile = Profile(v)
		case "topics":
			cfg.Topics = nil
			for _, w := range a.Vals {
				name, n, _ := strings.Cut(w, ":")
				k, err := strconv.Atoi(n)
				if err != nil {
					return fmt.Errorf("topic %q: want name:partitions", w)
				}
				cfg.Topics = append(cfg.Topics, assign.Topic{Name: name, Partitions: int32(k)})
			}
		case "max-size":
			cfg.MaxSize, err = strconv.Atoi(v)
		case "session":
			cfg.SessionTimeout, err = time.ParseDuration(v)
		case "heartbeat":
			cfg.HeartbeatInterval, err = time.ParseDuration(v)
		case "assignors":
			cfg.Assignors = a.Vals
		case "policy":
			cfg.MigrationPolicy = v
		case "group-session":
			gc.SessionTimeout, err = time.ParseDuration(v)
		case "group-heartbeat":
			gc.HeartbeatInterval, err = time.ParseDuration(v)
		case "group-assignment-interval":
			gc.AssignmentInterval, err = time.ParseDuration(v)
			gc.AssignmentIntervalSet = true
		default:
			return fmt.Errorf("unknown argument %q", a.Key)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", a.Key, err)
		}
	}
	if gc != (GroupConfig{}) {
		gc.ID = "g"
		cfg.Groups = []GroupConfig{gc}
	}
	co, err := New(cfg)
	if err != nil {
		return err
	}
	e.c, e.cfg, e.now = co, cfg, 0
	return nil
}

// heartbeatRequest builds a join, heartbeat or leave from the case's arguments.
func heartbeatRequest(c *datadriven.Case) (*protocol.ConsumerGroupHeartbeatRequest, error) {
	r := &protocol.ConsumerGroupHeartbeatRequest{GroupID: "g", RebalanceTimeoutMs: -1}
	full := c.Cmd == "join"
	if _, ok := c.Arg("full"); ok {
		full = true
	}
	if full {
		r.RebalanceTimeoutMs = 300000
		r.SubscribedTopics = []string{protoscript.DefaultTopic}
		r.Owned, r.OwnedSent = []protocol.TopicPartition{}, true
	}
	for _, a := range c.Args {
		v := a.Val()
		switch a.Key {
		case "member":
			r.MemberID = v
		case "instance":
			r.InstanceID = v
		case "group":
			r.GroupID = v
		case "assignor":
			r.ServerAssignor = v
		case "topics":
			r.SubscribedTopics = a.Vals
		case "epoch":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("epoch: %v", err)
			}
			r.MemberEpoch = int32(n)
		case "rebalance-timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, err
			}
			r.RebalanceTimeoutMs = int32(d.Milliseconds())
		case "owned":
			ps, err := protoscript.Parts(a.Vals)
			if err != nil {
				return nil, err
			}
			r.Owned, r.OwnedSent = ps, true
		case "full":
		default:
			return nil, fmt.Errorf("unknown argument %q", a.Key)
		}
	}
	if c.Cmd == "leave" {
		r.MemberEpoch = protocol.LeaveEpoch
		if r.InstanceID != "" {
			r.MemberEpoch = protocol.StaticLeaveEpoch
		}
	}
	return r, nil
}

// classic runs the migration commands: a classic group's online upgrade
// and the classic protocol's requests to a consumer group.
func (e *env) classic(c *datadriven.Case, b *strings.Builder) error {
	member, _ := c.Arg("member")
	if member == "none" {
		member = ""
	}
	instance, _ := c.Arg("instance")
	gen := int32(0)
	if v, ok := c.Arg("gen"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("gen: %v", err)
		}
		gen = int32(n)
	}
	var out Output
	switch c.Cmd {
	case "upgrade":
		cg := &ClassicGroup{ID: "g", Generation: gen, ProtocolType: "consumer", ProtocolName: "range"}
		for _, a := range c.Args {
			if a.Key != "members" {
				continue
			}
			for _, w := range a.Vals {
				id, parts, _ := strings.Cut(w, ":")
				ps, err := protoscript.Parts([]string{parts})
				if err != nil {
					return err
				}
				cg.Members = append(cg.Members, ClassicMember{ID: id, SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute,
					Protocols:  classicProtocols(ps),
					Assignment: protocol.Assignment{Partitions: ps}})
			}
		}
		if code, why := e.c.ValidateUpgrade(cg); code != protocol.None {
			fmt.Fprintf(b, "%s upgrade refused %s: %s\n", e.now, code, why)
			return nil
		}
		e.c.Upgrade(e.now, cg, &out)
		e.write(b, &out)
	case "classic-join":
		r := &protocol.JoinGroupRequest{GroupID: "g", ClientID: "c", MemberID: member, GroupInstanceID: instance,
			SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute, ProtocolType: "consumer", Version: 5}
		var owned []protocol.TopicPartition
		for _, a := range c.Args {
			switch a.Key {
			case "owned":
				ps, err := protoscript.Parts(a.Vals)
				if err != nil {
					return err
				}
				owned = ps
			case "v":
				n, _ := strconv.Atoi(a.Vals[0])
				r.Version = int16(n)
			}
		}
		r.Protocols = classicProtocols(owned)
		resp := e.c.ClassicJoin(e.now, r, &out)
		e.write(b, &out)
		fmt.Fprintf(b, "%s join-resp %s gen=%d member=%s", e.now, resp.Error, resp.GenerationID, resp.MemberID)
		if resp.ProtocolName != "" {
			fmt.Fprintf(b, " protocol=%s", resp.ProtocolName)
		}
		b.WriteByte('\n')
	case "classic-sync":
		resp := e.c.ClassicSync(e.now, &protocol.SyncGroupRequest{GroupID: "g", GenerationID: gen, MemberID: member, GroupInstanceID: instance}, &out)
		e.write(b, &out)
		fmt.Fprintf(b, "%s sync-resp %s", e.now, resp.Error)
		if resp.Error == protocol.None {
			fmt.Fprintf(b, " parts=%s", protoscript.FormatParts(resp.Assignment.Partitions))
		}
		b.WriteByte('\n')
	case "classic-heartbeat":
		code := e.c.ClassicHeartbeat(e.now, &protocol.HeartbeatRequest{GroupID: "g", GenerationID: gen, MemberID: member, GroupInstanceID: instance}, &out)
		e.write(b, &out)
		fmt.Fprintf(b, "%s heartbeat-resp %s\n", e.now, code)
	case "classic-leave":
		resp := e.c.ClassicLeave(e.now, &protocol.LeaveGroupRequest{GroupID: "g",
			Members: []protocol.LeaveGroupMember{{MemberID: member, GroupInstanceID: instance}}}, &out)
		e.write(b, &out)
		fmt.Fprintf(b, "%s leave-resp %s", e.now, resp.Error)
		for _, m := range resp.Members {
			if m.Error != protocol.None {
				fmt.Fprintf(b, " %s=%s", m.MemberID, m.Error)
			}
		}
		b.WriteByte('\n')
	}
	return nil
}

// classicProtocols is a classic consumer's one protocol, range, subscribing
// to topic t and owning owned.
func classicProtocols(owned []protocol.TopicPartition) []protocol.GroupProtocol {
	return []protocol.GroupProtocol{{Name: "range", Metadata: protocol.Subscription{Topics: []string{protoscript.DefaultTopic},
		OwnedPartitions: owned, GenerationID: protocol.NoGeneration}}}
}
