package realkafka

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
)

// Plan is what one repetition starts and does: versions, hosts, members and
// the fault timeline, built from a scenario by NewPlan.
type Plan struct {
	Scenario      *scenario.Scenario
	BrokerVersion string
	Brokers       int
	// Members in start order; Join members start only at their join fault.
	Members []Member
	Actions []Action // the fault timeline, sorted by At
	// Dropped lists the faults and settings left out (with --drop-unsupported).
	Dropped []string
	Notes   []string
	Topics  []scenario.Topic
	Groups  []string
	// Rep and Seed: the repetition this plan is for and its seed
	// (ForRepetition; 0 before); Phases: the fault phases it drew.
	Rep    int
	Seed   uint64
	Phases []Phase
}

// Member is one consumer process slot: the scenario's member name
// ("<group>-<index>"), its client version and configuration.
type Member struct {
	Name          string
	Group         string
	Index         int // host index (address 10.77.0.(10+Index))
	StartAt       time.Duration
	ClientVersion string
	Props         map[string]string // consumer properties (Kafka names)
	Driver        map[string]string // driver.* settings (workload)
	Subscribe     []string
	Consumer      bool // group.protocol=consumer
	Deferred      bool // started by a join fault, not at StartAt
}

// Action is one wall-clock step of the fault timeline.
type Action struct {
	At     time.Duration
	Kind   string // kill, term, start, stop, cont, slow-poll, cut, heal, loss, broker-kill, broker-start, broker-term, host-down, host-up, broker-host-down, broker-host-up, add-partitions
	Target string // member name, broker name ("broker-0"), or "" (network-wide)
	Peer   string // cut/heal: the other end (a broker name or "coordinator")
	OneWay bool
	Value  float64       // loss probability
	Dur    time.Duration // slow-poll
	Fault  string        // the scenario fault this step comes from
	// Set: the client properties of the processes started from this step
	// on (rolling-restart with set:), Kafka names; "" removes the key.
	Set map[string]string
	// Count: add-partitions' new partition count of topic Target.
	Count int
	// Subject names what the fault touches and Window the span its phase
	// is drawn over (faultPhase): every action of one subject moves by
	// the same phase in a repetition (ForRepetition). Window 0: none.
	Subject   string
	Window    time.Duration
	WindowWhy string
	PhaseMs   int64 // the phase drawn for this repetition (ForRepetition)
}

// UnsupportedError lists the faults and settings a scenario needs that the
// testbed cannot make.
type UnsupportedError struct{ Items []string }

func (e *UnsupportedError) Error() string {
	return "cannot run on a real Kafka here:\n  " + strings.Join(e.Items, "\n  ") +
		"\n(pass --drop-unsupported to run without them; the summary then lists what was dropped)"
}

// brokerVersions maps a coordinator profile's release line to the broker
// jar used for it (the latest release of that line on Maven Central).
// Every 2.x and 3.x profile runs on the 3.9 line: the last with the Scala
// classic GroupCoordinator and KRaft (2.x brokers need ZooKeeper, which the
// testbed does not run).
var brokerVersions = map[string]string{
	"3": "3.9.1", "4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.2", "4.3": "4.3.1", "4.4": "4.4.0",
}

// clientVersions maps a client profile's release to the kafka-clients jar.
var clientVersions = map[string]string{
	"2.5": "2.5.1", "2.6": "2.6.3", "2.7": "2.7.2", "2.8": "2.8.2",
	"3.0": "3.0.2", "3.1": "3.1.2", "3.2": "3.2.3", "3.3": "3.3.2", "3.4": "3.4.1", "3.5": "3.5.2",
	"3.6": "3.6.2", "3.7": "3.7.2", "3.8": "3.8.1", "3.9": "3.9.1",
	"4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.1", "4.3": "4.3.1", "4.4": "4.4.0",
}

// profileRelease is the release a profile name stands for (scenario/profile.go:
// the coarse names are the last release the simulator models of their line).
func profileRelease(p string) (major, minor int, err error) {
	switch p {
	case "kafka-2.x":
		return 2, 8, nil
	case "kafka-3.x":
		return 3, 7, nil
	case "kafka-4.x":
		return 4, 3, nil
	}
	v := strings.TrimPrefix(p, "kafka-")
	f := strings.Split(v, ".")
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("profile %q names no release", p)
	}
	if major, err = strconv.Atoi(f[0]); err == nil {
		minor, err = strconv.Atoi(f[1])
	}
	return major, minor, err
}

