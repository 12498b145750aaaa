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

// TestScripts runs the member interaction scripts of testdata/*.txt: the
// script plays the broker and the application thread, one call at a time,
// and each command prints what the member did (heartbeats sent, callbacks
// handed to the application, trace events), one line each with its
// virtual time. Partitions are written a:0-2,5 (a bare number is topic t).
// Commands:
//
//	new [instance=I] [auto-commit] [revoke-from-poll] [max-poll=D]
//	found | unknown       the coordinator manager found / lost the coordinator
//	poll                  one application poll() (AppPoll)
//	respond [err=E] [epoch=N] [interval=D] [assignment=(...)]
//	                      answer the heartbeat in flight (interval 5s by default)
//	fail [disconnect]     the heartbeat in flight failed (timeout, or disconnect)
//	callback-done         the application finished the callback it was handed
//	advance D             move the clock, running Tick at every deadline on the way
//	close                 KafkaConsumer.close()
//	state                 the member's state, epoch, owned and target partitions
func TestScripts(t *testing.T) {
	datadriven.RunScripts(t, "testdata/*.txt", func(t *testing.T) datadriven.Handler {
		e := &memberEnv{}
		return e.handle
	})
}

type memberEnv struct {
	m   *Member
	now protocol.Instant
}

func (e *memberEnv) handle(c *datadriven.Case, b *strings.Builder) error {
	if c.Cmd != "new" && e.m == nil {
		return fmt.Errorf("before new")
	}
	var out Output
	switch c.Cmd {
	case "new":
		cfg := Config{Name: "m0", GroupID: "g", MemberID: "id-0", Topics: []string{protoscript.DefaultTopic}}
		for _, a := range c.Args {
			switch a.Key {
			case "instance":
				cfg.InstanceID = a.Vals[0]
			case "auto-commit":
				cfg.AutoCommit = true
			case "revoke-from-poll":
				cfg.RevokeFromPollOnly = true
			case "max-poll":
				d, err := time.ParseDuration(a.Vals[0])
				if err != nil {
					return err
				}
				cfg.MaxPollInterval = d
			default:
				return fmt.Errorf("unknown argument %q", a.Key)
			}
		}
		e.m, e.now = New(cfg, rand.New(rand.NewPCG(1, 7))), 0
		return nil
	case "found":
		e.m.CoordinatorFound(e.now, &out)
	case "unknown":
		e.m.CoordinatorUnknown()
	case "poll":
		e.m.AppPoll(e.now, &out)
	case "respond":
		r, err := heartbeatResponse(c)
		if err != nil {
			return err
		}
		e.m.Response(e.now, r, &out)
	case "fail":
		_, disconnect := c.Arg("disconnect")
		e.m.Failed(e.now, disconnect)
	case "callback-done":
		e.m.CallbackDone(e.now, &out)
	case "close":
		e.m.Close(e.now, &out)
	case "advance":
		d, err := c.Duration()
		if err != nil {
			return err
		}
		end := e.now.Add(d)
		for i := 0; ; i++ {
			dl := e.m.NextDeadline()
			if dl > end || i > 10000 {
				break
			}
			e.now = max(e.now, dl)
			e.m.Tick(e.now, &out)
			e.write(b, &out)
			out = Output{}
			if e.m.NextDeadline() == dl {
				break // nothing more to do at dl (a heartbeat in flight)
			}
		}
		e.now = end
	case "state":
		m := e.m
		fmt.Fprintf(b, "%s epoch=%d owned=%s", m.state, m.epoch, protoscript.FormatParts(m.owned))
		if m.hasTgt {
			fmt.Fprintf(b, " target=%s", protoscript.FormatParts(m.target))
		}
		if m.cbWaiting {
			fmt.Fprintf(b, " callback=%s", callbackName(m.pendingCB))
		}
		if m.inFlight {
			b.WriteString(" in-flight")
		}
		if !m.coordKnown {
			b.WriteString(" no-coordinator")
		}
		fmt.Fprintf(b, " next=%s\n", m.NextDeadline())
		return nil
	default:
		return fmt.Errorf("unknown command")
	}
	e.write(b, &out)
	return nil
}

// write prints one call's output at now: events, then the heartbeats sent,
// then the callback handed to the application.
func (e *memberEnv) write(b *strings.Builder, out *Output) {
	for _, ev := range out.Events {
		protoscript.WriteEvent(b, e.now, ev)
	}
	for _, r := range out.Sends {
		fmt.Fprintf(b, "%s send epoch=%d", e.now, r.MemberEpoch)
		if r.InstanceID != "" {
			fmt.Fprintf(b, " instance=%s", r.InstanceID)
		}
		if r.SubscribedTopics != nil {
			fmt.Fprintf(b, " full topics=%v rebalance-timeout=%dms", r.SubscribedTopics, r.RebalanceTimeoutMs)
		}
		if r.OwnedSent {
			fmt.Fprintf(b, " owned=%s", protoscript.FormatParts(r.Owned))
		}
		b.WriteByte('\n')
	}
	if out.Callback != NoCallback {
		fmt.Fprintf(b, "%s callback %s parts=%s", e.now, callbackName(out.Callback), protoscript.FormatParts(out.CallbackParts))
		if out.ReconcileStarted {
			b.WriteString(" reconcile-started")
		}
		b.WriteByte('\n')
	}
}

// callbackName is the ConsumerRebalanceListener method a Callback stands for.
func callbackName(cb Callback) string {
	return [...]string{"none", "onPartitionsRevoked", "onPartitionsAssigned", "onPartitionsLost"}[cb]
}

func heartbeatResponse(c *datadriven.Case) (*protocol.ConsumerGroupHeartbeatResponse, error) {
	r := &protocol.ConsumerGroupHeartbeatResponse{MemberID: "id-0", HeartbeatIntervalMs: 5000}
	for _, a := range c.Args {
		v := a.Val()
		var err error
		switch a.Key {
		case "err":
			r.Error, err = protoscript.ErrorNamed(v)
		case "epoch":
			var n int
			n, err = strconv.Atoi(v)
			r.MemberEpoch = int32(n)
		case "interval":
			var d time.Duration
			d, err = time.ParseDuration(v)
			r.HeartbeatIntervalMs = int32(d.Milliseconds())
		case "assignment":
			r.Assignment, err = protoscript.Parts(a.Vals)
			r.HasAssignment = true
		default:
			return nil, fmt.Errorf("unknown argument %q", a.Key)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", a.Key, err)
		}
	}
	return r, nil
}
