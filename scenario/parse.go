package scenario

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Limits on what one scenario may ask for (TIGER_STYLE: a limit on everything).
const (
	MaxMembers    = 100000
	MaxPartitions = 1000000
	// MaxTotalPartitions bounds the partitions of all topics together:
	// capped per topic only, 20 topics of 1,000,000 partitions (877 bytes)
	// took 2.4 GB and 30 ended in a Go out-of-memory. A run's memory is
	// bounded too (harness.EstimatedMemory, --max-memory).
	MaxTotalPartitions = 1000000
	MaxBrokers         = 1000
	// MaxFileBytes bounds a scenario file: 1.29 M faults in 50 MB took
	// 3.7 GB to read. The largest built-in is a few kB.
	MaxFileBytes = 4 << 20
	// MaxFaults bounds the explicit fault timeline (swarm: draws any number).
	MaxFaults = 10000
	// CoordinatorName names the group coordinator in partition faults.
	CoordinatorName = "coordinator"
)

// Parse parses, defaults and validates a scenario file. source names the
// file in error messages.
func Parse(source string, data []byte) (*Scenario, error) {
	return ParseWithOverrides(source, data, nil)
}

// Load reads a scenario file, or, when no file has that path, the built-in
// scenario of that name (Source "builtin:<name>").
func Load(path string) (*Scenario, error) {
	return LoadWithOverrides(path, nil)
}

// LoadWithOverrides is Load followed by ParseWithOverrides.
func LoadWithOverrides(path string, overrides []Override) (*Scenario, error) {
	source, data, err := Read(path)
	if err != nil {
		return nil, err
	}
	return ParseWithOverrides(source, data, overrides)
}

// Read returns the bytes of a scenario file, or of the built-in scenario of
// that name when no such file exists, and the source name to parse them with.
func Read(path string) (source string, data []byte, err error) {
	data, err = ReadFileLimited(path, MaxFileBytes)
	if err == nil {
		return path, data, nil
	}
	var tooBig *TooBigError
	if errors.As(err, &tooBig) {
		return "", nil, err
	}
	if errors.Is(err, fs.ErrNotExist) {
		if b, ok := Builtin(path); ok {
			return "builtin:" + path, b, nil
		}
		return "", nil, fmt.Errorf("scenario %q: no such file and no such built-in scenario (built-ins: %s): %w",
			path, strings.Join(BuiltinNames(), ", "), err)
	}
	return "", nil, fmt.Errorf("scenario: %w", err)
}

// TooBigError is a file larger than the limit on input files.
type TooBigError struct {
	Path  string
	Limit int64
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s: larger than %d MiB, the limit on an input file (is it the file you meant?)", e.Path, e.Limit>>20)
}

// ReadFileLimited reads at most limit bytes of path (a device such as
// /dev/zero included) and fails with *TooBigError beyond.
func ReadFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooBigError{Path: path, Limit: limit}
	}
	return data, nil
}

// Override sets one value of a scenario before it is parsed, as a sweep does.
// Path is a field path like "groups[0].client.session.timeout.ms",
// "network.loss" or "duration"; Value is what the YAML would hold (an int,
// a float64, a string such as "10s", a bool, a []any or a map[string]any; a
// time.Duration is written as its string).
type Override struct {
	Path  string
	Value any
}