// BrokerVersionFor is the broker jar version for a coordinator profile.
func BrokerVersionFor(profile string) (string, error) {
	ma, mi, err := profileRelease(profile)
	if err != nil {
		return "", err
	}
	if ma < 4 {
		return brokerVersions["3"], nil
	}
	if v, ok := brokerVersions[fmt.Sprintf("%d.%d", ma, mi)]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no broker jar for profile %s (available: 3.9.1, 4.0.2, 4.1.2, 4.2.2, 4.3.1, 4.4.0)", profile)
}

// ClientVersionFor is the kafka-clients version for a client profile.
func ClientVersionFor(profile string) (string, error) {
	ma, mi, err := profileRelease(profile)
	if err != nil {
		return "", err
	}
	if v, ok := clientVersions[fmt.Sprintf("%d.%d", ma, mi)]; ok {
		return v, nil
	}
	return "", fmt.Errorf("client profile %s: no kafka-clients jar that the driver can use (it needs ConsumerGroupMetadata, Kafka 2.5+); the nearest available is 2.5.1", profile)
}

var assignorClass = map[string]string{
	"range":              "org.apache.kafka.clients.consumer.RangeAssignor",
	"roundrobin":         "org.apache.kafka.clients.consumer.RoundRobinAssignor",
	"sticky":             "org.apache.kafka.clients.consumer.StickyAssignor",
	"cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// distSpec writes a scenario distribution for the driver (Driver.Dist).
func distSpec(d scenario.Dist) string {
	switch d.Kind {
	case scenario.DistUniform:
		return "uniform:" + ms(d.Min) + ":" + ms(d.Max)
	case scenario.DistExponential:
		return "exponential:" + ms(d.Min) + ":" + ms(d.Mean)
	case scenario.DistLognormal:
		return "lognormal:" + ms(d.Median) + ":" + ms(d.P99)
	}
	return "constant:" + ms(d.Value)
}

// MaxAcceptedLatency is the largest constant network.latency accepted: the
// simulator's default (1ms). The testbed's veth RTT is ≈ 0.06–0.1 ms, so a
// scenario at or below 1 ms runs with the real latency (reported as measured).
const MaxAcceptedLatency = time.Millisecond

// VethOneWay is the testbed's one-way latency over its veth bridge
// (≈ 0.05 ms, half its measured RTT); a repetition does not measure its own.
const VethOneWay = 50 * time.Microsecond

// NewPlan builds the plan of sc. brokerVersion overrides the coordinator
// profile's (--kafka); drop leaves unsupported faults and settings out
// instead of failing.
func NewPlan(sc *scenario.Scenario, brokerVersion string, drop bool) (*Plan, error) {
	p := &Plan{Scenario: sc, Brokers: max(sc.Coordinator.Brokers, 1), Topics: sc.Topics}
	var bad []string
	unsupported := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if brokerVersion == "" {
		v, err := BrokerVersionFor(sc.Coordinator.Profile)
		if err != nil {
			return nil, fmt.Errorf("coordinator.profile: %v", err)
		}
		brokerVersion = v
		if ma, _, _ := profileRelease(sc.Coordinator.Profile); ma < 3 || sc.Coordinator.Profile != "kafka-3.9" && ma == 3 {
			p.Notes = append(p.Notes, fmt.Sprintf("coordinator.profile %s runs on broker %s (the 3.9 line: KRaft with the Scala classic coordinator)", sc.Coordinator.Profile, brokerVersion))
		}
	}
	p.BrokerVersion = brokerVersion
	n := sc.Network
	if n.Latency.Kind != scenario.DistConstant || n.Latency.Value > MaxAcceptedLatency {
		unsupported("network.latency: %s (only a constant latency at or below %v can run here: netem is absent, the veth latency is what it is)", distSpec(n.Latency), MaxAcceptedLatency)
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("network.latency %v: the real latency is the veth bridge's (≈%g ms one way)", n.Latency.Value, float64(VethOneWay)/float64(time.Millisecond)))
	}
	if n.BandwidthBytesPerSecond > 0 {
		unsupported("network.bandwidth: cannot be shaped here")
	}
	if n.LossToBroker != 0 && n.LossToBroker != n.Loss || n.LossDirectional {
		unsupported("network.loss per direction: not made yet (only a symmetric network.loss)")
	}
	c := sc.Coordinator
	if c.AppendLatency.Kind != scenario.DistConstant || c.AppendLatency.Value != 0 {
		unsupported("coordinator.append.latency: the real broker's log append takes what it takes")
	}
	if c.AppendErrorProbability > 0 {
		unsupported("coordinator.append.error: cannot be injected into a real broker")
	}
	if c.AppendBandwidth > 0 {
		unsupported("coordinator.append.bandwidth: cannot be shaped here")
	}
	if c.RequestTime.Kind != scenario.DistConstant || c.RequestTime.Value != 0 {
		unsupported("coordinator.request.time: the real broker's handling time is what it is")
	}
	if sc.Swarm != nil {
		unsupported("swarm: random faults are not made on the real testbed")
	}
	if sc.MeasureFrom > 0 {
		p.Notes = append(p.Notes, "measure.from is applied to the real figures as to the simulated ones")
	}
	// Members.
	host := 0
	for _, g := range sc.Groups {
		if !contains(p.Groups, g.ID) {
			p.Groups = append(p.Groups, g.ID)
		}
		cv, err := ClientVersionFor(g.Client.Profile)
		if err != nil {
			return nil, fmt.Errorf("groups[%s].client.profile: %v", g.ID, err)
		}
		if g.Consumer() && !strings.HasPrefix(brokerVersion, "4.") {
			unsupported("groups[%s].client.group.protocol: consumer needs a 4.x broker (broker %s; pass --kafka 4.4.0)", g.ID, brokerVersion)
		}
		if g.Workload.AssignTime.Kind != scenario.DistConstant || g.Workload.AssignTime.Value != 0 {
			unsupported("groups[%s].workload.assign.time: the driver has no timed assignor yet", g.ID)
		}
		for i := 0; i < g.Members; i++ {
			m := newMember(sc, &g, g.FirstIndex+i, host, cv)
			m.StartAt = g.Start.At + time.Duration(i)*g.Start.Stagger
			p.Members = append(p.Members, m)
			host++
		}
	}
	// Faults.
	for _, f := range sc.Faults {
		where := fmt.Sprintf("faults (line %d): %s", f.Line, f.Kind)
		desc := fmt.Sprintf("{at: %v, %s: %s}", f.At, f.Kind, f.Target)
		subject, window, why := faultPhase(sc, &f)
		add := func(a Action) {
			a.Fault, a.Subject, a.Window, a.WindowWhy = desc, subject, window, why
			p.Actions = append(p.Actions, a)
		}
		isBroker := strings.HasPrefix(f.Target, "broker-") || f.Target == "coordinator"
		switch f.Kind {
		case scenario.FaultCrash:
			if isBroker {
				add(Action{At: f.At, Kind: "broker-kill", Target: f.Target})
				if f.For > 0 {
					add(Action{At: f.At + f.For, Kind: "broker-start", Target: f.Target})
				}
				continue
			}
			add(Action{At: f.At, Kind: "kill", Target: f.Target})
			if f.For > 0 {
				add(Action{At: f.At + f.For, Kind: "start", Target: f.Target})
			}
		case scenario.FaultRestart:
			add(Action{At: f.At, Kind: "start", Target: f.Target})
		case scenario.FaultLeave:
			add(Action{At: f.At, Kind: "term", Target: f.Target})
		case scenario.FaultPause:
			if isBroker {
				unsupported("%s: pause of a broker is not made yet", where)
				continue
			}
			add(Action{At: f.At, Kind: "stop", Target: f.Target})
			add(Action{At: f.At + f.For, Kind: "cont", Target: f.Target})
		case scenario.FaultSlowPoll:
			add(Action{At: f.At, Kind: "slow-poll", Target: f.Target, Dur: f.For})
		case scenario.FaultPartition:
			a, b := f.Peers[0], f.Peers[1]
			if strings.HasPrefix(a, "broker-") || a == "coordinator" {
				a, b = b, a
			}
			if !(strings.HasPrefix(b, "broker-") || b == "coordinator") || strings.HasPrefix(a, "broker-") {
				unsupported("%s: only a member–broker partition is made here (%s, %s)", where, f.Peers[0], f.Peers[1])
				continue
			}
			ow := f.Direction == scenario.DirectionOneWay
			add(Action{At: f.At, Kind: "cut", Target: a, Peer: b, OneWay: ow})
			add(Action{At: f.At + f.For, Kind: "heal", Target: a, Peer: b, OneWay: ow})
		case scenario.FaultLoss:
			add(Action{At: f.At, Kind: "loss", Value: f.Loss})
			add(Action{At: f.At + f.For, Kind: "loss", Value: sc.Network.Loss})
		case scenario.FaultCoordinatorFailover:
			add(Action{At: f.At, Kind: "broker-term", Target: "coordinator"})
			add(Action{At: f.At + 10*time.Second, Kind: "broker-start", Target: "coordinator"})
			p.Notes = append(p.Notes, "coordinator-failover: the coordinator broker is stopped with SIGTERM (controlled shutdown moves __consumer_offsets-0 at once) and restarted 10 s later")
		case scenario.FaultJoin:
			m := p.joinMember(sc, f.Target, host)
			if m == nil {
				unsupported("%s: group %s not found", where, f.Target)
				continue
			}
			host++
			add(Action{At: f.At, Kind: "start", Target: m.Name})
		case scenario.FaultLatency:
			unsupported("%s: latency windows cannot be made here (netem, fq and NFQUEUE are absent)", where)
		case scenario.FaultFilter:
			unsupported("%s: per-API message filters need a protocol-aware proxy", where)
		case scenario.FaultHostDown:
			// docs/real-kafka-testbed.md §6.3: drop-all in the host's
			// namespace, SIGKILL, delete the veth and the namespace (no
			// FIN/RST leaves it); after `for` the host comes back with the
			// same address and a fresh process.
			down, up := "host-down", "host-up"
			if isBroker {
				down, up = "broker-host-down", "broker-host-up"
			}
			add(Action{At: f.At, Kind: down, Target: f.Target, Dur: f.For})
			if f.For > 0 {
				add(Action{At: f.At + f.For, Kind: up, Target: f.Target})
			}
		case scenario.FaultRollingRestart:
			var set map[string]string
			if f.Set != nil {
				set = p.rollingSet(sc, f.Target, f.Set)
				if set == nil {
					unsupported("%s: group %s not found", where, f.Target)
					continue
				}
				if f.Set.GroupProtocol == scenario.ProtocolConsumer && !strings.HasPrefix(brokerVersion, "4.") {
					unsupported("%s: set: group.protocol: consumer needs a 4.x broker (broker %s; pass --kafka 4.4.0)", where, brokerVersion)
					continue
				}
			}
			gi := p.groupMembers(f.Target)
			for k, name := range gi {
				at := f.At + time.Duration(k)*f.Interval
				add(Action{At: at, Kind: "term", Target: name})
				add(Action{At: at + f.Downtime, Kind: "start", Target: name, Set: set})
			}
		case scenario.FaultAddPartitions:
			add(Action{At: f.At, Kind: "add-partitions", Target: f.Target, Count: f.Partitions})
		default:
			unsupported("%s: unknown to the real testbed", where)
		}
	}
	sortActions(p.Actions)
	if len(bad) > 0 {
		if !drop {
			return nil, &UnsupportedError{Items: bad}
		}
		p.Dropped = bad
	}
	if p.Brokers > 3 {
		return nil, fmt.Errorf("coordinator.brokers: %d brokers; the real testbed runs at most 3 on 2 cores", p.Brokers)
	}
	return p, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (p *Plan) groupMembers(group string) []string {
	var out []string
	for _, m := range p.Members {
		if m.Group == group && !m.Deferred {
			out = append(out, m.Name)
		}
	}
	return out
}

// rollingSet is the consumer properties a rolling restart's set: gives the
// group's restarted processes: the group's client settings with the change
// applied, written as newMember writes them, and every property of the old
// protocol that the new one does not take removed ("" values).
func (p *Plan) rollingSet(sc *scenario.Scenario, group string, c *scenario.ClientChange) map[string]string {
	var g *scenario.Group
	for i := range sc.Groups {
		if sc.Groups[i].ID == group {
			g = &sc.Groups[i]
			break
		}
	}
	if g == nil {
		return nil
	}
	before := newMember(sc, g, 0, 0, "")
	ng := *g
	if c.GroupProtocol != "" {
		ng.Client.GroupProtocol = c.GroupProtocol
	}
	if c.RemoteAssignor != "" {
		ng.Client.RemoteAssignor = c.RemoteAssignor
	}
	after := newMember(sc, &ng, 0, 0, "")
	set := map[string]string{}
	for k, v := range after.Props {
		if k != "client.id" && k != "group.instance.id" && before.Props[k] != v {
			set[k] = v
		}
	}
	for k := range before.Props {
		if _, ok := after.Props[k]; !ok {
			set[k] = ""
		}
	}
	return set
}

func (p *Plan) joinMember(sc *scenario.Scenario, group string, host int) *Member {
	var last *scenario.Group
	n := 0
	for i := range sc.Groups {
		if sc.Groups[i].ID == group {
			last = &sc.Groups[i]
		}
	}
	if last == nil {
		return nil
	}
	for _, m := range p.Members {
		if m.Group == group {
			n++
		}
	}
	cv, _ := ClientVersionFor(last.Client.Profile)
	m := newMember(sc, last, n, host, cv)
	m.Deferred = true
	p.Members = append(p.Members, m)
	return &p.Members[len(p.Members)-1]
}

func newMember(sc *scenario.Scenario, g *scenario.Group, index, host int, cv string) Member {
	name := fmt.Sprintf("%s-%d", g.ID, index)
	c := g.Client
	props := map[string]string{
		"group.id":                g.ID,
		"client.id":               name,
		"max.poll.interval.ms":    ms(c.MaxPollInterval),
		"request.timeout.ms":      ms(c.RequestTimeout),
		"retry.backoff.ms":        ms(c.RetryBackoff),
		"enable.auto.commit":      strconv.FormatBool(c.AutoCommit),
		"auto.commit.interval.ms": ms(c.AutoCommitInterval),
		"auto.offset.reset":       "earliest",
		"max.poll.records":        "10",
	}
	set := func(k string, d time.Duration) {
		if d > 0 {
			props[k] = ms(d)
		}
	}
	set("retry.backoff.max.ms", c.RetryBackoffMax)
	set("reconnect.backoff.ms", c.ReconnectBackoff)
	set("reconnect.backoff.max.ms", c.ReconnectBackoffMax)
	set("socket.connection.setup.timeout.ms", c.SocketSetupTimeout)
	set("socket.connection.setup.timeout.max.ms", c.SocketSetupTimeoutMax)
	set("metadata.max.age.ms", c.MetadataMaxAge)
	if g.Consumer() {
		props["group.protocol"] = "consumer"
		if c.RemoteAssignor != "" {
			props["group.remote.assignor"] = c.RemoteAssignor
		}
	} else {
		props["session.timeout.ms"] = ms(sc.SessionTimeout(g))
		props["heartbeat.interval.ms"] = ms(sc.HeartbeatInterval(g))
		var cls []string
		for _, a := range c.Assignors {
			cls = append(cls, assignorClass[a])
		}
		if len(cls) > 0 {
			props["partition.assignment.strategy"] = strings.Join(cls, ",")
		}
	}
	if c.StaticMembership {
		props["group.instance.id"] = name
	}
	w := g.Workload
	drv := map[string]string{
		"member":        name,
		"topics":        strings.Join(g.Subscribe, ","),
		"poll.interval": distSpec(w.PollInterval),
		"poll.timeout":  distSpec(w.PollTimeout),
		"callback.time": distSpec(w.CallbackTime),
		"seed":          strconv.FormatUint(sc.Seed*1000003+uint64(host), 10),
	}
	return Member{Name: name, Group: g.ID, Index: host, ClientVersion: cv, Props: props, Driver: drv,
		Subscribe: g.Subscribe, Consumer: g.Consumer()}
}

func sortActions(acts []Action) {
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].At < acts[j].At })
}
