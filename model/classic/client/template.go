package client

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/netclient"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Template is a validated member configuration shared by the members built
// from it: everything but the client id (Config.Name) and the
// group.instance.id, which Template.NewMember takes per member. A world of
// 100,000 members keeps one copy of the configuration instead of one each
// (memory per member). A Template is not safe for concurrent use:
// members built from it share a scratch buffer and a cache, so every member of one
// Template must be driven from one goroutine (one simulated world).
type Template struct {
	t *template
}

// template is what the members of one Template share (read-only but for
// scratch, the sharedProtocols cache and the whys table).
type template struct {
	Config
	lookup      func(string) (assign.Assignor, bool)
	behaviour   *behaviour
	cooperative bool
	net         netclient.Config
	// scratch is the network client's list of requests one close fails; a
	// nested call takes it and leaves nil.
	scratch []inflight
	// sharedProtocols is the last JoinGroup protocol list without owned
	// partitions (groupProtocols), shared by the members that send the
	// same one; read-only once built.
	sharedProtocols []protocol.GroupProtocol
	// whys are the connection-close reasons the members were told
	// (queued.why indexes it).
	whys []string
	// replay is what the lazy poll replay (fastForward) knows of the poll
	// distributions, worked out once for all the members.
	replay pollReplay
}

// pollReplay is the poll distributions as fastForward uses them.
type pollReplay struct {
	// fixed, when > 0, is every PollInterval draw, and neither PollInterval
	// nor PollTimeout takes from the random stream: the replay then needs
	// no loop.
	fixed time.Duration
	// fixedTimeout: PollTimeout takes nothing from the stream (its draw is
	// skipped).
	fixedTimeout bool
	// lognormal: PollInterval is a lognormalDist, drawn inline
	// (LognormalDraw) with these parameters.
	lognormal     bool
	median, sigma float64
	least         time.Duration
}

// fixedDist is a Dist whose every draw is one value and takes nothing from
// the random stream (vtime.Const; the harness's poll distributions).
type fixedDist interface {
	Fixed() time.Duration
}

// lognormalDist is a Dist whose draw is max(median·exp(sigma·N(0,1)), min),
// N drawn with NormFloat64 and clamped at MaxInt64/2 (the harness's default
// poll.interval): fastForward makes that draw inline, to the bit, instead of
// an interface call per poll (TestInlineLognormalDrawsAsDist).
type lognormalDist interface {
	Lognormal() (median, sigma float64, min time.Duration)
}

// newPollReplay works out cfg's pollReplay: the poll cadence fastForward may
// replay in one step (the constant PollInterval when both poll
// distributions are fixed, else 0), and how it draws otherwise.
func newPollReplay(cfg *Config) pollReplay {
	var r pollReplay
	iv, ok1 := cfg.PollInterval.(fixedDist)
	_, r.fixedTimeout = cfg.PollTimeout.(fixedDist)
	if ok1 && r.fixedTimeout {
		r.fixed = max(iv.Fixed(), 0)
	}
	if ln, ok := cfg.PollInterval.(lognormalDist); ok {
		r.lognormal = true
		r.median, r.sigma, r.least = ln.Lognormal()
	}
	return r
}

// NewTemplate validates cfg (as NewMember does, but for the client id, which
// each member gets from Template.NewMember) and returns a template for its
// members. cfg is copied: changing it afterwards changes no member.
func NewTemplate(cfg Config) (*Template, error) {
	if cfg.Name == "" {
		cfg.Name = "template" // validated per member by Template.NewMember
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, err := newTemplate(cfg, defaultAssignorLookup)
	if err != nil {
		return nil, err
	}
	return &Template{t: t}, nil
}

// NewMember builds a member of the template's configuration with client id
// name and group.instance.id instanceID ("" for a dynamic member). rng is the
// member's own random stream. It panics on an empty name, as NewMember does
// on an invalid configuration.
func (t *Template) NewMember(name, instanceID string, rng *rand.Rand) *Member {
	if name == "" {
		panic("client: NewMember: client: Name is empty")
	}
	return t.t.newMember(name, instanceID, rng)
}

// newTemplate prepares a validated configuration: Kafka's network defaults
// filled in, the subscription sorted, the behaviour of the profile and the
// rebalance protocol chosen once (the ConsumerCoordinator constructor: the
// protocol is the highest one every configured assignor supports;
// COOPERATIVE needs 2.4+).
func newTemplate(cfg Config, lookup func(string) (assign.Assignor, bool)) (*template, error) {
	b, _ := lookupBehaviour(string(cfg.Profile))
	applyNetDefaults(&cfg, b)
	cfg.Topics = slices.Clone(cfg.Topics)
	slices.Sort(cfg.Topics)
	cfg.Name, cfg.GroupInstanceID = "", "" // per member: Member.name, Member.static
	coop := b.ownedInSubscription()
	for _, name := range cfg.Assignors {
		a, ok := lookup(name)
		if !ok {
			return nil, fmt.Errorf("unknown assignor %q", name)
		}
		if !slices.Contains(a.SupportedProtocols(), assign.Cooperative) {
			coop = false
		}
	}
	return &template{Config: cfg, lookup: lookup, behaviour: b, cooperative: coop, net: netConfig(&cfg, b), replay: newPollReplay(&cfg)}, nil
}

func (t *template) newMember(name, instanceID string, rng *rand.Rand) *Member {
	if rng == nil {
		panic("client: NewMember: nil rng")
	}
	m := &Member{
		cfg: t, name: name, rng: rng, cooperative: t.cooperative,
		state: Unjoined, gen: noGeneration,
		rejoinNeeded: true, rejoinReason: RejoinInitial, needsJoinPrepare: true,
		autoCommit: autoCommitState{at: protocol.Never},
	}
	if instanceID != "" {
		m.static = &instanceID
	}
	if t.behaviour.heartbeatTask {
		m.hbt.heartbeater = &heartbeatTask{m: m, at: protocol.Never}
	} else {
		m.hbt.thread = heartbeatThread{m: m}
		m.hbt.heartbeater = &m.hbt.thread
	}
	m.hb.heartbeatDeadline, m.hb.sessionDeadline, m.hb.pollDeadline = protocol.Never, protocol.Never, protocol.Never
	return m
}