// ParseWithOverrides applies the overrides to the YAML node tree, in order,
// then parses and validates as Parse does. Keys may contain dots: each step
// of the path matches the longest known key. A path that names no key of
// the format, or indexes past the end of a list, is an error naming the path.
func ParseWithOverrides(source string, data []byte, overrides []Override) (s *Scenario, err error) {
	d := &decoder{source: source}
	if len(data) > MaxFileBytes {
		return nil, &Error{Source: source, Msg: fmt.Sprintf("%d bytes, more than the limit of %d MiB on a scenario file (for many random faults use swarm:)", len(data), MaxFileBytes>>20)}
	}
	var doc yaml.Node
	if err := unmarshal(data, &doc); err != nil {
		return nil, YAMLError(source, data, err)
	}
	if bad, why := CheckNodes(&doc); bad != nil {
		return nil, &Error{Source: source, Line: bad.Line, Msg: why}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{Source: source, Msg: "empty scenario file"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{Source: source, Msg: "expected one YAML document"}
	}
	root := doc.Content[0]
	for _, o := range overrides {
		if root, err = applyOverride(d, root, o); err != nil {
			return nil, err
		}
	}
	s, err = d.scenario(root)
	if err != nil {
		return nil, err
	}
	s.Source = source
	s.Notes = d.notes
	s.Warnings = d.warnings
	return s, nil
}

// unmarshal wraps yaml.Unmarshal: a scenario file never panics the program,
// whatever the parser does with it.
func unmarshal(data []byte, doc *yaml.Node) (err error) {
	return UnmarshalOne(data, doc)
}

// YAMLError turns a YAML syntax error into an *Error at its line. An
// unclosed flow collection ([ or {) is reported where it was opened: the
// parser only notices at the end of the file and names the line before it.
func YAMLError(source string, data []byte, err error) *Error {
	var fd *FurtherDocument
	if errors.As(err, &fd) {
		return &Error{Source: source, Line: fd.Line, Msg: fd.Error()}
	}
	msg := err.Error()
	for _, c := range []struct{ open, close byte }{{'[', ']'}, {'{', '}'}} {
		if strings.Contains(msg, "did not find expected ',' or '"+string(c.close)+"'") {
			if line, ok := unclosedFlow(data, c.open); ok {
				return &Error{Source: source, Line: line, Msg: fmt.Sprintf("invalid YAML: the %c opened here is never closed (expected ',' or '%c')", c.open, c.close)}
			}
		}
	}
	return &Error{Source: source, Line: yamlErrLine(err), Msg: yamlErrMsg(err)}
}

// unclosedFlow returns the line of the last [ or { (open) that no bracket
// closes, skipping quoted strings and comments.
func unclosedFlow(data []byte, open byte) (int, bool) {
	type opened struct {
		ch   byte
		line int
	}
	var stack []opened
	line := 1
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\n':
			line++
		case c == '#' && (i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n'):
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			for i++; i < len(data) && data[i] != c; i++ {
				if data[i] == '\n' {
					line++
				}
				if c == '"' && data[i] == '\\' {
					i++
				}
			}
		case c == '[' || c == '{':
			stack = append(stack, opened{c, line})
		case (c == ']' || c == '}') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].ch == open {
			return stack[i].line, true
		}
	}
	return 0, false
}

// yamlErrLine extracts "line N" from a yaml.v3 syntax error.
func yamlErrLine(err error) int {
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	j := i + len("line ")
	k := j
	for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(msg[j:k])
	return n
}

func yamlErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, "line "); i == 0 {
		if j := strings.Index(msg, ": "); j > 0 {
			msg = msg[j+2:]
		}
	}
	return "invalid YAML: " + msg
}

