package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The consumer group protocol (KIP-848, group.protocol=consumer): the
// client keys group.protocol and group.remote.assignor, and the broker's
// group.consumer.* settings (kafka-consumer-protocol.md §1).

// ConsumerAssignors are the server-side assignors the broker model has
// (group.consumer.assignors; ConsumerGroupPartitionAssignor names).
var ConsumerAssignors = []string{"uniform", "range"}

// MigrationPolicies are the values of group.consumer.migration.policy
// (ConsumerGroupMigrationPolicy).
var MigrationPolicies = []string{"bidirectional", "upgrade", "downgrade", "disabled"}

// forbiddenWithConsumer maps the client properties ConsumerConfig rejects
// with group.protocol=consumer (ConfigException, KAFKA-17338, 4.0+) to what
// to use instead.
var forbiddenWithConsumer = []struct{ key, instead string }{
	{"session.timeout.ms", "the broker's coordinator: group.consumer.session.timeout.ms"},
	{"heartbeat.interval.ms", "the broker's coordinator: group.consumer.heartbeat.interval.ms"},
	{"partition.assignment.strategy", "group.remote.assignor (uniform or range) or the broker's coordinator: group.consumer.assignors"},
}

// groupProtocol decodes group.protocol and group.remote.assignor and
// rejects the classic-only keys under the consumer protocol.
func (d *decoder) groupProtocol(f *fields, path string, p profileInfo, c *Client) error {
	if v := f.get("group.protocol"); v != nil {
		kp := sub(path, "group.protocol")
		name, err := d.str(v, kp)
		if err != nil {
			return err
		}
		switch name {
		case ProtocolClassic, ProtocolConsumer:
		default:
			return d.errf(v, kp, "must be classic or consumer, not %q", name)
		}
		if !p.atLeast(3, 7) {
			return d.errf(v, kp, "not a property of profile %s (KIP-848 added it in Kafka 3.7)", p.name)
		}
		if name == ProtocolConsumer && !p.atLeast(4, 0) {
			return d.errf(v, kp, "group.protocol: consumer needs client profile kafka-4.0 or later (the protocol is generally available from Kafka 4.0; the 3.7–3.9 preview is not modelled); profile is %s", p.name)
		}
		c.GroupProtocol = name
		if name == ProtocolConsumer && d.consumerAt == nil {
			d.consumerAt, d.consumerPath = v, kp
		}
	}
	if c.GroupProtocol == ProtocolConsumer {
		for _, k := range forbiddenWithConsumer {
			if v := f.get(k.key); v != nil {
				return d.errf(v, sub(path, k.key), "not allowed with group.protocol: consumer (Kafka's ConsumerConfig rejects it, KAFKA-17338); set %s instead", k.instead)
			}
		}
	}
	if v := f.get("group.remote.assignor"); v != nil {
		kp := sub(path, "group.remote.assignor")
		if c.GroupProtocol != ProtocolConsumer {
			return d.errf(v, kp, "only with group.protocol: consumer (Kafka's ConsumerConfig rejects it under classic)")
		}
		name, err := d.str(v, kp)
		if err != nil {
			return err
		}
		if !slices.Contains(ConsumerAssignors, name) {
			return d.errf(v, kp, "unknown assignor %q; valid: %s", name, strings.Join(ConsumerAssignors, ", "))
		}
		c.RemoteAssignor = name
	}
	return nil
}

// consumerPatches are the patch releases whose consumer-group coordinator
// has fixes its minor's first release lacks (backports on the 4.0, 4.1 and
// 4.3 branches of confluentinc/kafka, read against each branch's "Bump
// version to" commits): a version kafka-MAJOR.MINOR.PATCH with PATCH ≥
// First gets Profile (the last row that applies).
var consumerPatches = []struct {
	Profile string
	Minor   [2]int
	First   int
}{
	{"kafka-4.0.2", [2]int{4, 0}, 2}, // KAFKA-19546 (7ba7f5eb05) and KAFKA-19449 (7ed2403653) in 4.0.2
	{"kafka-4.1.1", [2]int{4, 1}, 1}, // KAFKA-19546 (e76213e182) in 4.1.1, not 4.1.0
	{"kafka-4.1.2", [2]int{4, 1}, 2}, // KAFKA-19449 (77dd47d310) in 4.1.2
	{"kafka-4.3.2", [2]int{4, 3}, 2}, // KAFKA-20601 (fec5c19c37) on the 4.3 branch after 4.3.1
}