// scenario decodes the root mapping.
func (d *decoder) scenario(root *yaml.Node) (*Scenario, error) {
	if r := resolve(root); r == nil || r.Kind != yaml.MappingNode {
		// Not quoted: a file named by mistake (an experiment's scenario:
		// ../../etc/passwd) is not printed.
		return nil, d.errf(root, "", "a scenario file is a YAML mapping with name:, topics: and groups:, and this file is not one (is it the file you meant?)")
	}
	f, err := d.mapping(root, "", rootSchema)
	if err != nil {
		return nil, err
	}
	s := &Scenario{Duration: 60 * time.Second, Seed: 1}

	n := f.get("name")
	if n == nil {
		return nil, d.errf(f.node, "name", "missing required key")
	}
	if s.Name, err = d.str(n, "name"); err != nil {
		return nil, err
	}
	if n := f.get("duration"); n != nil {
		if s.Duration, err = d.duration(n, "duration"); err != nil {
			return nil, err
		}
		if s.Duration == 0 {
			return nil, d.errf(n, "duration", "must be positive")
		}
	}
	if n := f.get("seed"); n != nil {
		v, err := d.integer(n, "seed", 0, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		s.Seed = uint64(v)
	}
	if s.Coordinator, err = d.coordinator(f.get("coordinator")); err != nil {
		return nil, err
	}
	d.coord = &s.Coordinator
	if s.Network, err = d.network(f.get("network")); err != nil {
		return nil, err
	}
	n = f.get("topics")
	if n == nil {
		return nil, d.errf(f.node, "topics", "missing required key")
	}
	if s.Topics, err = d.topics(n); err != nil {
		return nil, err
	}
	n = f.get("groups")
	if n == nil {
		return nil, d.errf(f.node, "groups", "missing required key")
	}
	if s.Groups, err = d.groups(n, s.Topics); err != nil {
		return nil, err
	}
	if d.consumerAt != nil && s.Coordinator.ConsumerProfile == "" {
		return nil, d.errf(d.consumerAt, d.consumerPath,
			"group.protocol: consumer needs a broker that serves consumer groups: coordinator.profile kafka-4.0 or later (is %s)", s.Coordinator.Profile)
	}
	if n := f.get("faults"); n != nil && !isNull(n) {
		if s.Faults, err = d.faults(n, s.Groups, s.Topics, s.Coordinator.Brokers, s.Duration); err != nil {
			return nil, err
		}
		if err = d.checkRollingSet(s); err != nil {
			return nil, err
		}
	}
	if n := f.get("swarm"); n != nil && !isNull(n) {
		if s.Swarm, err = d.swarm(n, s.Duration); err != nil {
			return nil, err
		}
	}
	s.Timing = TimingRealistic
	if n := f.get("timing"); n != nil {
		v, err := d.str(n, "timing")
		if err != nil {
			return nil, err
		}
		switch Timing(v) {
		case TimingRealistic, TimingExact:
			s.Timing = Timing(v)
		default:
			return nil, d.errf(n, "timing", "must be realistic or exact, not %q", v)
		}
	}
	s.pollDefaulted = d.pollDefaulted
	s.SetTiming(s.Timing)
	if n := f.get("measure"); n != nil && !isNull(n) {
		mf, err := d.mapping(n, "measure", measureSchema)
		if err != nil {
			return nil, err
		}
		if m := mf.get("from"); m != nil {
			if s.MeasureFrom, err = d.duration(m, "measure.from"); err != nil {
				return nil, err
			}
			if s.MeasureFrom >= s.Duration {
				return nil, d.errf(m, "measure.from", "%v is not before the end of the run (duration %v)", s.MeasureFrom, s.Duration)
			}
		}
	}
	if n := f.get("oracles"); n != nil && !isNull(n) {
		if s.Oracles, err = d.oracles(n); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (d *decoder) profile(n *yaml.Node, path string) (profileInfo, error) {
	name, err := d.str(n, path)
	if err != nil {
		return profileInfo{}, err
	}
	p, ok := lookupProfile(name)
	if ok {
		return p, nil
	}
	// A Kafka version as users type it (kafka-3.6.1, kafka-3.5, 3.6.1):
	// the era profile that models it, with a note saying which.
	era, note, verr := ResolveVersion(name)
	if errors.Is(verr, errNotVersion) {
		return profileInfo{}, d.errf(n, path, "unknown profile %q; valid profiles: %s", name, strings.Join(ProfileNames(), ", "))
	}
	if verr != nil {
		return profileInfo{}, d.errf(n, path, "unknown profile %q: %v", name, verr)
	}
	d.notes = append(d.notes, fmt.Sprintf("%s:%d: %s: %s", d.source, n.Line, path, note))
	p, _ = lookupProfile(era)
	p.patch = versionPatch(name)
	return p, nil
}

func (d *decoder) coordinator(n *yaml.Node) (Coordinator, error) {
	const path = "coordinator"
	p, _ := lookupProfile(DefaultProfile)
	if n == nil || isNull(n) {
		return coordinatorDefaults(p), nil
	}
	f, err := d.mapping(n, path, coordinatorSchema)
	if err != nil {
		return Coordinator{}, err
	}
	if v := f.get("profile"); v != nil {
		if p, err = d.profile(v, sub(path, "profile")); err != nil {
			return Coordinator{}, err
		}
	}
	c := coordinatorDefaults(p)
	if v := f.get("brokers"); v != nil {
		b, err := d.integer(v, sub(path, "brokers"), 1, MaxBrokers)
		if err != nil {
			return Coordinator{}, err
		}
		c.Brokers = int(b)
	}
	for _, m := range []struct {
		key string
		dst *time.Duration
	}{
		{"group.initial.rebalance.delay.ms", &c.InitialRebalanceDelay},
		{"group.min.session.timeout.ms", &c.MinSessionTimeout},
		{"group.max.session.timeout.ms", &c.MaxSessionTimeout},
	} {
		if v := f.get(m.key); v != nil {
			if *m.dst, err = d.millis(v, sub(path, m.key)); err != nil {
				return Coordinator{}, err
			}
		}
	}
	if v := f.get("group.max.size"); v != nil {
		sz, err := d.integer(v, sub(path, "group.max.size"), 1, math.MaxInt32)
		if err != nil {
			return Coordinator{}, err
		}
		c.MaxSize = int(sz)
	}
	if v := f.get("group.coordinator.append.linger.ms"); v != nil {
		const key = "group.coordinator.append.linger.ms"
		if !p.atLeast(4, 0) {
			return Coordinator{}, d.errf(v, sub(path, key), "not a property of profile %s: the linger is the Java group coordinator's, which serves classic groups from kafka-4.0 (the Scala coordinator appends each write on its own)", p.name)
		}
		lo := int64(0)
		if p.atLeast(4, 2) {
			lo = -1 // adaptive (KAFKA-19826, 4.2)
		}
		ms, err := d.integer(v, sub(path, key), lo, math.MaxInt32)
		if err != nil {
			return Coordinator{}, err
		}
		setAppendLinger(p, &c, ms)
	}
	if v := f.get("metadata.mode"); v != nil {
		mode, err := d.str(v, sub(path, "metadata.mode"))
		if err != nil {
			return Coordinator{}, err
		}
		if mode != MetadataKRaft && mode != MetadataZooKeeper {
			return Coordinator{}, d.errf(v, sub(path, "metadata.mode"), "unknown metadata mode %q (kraft or zookeeper)", mode)
		}
		if why := metadataModeErr(p, mode); why != "" {
			return Coordinator{}, d.errf(v, sub(path, "metadata.mode"), "%s", why)
		}
		setMetadataMode(p, &c, mode)
	}
	for _, m := range []struct {
		key, mode string
		dst       *time.Duration
	}{
		{"zookeeper.session.timeout.ms", MetadataZooKeeper, &c.ZkSessionTimeout},
		{"broker.session.timeout.ms", MetadataKRaft, &c.BrokerSessionTimeout},
	} {
		v := f.get(m.key)
		if v == nil {
			continue
		}
		if c.MetadataMode != m.mode {
			return Coordinator{}, d.errf(v, sub(path, m.key), "not a property of metadata.mode %s (profile %s): it applies in %s mode", c.MetadataMode, p.name, m.mode)
		}
		if *m.dst, err = d.millis(v, sub(path, m.key)); err != nil {
			return Coordinator{}, err
		}
		if *m.dst <= 0 {
			return Coordinator{}, d.errf(v, sub(path, m.key), "must be at least 1")
		}
		c.FailoverDelay = *m.dst
	}
	if v := f.get("broker.heartbeat.interval.ms"); v != nil {
		if err := d.brokerHeartbeatInterval(v, path, p.name, &c); err != nil {
			return Coordinator{}, err
		}
	}
	if v := f.get("failover.delay"); v != nil {
		if c.FailoverDelay, err = d.duration(v, sub(path, "failover.delay")); err != nil {
			return Coordinator{}, err
		}
		c.FailoverDelaySet = true
	}
	if v := f.get("load.time"); v != nil {
		if c.LoadTime, err = d.duration(v, sub(path, "load.time")); err != nil {
			return Coordinator{}, err
		}
	}
	if v := f.get("append.latency"); v != nil {
		if c.AppendLatency, err = d.dist(v, sub(path, "append.latency")); err != nil {
			return Coordinator{}, err
		}
		c.AppendLatencySet = true
	}
	if v := f.get("request.time"); v != nil {
		if c.RequestTime, err = d.dist(v, sub(path, "request.time")); err != nil {
			return Coordinator{}, err
		}
	}
	if v := f.get("append.bandwidth"); v != nil {
		if c.AppendBandwidth, err = d.bandwidth(v, sub(path, "append.bandwidth")); err != nil {
			return Coordinator{}, err
		}
	}
	if v := f.get("offsets.commit.timeout.ms"); v != nil {
		if c.OffsetsCommitTimeout, err = d.millis(v, sub(path, "offsets.commit.timeout.ms")); err != nil {
			return Coordinator{}, err
		}
	}
	if v := f.get("append.error.probability"); v != nil {
		if c.AppendErrorProbability, err = d.probability(v, sub(path, "append.error.probability")); err != nil {
			return Coordinator{}, err
		}
	}
	if v := f.get("append.error"); v != nil {
		name, err := d.str(v, sub(path, "append.error"))
		if err != nil {
			return Coordinator{}, err
		}
		if !slices.Contains(AppendErrors, name) {
			return Coordinator{}, d.errf(v, sub(path, "append.error"), "unknown append error %q (one of %s)", name, strings.Join(AppendErrors, ", "))
		}
		c.AppendError = name
	}
	if c.AppendErrorProbability > 0 && c.AppendError == "" {
		return Coordinator{}, d.errf(f.get("append.error.probability"), sub(path, "append.error.probability"),
			"append.error.probability needs append.error (one of %s)", strings.Join(AppendErrors, ", "))
	}
	if v := f.get("group.min.session.timeout.ms"); v != nil && c.MinSessionTimeout == 0 {
		// GroupCoordinatorConfig defines it without a validator, so Kafka
		// takes 0; every session.timeout.ms is at least 1 here, so 1 admits
		// the same sessions (and the coordinator model needs it positive).
		return Coordinator{}, d.errf(v, sub(path, "group.min.session.timeout.ms"),
			"must be at least 1 (0 admits no more sessions than 1: session.timeout.ms is at least 1)")
	}
	if err := d.consumerCoordinator(f, path, p, &c); err != nil {
		return Coordinator{}, err
	}
	if c.MinSessionTimeout > c.MaxSessionTimeout {
		key := "group.min.session.timeout.ms"
		if f.get(key) == nil {
			key = "group.max.session.timeout.ms"
		}
		return Coordinator{}, d.errf(f.get(key), sub(path, key),
			"group.min.session.timeout.ms (%d) must not be greater than group.max.session.timeout.ms (%d)",
			c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds())
	}
	return c, nil
}

func (d *decoder) network(n *yaml.Node) (Network, error) {
	const path = "network"
	nw := Network{Latency: Dist{Kind: DistConstant, Value: time.Millisecond}}
	if n == nil || isNull(n) {
		return nw, nil
	}
	f, err := d.mapping(n, path, networkSchema)
	if err != nil {
		return Network{}, err
	}
	if v := f.get("latency"); v != nil {
		if nw.Latency, err = d.dist(v, sub(path, "latency")); err != nil {
			return Network{}, err
		}
	}
	if v := f.get("loss"); v != nil {
		if v.Kind == yaml.MappingNode {
			lf, err := d.mapping(v, sub(path, "loss"), lossSchema)
			if err != nil {
				return Network{}, err
			}
			nw.LossDirectional = true
			if x := lf.get("to-broker"); x != nil {
				if nw.LossToBroker, err = d.probability(x, sub(path, "loss.to-broker")); err != nil {
					return Network{}, err
				}
			}
			if x := lf.get("from-broker"); x != nil {
				if nw.Loss, err = d.probability(x, sub(path, "loss.from-broker")); err != nil {
					return Network{}, err
				}
			}
		} else if nw.Loss, err = d.probability(v, sub(path, "loss")); err != nil {
			return Network{}, err
		}
	}
	if v := f.get("bandwidth"); v != nil {
		if nw.BandwidthBytesPerSecond, err = d.bandwidth(v, sub(path, "bandwidth")); err != nil {
			return Network{}, err
		}
	}
	if v := f.get("retransmit"); v != nil {
		return Network{}, d.errf(v, sub(path, "retransmit"),
			"removed: the network is TCP now, so a lost packet is always retransmitted after the RTO "+
				"(200 ms minimum, doubling); delete this key (docs/INTERFACE.md, \"Network\")")
	}
	return nw, nil
}

func (d *decoder) topics(n *yaml.Node) ([]Topic, error) {
	const path = "topics"
	elems, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, d.errf(n, path, "at least one topic is needed")
	}
	out := make([]Topic, 0, len(elems))
	total := 0
	for i, e := range elems {
		p := index(path, i)
		f, err := d.mapping(e, p, topicSchema)
		if err != nil {
			return nil, err
		}
		var t Topic
		v := f.get("name")
		if v == nil {
			return nil, d.errf(f.node, sub(p, "name"), "missing required key")
		}
		if t.Name, err = d.str(v, sub(p, "name")); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o Topic) bool { return o.Name == t.Name }) {
			return nil, d.errf(v, sub(p, "name"), "duplicate topic %q", t.Name)
		}
		v = f.get("partitions")
		if v == nil {
			return nil, d.errf(f.node, sub(p, "partitions"), "missing required key")
		}
		np, err := d.integer(v, sub(p, "partitions"), 1, MaxPartitions)
		if err != nil {
			return nil, err
		}
		t.Partitions = int(np)
		total += t.Partitions
		if total > MaxTotalPartitions {
			return nil, d.errf(v, sub(p, "partitions"), "the topics have %d partitions in total so far, more than the limit of %d for all topics together", total, MaxTotalPartitions)
		}
		out = append(out, t)
	}
	return out, nil
}

func (d *decoder) groups(n *yaml.Node, topics []Topic) ([]Group, error) {
	const path = "groups"
	elems, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, d.errf(n, path, "at least one group is needed")
	}
	out := make([]Group, 0, len(elems))
	for i, e := range elems {
		g, err := d.group(e, index(path, i), topics)
		if err != nil {
			return nil, err
		}
		d.pollDefaulted = append(d.pollDefaulted, !d.pollWritten)
		// An entry with the id of an earlier one is the group's next
		// cohort: its members are numbered on from the earlier cohorts'.
		for _, o := range out {
			if o.ID == g.ID {
				g.Cohort = o.Cohort + 1
				g.FirstIndex = o.FirstIndex + o.Members
			}
		}
		if total := g.FirstIndex + g.Members; total > MaxMembers {
			return nil, d.errf(e, sub(index(path, i), "members"),
				"group %q has %d members over its %d cohorts, more than %d", g.ID, total, g.Cohort+1, MaxMembers)
		}
		// The configs are the group's (one per group id): cohorts share them.
		for j, o := range out {
			if o.ID == g.ID && o.Configs.Set() && g.Configs.Set() && o.Configs != g.Configs {
				return nil, d.errf(e, sub(index(path, i), "configs"), "group %q already has other configs (%s); a group has one set of group configs", g.ID, index(path, j)+".configs")
			}
		}
		out = append(out, g)
	}
	for i := range out {
		for j := range out {
			if out[j].ID == out[i].ID && out[j].Configs.Set() {
				out[i].Configs = out[j].Configs
			}
		}
	}
	return out, nil
}