// consumerProfile is the consumer-group coordinator era of a broker
// profile: kafka-4.0 … kafka-4.4 (kafka-4.x is kafka-4.4), or the patch
// profile of a version string (consumerPatches), else "".
func consumerProfile(p profileInfo) string {
	if !p.atLeast(4, 0) {
		return ""
	}
	name := fmt.Sprintf("kafka-%d.%d", p.major, p.minor)
	for _, pp := range consumerPatches {
		if pp.Minor == [2]int{p.major, p.minor} && p.patch >= pp.First {
			name = pp.Profile
		}
	}
	return name
}

// consumerCoordinatorDefaults are GroupCoordinatorConfig's defaults
// (kafka-consumer-protocol.md §1.1).
func consumerCoordinatorDefaults(p profileInfo, c *Coordinator) {
	c.ConsumerProfile = consumerProfile(p)
	if c.ConsumerProfile == "" {
		return // a broker without consumer groups: no group.consumer.* settings
	}
	c.ConsumerSessionTimeout = 45000 * time.Millisecond
	c.ConsumerMinSessionTimeout = 45000 * time.Millisecond
	c.ConsumerMaxSessionTimeout = 60000 * time.Millisecond
	c.ConsumerHeartbeatInterval = 5000 * time.Millisecond
	c.ConsumerMinHeartbeatInterval = 5000 * time.Millisecond
	c.ConsumerMaxHeartbeatInterval = 15000 * time.Millisecond
	c.ConsumerMaxSize = math.MaxInt32
	c.ConsumerAssignors = slices.Clone(ConsumerAssignors)
	c.ConsumerMigrationPolicy = "bidirectional"
	if p.atLeast(4, 3) {
		c.ConsumerAssignmentInterval = 1000 * time.Millisecond
		c.ConsumerMaxAssignmentInterval = 15000 * time.Millisecond
	}
}