func (d *decoder) group(n *yaml.Node, path string, topics []Topic) (Group, error) {
	f, err := d.mapping(n, path, groupSchema)
	if err != nil {
		return Group{}, err
	}
	var g Group
	v := f.get("id")
	if v == nil {
		return Group{}, d.errf(f.node, sub(path, "id"), "missing required key")
	}
	if g.ID, err = d.str(v, sub(path, "id")); err != nil {
		return Group{}, err
	}
	if g.ID == CoordinatorName {
		return Group{}, d.errf(v, sub(path, "id"), "%q is reserved for the group coordinator", CoordinatorName)
	}
	v = f.get("members")
	if v == nil {
		return Group{}, d.errf(f.node, sub(path, "members"), "missing required key")
	}
	m, err := d.integer(v, sub(path, "members"), 1, MaxMembers)
	if err != nil {
		return Group{}, err
	}
	g.Members = int(m)
	v = f.get("subscribe")
	if v == nil {
		return Group{}, d.errf(f.node, sub(path, "subscribe"), "missing required key")
	}
	if g.Subscribe, err = d.stringList(v, sub(path, "subscribe")); err != nil {
		return Group{}, err
	}
	for i, t := range g.Subscribe {
		if !slices.ContainsFunc(topics, func(o Topic) bool { return o.Name == t }) {
			return Group{}, d.errf(v, index(sub(path, "subscribe"), i), "unknown topic %q", t)
		}
		if slices.Index(g.Subscribe, t) != i {
			return Group{}, d.errf(v, index(sub(path, "subscribe"), i), "topic %q listed twice", t)
		}
	}
	if g.Client, err = d.client(f.get("client"), sub(path, "client")); err != nil {
		return Group{}, err
	}
	if g.Workload, err = d.workload(f.get("workload"), sub(path, "workload")); err != nil {
		return Group{}, err
	}
	if v := f.get("configs"); v != nil && !isNull(v) {
		if g.Configs, err = d.groupConfigs(v, sub(path, "configs")); err != nil {
			return Group{}, err
		}
	}
	if v := f.get("start"); v != nil && !isNull(v) {
		sf, err := d.mapping(v, sub(path, "start"), startSchema)
		if err != nil {
			return Group{}, err
		}
		if x := sf.get("at"); x != nil {
			if g.Start.At, err = d.duration(x, sub(path, "start.at")); err != nil {
				return Group{}, err
			}
		}
		if x := sf.get("stagger"); x != nil {
			if g.Start.Stagger, err = d.duration(x, sub(path, "start.stagger")); err != nil {
				return Group{}, err
			}
			if last := MaxTime - g.Start.At; g.Members > 1 && g.Start.Stagger > last/time.Duration(g.Members-1) {
				return Group{}, d.errf(x, sub(path, "start.stagger"),
					"the last of %d members would start after %v (start.at + (members-1) × stagger), the simulator's limit on any time", g.Members, MaxTime)
			}
		}
	}
	return g, nil
}

func (d *decoder) client(n *yaml.Node, path string) (Client, error) {
	p, _ := lookupProfile(DefaultProfile)
	if n == nil || isNull(n) {
		return clientDefaults(p), nil
	}
	f, err := d.mapping(n, path, clientSchema)
	if err != nil {
		return Client{}, err
	}
	if v := f.get("profile"); v != nil {
		if p, err = d.profile(v, sub(path, "profile")); err != nil {
			return Client{}, err
		}
	}
	c := clientDefaults(p)
	if err := d.groupProtocol(f, path, p, &c); err != nil {
		return Client{}, err
	}
	for _, m := range []struct {
		key string
		dst *time.Duration
	}{
		{"session.timeout.ms", &c.SessionTimeout},
		{"heartbeat.interval.ms", &c.HeartbeatInterval},
		{"max.poll.interval.ms", &c.MaxPollInterval},
		{"request.timeout.ms", &c.RequestTimeout},
		{"reconnect.backoff.ms", &c.ReconnectBackoff},
		{"reconnect.backoff.max.ms", &c.ReconnectBackoffMax},
		{"socket.connection.setup.timeout.ms", &c.SocketSetupTimeout},
		{"socket.connection.setup.timeout.max.ms", &c.SocketSetupTimeoutMax},
		{"metadata.max.age.ms", &c.MetadataMaxAge},
	} {
		if v := f.get(m.key); v != nil {
			if *m.dst, err = d.millis(v, sub(path, m.key)); err != nil {
				return Client{}, err
			}
		}
	}
	for _, m := range []struct {
		key string
		dst *time.Duration
	}{
		{"retry.backoff.ms", &c.RetryBackoff},
		{"retry.backoff.max.ms", &c.RetryBackoffMax},
	} {
		if v := f.get(m.key); v != nil {
			if *m.dst, err = d.millisLong(v, sub(path, m.key)); err != nil {
				return Client{}, err
			}
			if *m.dst == 0 {
				// Deviation: ConsumerConfig defines both atLeast(0L); a zero
				// backoff makes a retry that fails at once (a loading
				// coordinator, a lost FindCoordinator) loop without time
				// passing, which real Kafka spins a CPU on and the model
				// does not simulate (client.Config.Validate).
				return Client{}, d.errf(v, sub(path, m.key),
					"must be at least 1 in the simulator (Kafka accepts 0, atLeast(0L), but then retries in a busy loop that a discrete-event simulation cannot advance through)")
			}
		}
	}
	if v := f.get("max.poll.interval.ms"); v != nil {
		if !p.atLeast(0, 11) {
			// The 0.10.0 consumer has no such property (KIP-62, 0.10.1).
			return Client{}, d.errf(v, sub(path, "max.poll.interval.ms"),
				"not a property of profile %s (KIP-62 added it in Kafka 0.10.1)", p.name)
		}
		if c.MaxPollInterval == 0 {
			return Client{}, d.errf(v, sub(path, "max.poll.interval.ms"), "must be at least 1")
		}
	}
	if c.SessionTimeout == 0 {
		return Client{}, d.errf(f.line("session.timeout.ms"), sub(path, "session.timeout.ms"), "must be at least 1")
	}
	if c.HeartbeatInterval == 0 {
		return Client{}, d.errf(f.line("heartbeat.interval.ms"), sub(path, "heartbeat.interval.ms"), "must be at least 1")
	}
	if c.RequestTimeout == 0 {
		return Client{}, d.errf(f.line("request.timeout.ms"), sub(path, "request.timeout.ms"), "must be at least 1")
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		// GroupRebalanceConfig / Heartbeat constructor: "Heartbeat must be
		// set lower than the session timeout".
		key := "session.timeout.ms"
		if f.get(key) == nil {
			key = "heartbeat.interval.ms"
		}
		return Client{}, d.errf(f.get(key), sub(path, key),
			"heartbeat.interval.ms (%d) must be lower than session.timeout.ms (%d)",
			c.HeartbeatInterval.Milliseconds(), c.SessionTimeout.Milliseconds())
	}
	if !p.atLeast(2, 0) && c.RequestTimeout <= c.SessionTimeout {
		// KafkaConsumer constructor before 2.0 (KIP-266 removed the check):
		// ConfigException "request.timeout.ms should be greater than
		// session.timeout.ms and fetch.max.wait.ms".
		key := "request.timeout.ms"
		if f.get(key) == nil {
			key = "session.timeout.ms"
		}
		return Client{}, d.errf(f.get(key), sub(path, key),
			"request.timeout.ms (%d) must be greater than session.timeout.ms (%d) in profile %s",
			c.RequestTimeout.Milliseconds(), c.SessionTimeout.Milliseconds(), p.name)
	}
	for _, k := range []string{"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms"} {
		if v := f.get(k); v != nil && !p.atLeast(2, 7) {
			return Client{}, d.errf(v, sub(path, k), "not a property of profile %s (KIP-601 added it in Kafka 2.7)", p.name)
		}
	}
	if v := f.get("reconnect.backoff.ms"); v != nil && c.ReconnectBackoff == 0 {
		return Client{}, d.errf(v, sub(path, "reconnect.backoff.ms"), "must be at least 1")
	}
	if v := f.get("socket.connection.setup.timeout.ms"); v != nil && c.SocketSetupTimeout == 0 {
		return Client{}, d.errf(v, sub(path, "socket.connection.setup.timeout.ms"), "must be at least 1")
	}
	if c.ReconnectBackoffMax > 0 && c.ReconnectBackoff > c.ReconnectBackoffMax {
		return Client{}, d.errf(f.get("reconnect.backoff.max.ms"), sub(path, "reconnect.backoff.max.ms"),
			"reconnect.backoff.max.ms (%d) must not be lower than reconnect.backoff.ms (%d)",
			c.ReconnectBackoffMax.Milliseconds(), c.ReconnectBackoff.Milliseconds())
	}
	if c.SocketSetupTimeoutMax > 0 && c.SocketSetupTimeout > c.SocketSetupTimeoutMax {
		return Client{}, d.errf(f.get("socket.connection.setup.timeout.max.ms"), sub(path, "socket.connection.setup.timeout.max.ms"),
			"socket.connection.setup.timeout.max.ms (%d) must not be lower than socket.connection.setup.timeout.ms (%d)",
			c.SocketSetupTimeoutMax.Milliseconds(), c.SocketSetupTimeout.Milliseconds())
	}
	if c.RetryBackoff > c.RetryBackoffMax && f.get("retry.backoff.max.ms") != nil {
		return Client{}, d.errf(f.get("retry.backoff.max.ms"), sub(path, "retry.backoff.max.ms"),
			"retry.backoff.max.ms (%d) must not be lower than retry.backoff.ms (%d)",
			c.RetryBackoffMax.Milliseconds(), c.RetryBackoff.Milliseconds())
	}
	if v := f.get("partition.assignment.strategy"); v != nil {
		kp := sub(path, "partition.assignment.strategy")
		if c.Assignors, err = d.stringList(v, kp); err != nil {
			return Client{}, err
		}
		for i, a := range c.Assignors {
			j := slices.IndexFunc(assignorNames, func(x assignorInfo) bool { return x.name == a })
			if j < 0 {
				return Client{}, d.errf(v, kp, "unknown assignor %q; valid: range, roundrobin, sticky, cooperative-sticky", a)
			}
			if an := assignorNames[j]; !p.atLeast(an.major, an.minor) {
				return Client{}, d.errf(v, kp, "assignor %q is not available in profile %s (%s)", a, p.name, an.why)
			}
			if slices.Index(c.Assignors, a) != i {
				return Client{}, d.errf(v, kp, "assignor %q listed twice", a)
			}
		}
	}
	if v := f.get("group.instance.id"); v != nil {
		if c.StaticMembership, err = d.boolean(v, sub(path, "group.instance.id")); err != nil {
			return Client{}, err
		}
		if c.StaticMembership && !p.atLeast(2, 3) {
			return Client{}, d.errf(v, sub(path, "group.instance.id"),
				"static membership needs profile kafka-2.3 or later (KIP-345); profile is %s", p.name)
		}
	}
	if v := f.get("enable.auto.commit"); v != nil {
		if c.AutoCommit, err = d.boolean(v, sub(path, "enable.auto.commit")); err != nil {
			return Client{}, err
		}
	}
	if v := f.get("auto.commit.interval.ms"); v != nil {
		if c.AutoCommitInterval, err = d.millis(v, sub(path, "auto.commit.interval.ms")); err != nil {
			return Client{}, err
		}
		if c.AutoCommitInterval == 0 {
			return Client{}, d.errf(v, sub(path, "auto.commit.interval.ms"), "must be positive")
		}
	}
	return c, nil
}