// consumerCoordinator decodes the group.consumer.* keys and checks them as
// GroupCoordinatorConfig does (GCC@4.3 L585-606).
func (d *decoder) consumerCoordinator(f *fields, path string, p profileInfo, c *Coordinator) error {
	consumerCoordinatorDefaults(p, c)
	var err error
	for _, k := range coordinatorSchema.keys {
		if v := f.get(k.name); v != nil && strings.HasPrefix(k.name, "group.consumer.") && c.ConsumerProfile == "" {
			return d.errf(v, sub(path, k.name), "not a property of profile %s: consumer groups (KIP-848) need coordinator.profile kafka-4.0 or later", p.name)
		}
	}
	for _, k := range []string{"group.consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"} {
		if v := f.get(k); v != nil && !p.atLeast(4, 3) {
			return d.errf(v, sub(path, k), "not a property of profile %s (KIP-1263 added it in Kafka 4.3)", p.name)
		}
	}
	for _, m := range []struct {
		key      string
		dst      *time.Duration
		positive bool
	}{
		{"group.consumer.session.timeout.ms", &c.ConsumerSessionTimeout, true},
		{"group.consumer.min.session.timeout.ms", &c.ConsumerMinSessionTimeout, true},
		{"group.consumer.max.session.timeout.ms", &c.ConsumerMaxSessionTimeout, true},
		{"group.consumer.heartbeat.interval.ms", &c.ConsumerHeartbeatInterval, true},
		{"group.consumer.min.heartbeat.interval.ms", &c.ConsumerMinHeartbeatInterval, true},
		{"group.consumer.max.heartbeat.interval.ms", &c.ConsumerMaxHeartbeatInterval, true},
		{"group.consumer.assignment.interval.ms", &c.ConsumerAssignmentInterval, false},
		{"group.consumer.min.assignment.interval.ms", &c.ConsumerMinAssignmentInterval, false},
		{"group.consumer.max.assignment.interval.ms", &c.ConsumerMaxAssignmentInterval, false},
	} {
		if v := f.get(m.key); v != nil {
			if *m.dst, err = d.millis(v, sub(path, m.key)); err != nil {
				return err
			}
			if m.positive && *m.dst == 0 {
				return d.errf(v, sub(path, m.key), "must be at least 1")
			}
		}
	}
	for _, m := range []struct {
		key string
		dst *time.Duration
	}{
		{"consumer.assign.time", &c.ConsumerAssignTime},
		{"consumer.first.target.time", &c.ConsumerFirstTargetTime},
		{"consumer.append.latency", &c.ConsumerAppendLatency},
		{"consumer.first.append.latency", &c.ConsumerFirstAppendLatency},
	} {
		v := f.get(m.key)
		if v == nil {
			continue
		}
		if c.ConsumerProfile == "" {
			return d.errf(v, sub(path, m.key), "not a setting of profile %s: the consumer-group coordinator's costs need coordinator.profile kafka-4.0 or later", p.name)
		}
		if *m.dst, err = d.duration(v, sub(path, m.key)); err != nil {
			return err
		}
		c.ConsumerCostsSet = true
	}
	if v := f.get("group.consumer.max.size"); v != nil {
		sz, err := d.integer(v, sub(path, "group.consumer.max.size"), 1, math.MaxInt32)
		if err != nil {
			return err
		}
		c.ConsumerMaxSize = int(sz)
	}
	if v := f.get("group.consumer.migration.policy"); v != nil {
		kp := sub(path, "group.consumer.migration.policy")
		s, err := d.str(v, kp)
		if err != nil {
			return err
		}
		// ConsumerGroupMigrationPolicy.parse is case-insensitive.
		s = strings.ToLower(strings.TrimSpace(s))
		if !slices.Contains(MigrationPolicies, s) {
			return d.errf(v, kp, "unknown policy %q; valid: %s", s, strings.Join(MigrationPolicies, ", "))
		}
		c.ConsumerMigrationPolicy = s
	}
	if v := f.get("group.consumer.assignors"); v != nil {
		kp := sub(path, "group.consumer.assignors")
		if c.ConsumerAssignors, err = d.stringList(v, kp); err != nil {
			return err
		}
		if len(c.ConsumerAssignors) == 0 {
			return d.errf(v, kp, "must name at least one assignor (%s)", strings.Join(ConsumerAssignors, ", "))
		}
		for i, a := range c.ConsumerAssignors {
			if !slices.Contains(ConsumerAssignors, a) {
				return d.errf(v, kp, "unknown assignor %q; valid: %s", a, strings.Join(ConsumerAssignors, ", "))
			}
			if slices.Index(c.ConsumerAssignors, a) != i {
				return d.errf(v, kp, "assignor %q listed twice", a)
			}
		}
	}
	// The bounds (GroupCoordinatorConfig's constructor requirements).
	for _, b := range []struct {
		val, lo, hi      time.Duration
		key, loKey, hiKy string
	}{
		{c.ConsumerSessionTimeout, c.ConsumerMinSessionTimeout, c.ConsumerMaxSessionTimeout,
			"group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
		{c.ConsumerHeartbeatInterval, c.ConsumerMinHeartbeatInterval, c.ConsumerMaxHeartbeatInterval,
			"group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
		{c.ConsumerAssignmentInterval, c.ConsumerMinAssignmentInterval, c.ConsumerMaxAssignmentInterval,
			"group.consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"},
	} {
		if c.ConsumerProfile == "" {
			break
		}
		if b.lo > b.hi {
			k := b.hiKy
			if f.get(k) == nil {
				k = b.loKey
			}
			return d.errf(f.line(k), sub(path, k), "%s (%d) must not be greater than %s (%d)", b.loKey, b.lo.Milliseconds(), b.hiKy, b.hi.Milliseconds())
		}
		if b.val < b.lo || b.val > b.hi {
			k := b.key
			if f.get(k) == nil {
				k = b.loKey
				if b.val > b.hi {
					k = b.hiKy
				}
			}
			return d.errf(f.line(k), sub(path, k), "%s (%d) must lie in [%s, %s] = [%d, %d]", b.key, b.val.Milliseconds(), b.loKey, b.hiKy, b.lo.Milliseconds(), b.hi.Milliseconds())
		}
	}
	if c.ConsumerProfile != "" && c.ConsumerHeartbeatInterval >= c.ConsumerSessionTimeout {
		k := "group.consumer.heartbeat.interval.ms"
		if f.get(k) == nil {
			k = "group.consumer.session.timeout.ms"
		}
		return d.errf(f.line(k), sub(path, k), "group.consumer.heartbeat.interval.ms (%d) must be lower than group.consumer.session.timeout.ms (%d)",
			c.ConsumerHeartbeatInterval.Milliseconds(), c.ConsumerSessionTimeout.Milliseconds())
	}
	return nil
}

// SessionTimeout is the session timeout the group entry's members live
// by: the client's session.timeout.ms, or under the consumer protocol the
// group's consumer.session.timeout.ms, else the broker's
// group.consumer.session.timeout.ms.
func (s *Scenario) SessionTimeout(g *Group) time.Duration {
	if g.Consumer() {
		if g.Configs.SessionTimeout > 0 {
			return g.Configs.SessionTimeout
		}
		return s.Coordinator.ConsumerSessionTimeout
	}
	return g.Client.SessionTimeout
}

// HeartbeatInterval is the heartbeat interval of the group entry's
// members: the client's heartbeat.interval.ms, or under the consumer
// protocol the group's consumer.heartbeat.interval.ms, else the broker's
// group.consumer.heartbeat.interval.ms.
func (s *Scenario) HeartbeatInterval(g *Group) time.Duration {
	if g.Consumer() {
		if g.Configs.HeartbeatInterval > 0 {
			return g.Configs.HeartbeatInterval
		}
		return s.Coordinator.ConsumerHeartbeatInterval
	}
	return g.Client.HeartbeatInterval
}

// GroupConfigs are a group's dynamic configs (KIP-848's GroupConfig, set
// per group with kafka-configs --entity-type groups --entity-name ID
// --add-config): consumer.session.timeout.ms and
// consumer.heartbeat.interval.ms (4.0+), consumer.assignment.interval.ms
// (4.3+, KAFKA-20251). Zero is unset (the broker's group.consumer.*
// value); the assignment interval, for which 0 is valid, is set when
// AssignmentIntervalSet.
type GroupConfigs struct {
	SessionTimeout        time.Duration
	HeartbeatInterval     time.Duration
	AssignmentInterval    time.Duration
	AssignmentIntervalSet bool
}

// Set reports whether any config is set.
func (c GroupConfigs) Set() bool {
	return c.SessionTimeout > 0 || c.HeartbeatInterval > 0 || c.AssignmentIntervalSet
}

// groupConfigs decodes a group's `configs:` and checks them as Kafka's
// GroupConfigManager.validate does, against the broker's values and bounds
// (GroupConfig.validateValues @v8.0.0, @v8.3.0: each value within the
// broker's group.consumer.min/max, the session above the heartbeat
// interval, a missing key taking the broker's value).
func (d *decoder) groupConfigs(n *yaml.Node, path string) (GroupConfigs, error) {
	var gc GroupConfigs
	f, err := d.mapping(n, path, groupConfigSchema)
	if err != nil {
		return gc, err
	}
	c := d.coord
	if c.ConsumerProfile == "" {
		return gc, d.errf(n, path, "group configs (consumer.*) need a broker that serves consumer groups: coordinator.profile kafka-4.0 or later (is %s)", c.Profile)
	}
	for _, k := range []struct {
		key, loKey, hiKey string
		dst               *time.Duration
		lo, hi            time.Duration
	}{
		{"consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms",
			&gc.SessionTimeout, c.ConsumerMinSessionTimeout, c.ConsumerMaxSessionTimeout},
		{"consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
			&gc.HeartbeatInterval, c.ConsumerMinHeartbeatInterval, c.ConsumerMaxHeartbeatInterval},
		{"consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms",
			&gc.AssignmentInterval, c.ConsumerMinAssignmentInterval, c.ConsumerMaxAssignmentInterval},
	} {
		v := f.get(k.key)
		if v == nil {
			continue
		}
		kp := sub(path, k.key)
		if k.key == "consumer.assignment.interval.ms" {
			if !ProfileAtLeast(c.Profile, 4, 3) {
				return gc, d.errf(v, kp, "not a group config of coordinator.profile %s (KAFKA-20251 added it in Kafka 4.3)", c.Profile)
			}
			gc.AssignmentIntervalSet = true
		}
		if *k.dst, err = d.millis(v, kp); err != nil {
			return gc, err
		}
		if *k.dst < k.lo || *k.dst > k.hi {
			return gc, d.errf(v, kp, "%s (%d) must lie in the broker's [%s, %s] = [%d, %d] (kafka-configs would be refused: InvalidConfigurationException)",
				k.key, k.dst.Milliseconds(), k.loKey, k.hiKey, k.lo.Milliseconds(), k.hi.Milliseconds())
		}
		if *k.dst == 0 && k.key != "consumer.assignment.interval.ms" {
			return gc, d.errf(v, kp, "must be at least 1")
		}
	}
	session, hb := c.ConsumerSessionTimeout, c.ConsumerHeartbeatInterval
	if gc.SessionTimeout > 0 {
		session = gc.SessionTimeout
	}
	if gc.HeartbeatInterval > 0 {
		hb = gc.HeartbeatInterval
	}
	if session <= hb {
		k := "consumer.session.timeout.ms"
		if f.get(k) == nil {
			k = "consumer.heartbeat.interval.ms"
		}
		return gc, d.errf(f.line(k), sub(path, k), "consumer.session.timeout.ms (%d) must be greater than consumer.heartbeat.interval.ms (%d) (a key not set takes the broker's group.consumer.* value)",
			session.Milliseconds(), hb.Milliseconds())
	}
	return gc, nil
}

// rollingSet decodes a rolling restart's `set:` (ClientChange).
func (d *decoder) rollingSet(v *yaml.Node, path string) (*ClientChange, error) {
	f, err := d.mapping(v, path, rollingSetSchema)
	if err != nil {
		return nil, err
	}
	c := &ClientChange{}
	if n := f.get("group.protocol"); n != nil {
		kp := sub(path, "group.protocol")
		if c.GroupProtocol, err = d.str(n, kp); err != nil {
			return nil, err
		}
		if c.GroupProtocol != ProtocolClassic && c.GroupProtocol != ProtocolConsumer {
			return nil, d.errf(n, kp, "must be classic or consumer, not %q", c.GroupProtocol)
		}
	}
	if n := f.get("group.remote.assignor"); n != nil {
		kp := sub(path, "group.remote.assignor")
		if c.RemoteAssignor, err = d.str(n, kp); err != nil {
			return nil, err
		}
		if !slices.Contains(ConsumerAssignors, c.RemoteAssignor) {
			return nil, d.errf(n, kp, "unknown assignor %q; valid: %s", c.RemoteAssignor, strings.Join(ConsumerAssignors, ", "))
		}
	}
	if c.GroupProtocol == "" && c.RemoteAssignor == "" {
		return nil, d.errf(v, path, "set needs group.protocol or group.remote.assignor")
	}
	return c, nil
}

// checkRollingSet checks a rolling restart's `set:` against the group it
// restarts and the broker: the consumer protocol needs client profile
// kafka-4.0+ in every cohort and a broker that serves consumer groups;
// group.remote.assignor needs the consumer protocol.
func (d *decoder) checkRollingSet(s *Scenario) error {
	for i := range s.Faults {
		f := &s.Faults[i]
		if f.Set == nil {
			continue
		}
		path := "faults[" + strconv.Itoa(i) + "].set"
		line := &yaml.Node{Line: f.Line}
		if f.Set.GroupProtocol == ProtocolConsumer {
			if s.Coordinator.ConsumerProfile == "" {
				return d.errf(line, path+".group.protocol", "group.protocol: consumer needs a broker that serves consumer groups: coordinator.profile kafka-4.0 or later (is %s)", s.Coordinator.Profile)
			}
			for j := range s.Groups {
				if g := &s.Groups[j]; g.ID == f.Target {
					if p, ok := lookupProfile(g.Client.Profile); ok && !p.atLeast(4, 0) {
						return d.errf(line, path+".group.protocol", "group.protocol: consumer needs client profile kafka-4.0 or later; group %q runs %s", g.ID, g.Client.Profile)
					}
				}
			}
		}
		if f.Set.RemoteAssignor != "" && f.Set.GroupProtocol != ProtocolConsumer {
			for j := range s.Groups {
				if g := &s.Groups[j]; g.ID == f.Target && !g.Consumer() {
					return d.errf(line, path+".group.remote.assignor", "only with group.protocol: consumer (set it too, or run the group under the consumer protocol)")
				}
			}
		}
	}
	return nil
}