func (d *decoder) workload(n *yaml.Node, path string) (Workload, error) {
	w := Workload{
		PollInterval: DefaultPollInterval,
		PollTimeout:  Dist{Kind: DistConstant, Value: 100 * time.Millisecond},
		AssignTime:   Dist{Kind: DistConstant},
		CallbackTime: Dist{Kind: DistConstant},
	}
	d.pollWritten = false
	if n == nil || isNull(n) {
		return w, nil
	}
	f, err := d.mapping(n, path, workloadSchema)
	if err != nil {
		return Workload{}, err
	}
	d.pollWritten = f.get("poll.interval") != nil
	for _, m := range []struct {
		key string
		dst *Dist
	}{
		{"poll.interval", &w.PollInterval},
		{"poll.timeout", &w.PollTimeout},
		{"assign.time", &w.AssignTime},
		{"callback.time", &w.CallbackTime},
	} {
		if v := f.get(m.key); v != nil {
			if *m.dst, err = d.dist(v, sub(path, m.key)); err != nil {
				return Workload{}, err
			}
		}
	}
	w.AssignTimeSet = f.get("assign.time") != nil
	if v := f.get("wait.overshoot"); v != nil {
		if err := d.waitOvershoot(v, path, &w); err != nil {
			return Workload{}, err
		}
	}
	return w, nil
}

// bandwidthUnits are the accepted bandwidth suffixes and their bytes per
// second (decimal units, as network links are sold).
var bandwidthUnits = []struct {
	suffix string
	bytes  float64
}{
	{"Gbit/s", 1e9 / 8}, {"Mbit/s", 1e6 / 8}, {"Kbit/s", 1e3 / 8}, {"bit/s", 1.0 / 8},
	{"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}, {"B/s", 1},
}

// bandwidth decodes bytes per second: an integer, or a number with a unit
// ("1Gbit/s", "100MB/s").
func (d *decoder) bandwidth(n *yaml.Node, path string) (int64, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return 0, d.errf(n, path, "expected a bandwidth like \"1Gbit/s\", \"100MB/s\" or bytes per second, got %s", kindName(n))
	}
	if n.ShortTag() == "!!int" {
		return d.integer(n, path, 0, 1<<50)
	}
	v := strings.TrimSpace(n.Value)
	for _, u := range bandwidthUnits {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				break
			}
			b := x * u.bytes
			if b >= 1<<50 {
				return 0, d.errf(n, path, "%s is more than %d bytes per second", quote(n.Value), int64(1<<50))
			}
			if x > 0 && b < 1 {
				// Rounding it to 0 would mean unlimited.
				return 0, d.errf(n, path, "%s is less than one byte per second (8 bit/s), the smallest bandwidth; 0 means unlimited", quote(n.Value))
			}
			return int64(b), nil
		}
	}
	return 0, d.errf(n, path, "expected a bandwidth like \"1Gbit/s\", \"100MB/s\" or bytes per second, got %s", quote(n.Value))
}

// AppendErrors are the log errors an append may fail with
// (GroupMetadataManager.storeGroup's mapping, kafka-classic-protocol.md §12.7).
var AppendErrors = []string{
	"NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "UNKNOWN_TOPIC_OR_PARTITION",
	"NOT_LEADER_OR_FOLLOWER", "KAFKA_STORAGE_ERROR", "REQUEST_TIMED_OUT",
}
