package scenario

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// profileInfo is one accepted profile name and the Kafka release whose
// defaults and features it stands for. The coarse names stand for the last
// release of their line that the simulator models: kafka-2.x for 2.8,
// kafka-3.x for 3.7 (3.8 and 3.9 behave as 3.7 on every modelled path),
// kafka-4.x for 4.4.
//
// patch is the patch release a version string named (kafka-4.1.2: 2), -1
// for a profile name; only the consumer-group (KIP-848) coordinator
// reads it (consumerProfile): its fixes reached patch releases.
type profileInfo struct {
	profileRow
	patch int
}

// profileRow is one accepted name and its release.
type profileRow struct {
	name         string
	major, minor int
}

// profiles is sorted by name, which is also release order.
var profiles = []profileRow{
	{"kafka-0.10", 0, 10},
	{"kafka-2.3", 2, 3},
	{"kafka-2.3.0", 2, 3}, // broker only: KAFKA-8653 (a client profile kafka-2.3.0 is kafka-2.3)
	{"kafka-2.4", 2, 4},
	{"kafka-2.5", 2, 5},
	{"kafka-2.6", 2, 6},
	// Patch releases whose broker or client differs from the minor's
	// profile: 2.6.1 (broker KAFKA-10284/KAFKA-10134; its client has
	// KAFKA-10134 with the KAFKA-13214 side effect = client kafka-2.7),
	// 2.7.2 (client KAFKA-13214 fixed = client kafka-2.8; broker as 2.7),
	// 2.8.1 (broker KAFKA-12890 fixed; client as kafka-2.8).
	{"kafka-2.6.1", 2, 6},
	{"kafka-2.7", 2, 7},
	{"kafka-2.7.2", 2, 7},
	{"kafka-2.8", 2, 8},
	{"kafka-2.8.1", 2, 8},
	{"kafka-2.x", 2, 8},
	{"kafka-3.0", 3, 0},
	{"kafka-3.2", 3, 2},
	{"kafka-3.3", 3, 3}, // 3.3.0–3.3.1: client KAFKA-13891, broker KAFKA-14201
	// 3.3.2: the client's KAFKA-13891 reverted (client = kafka-3.2), the
	// broker has KAFKA-14009 (broker = kafka-3.4).
	{"kafka-3.3.2", 3, 3},
	{"kafka-3.4", 3, 4},
	{"kafka-3.6", 3, 6},
	{"kafka-3.7", 3, 7},
	{"kafka-3.8", 3, 8},
	{"kafka-3.9", 3, 9},
	{"kafka-3.x", 3, 7},
	{"kafka-4.0", 4, 0},
	{"kafka-4.1", 4, 1},
	{"kafka-4.2", 4, 2},
	{"kafka-4.3", 4, 3},
	{"kafka-4.4", 4, 4},
	{"kafka-4.x", 4, 4},
}

// DefaultProfile is the client and coordinator profile of a file that names none.
const DefaultProfile = "kafka-3.x"

// ProfileNames returns the client and coordinator profile names accepted in
// a scenario file, sorted (which is also release order).
func ProfileNames() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.name
	}
	return out
}

func lookupProfile(name string) (profileInfo, bool) {
	for _, p := range profiles {
		if p.name == name {
			return profileInfo{profileRow: p, patch: -1}, true
		}
	}
	return profileInfo{}, false
}

// ProfileAtLeast reports whether a profile name Parse accepted (a
// Client's or Coordinator's Profile) stands for Kafka major.minor or later;
// false for a name it does not know.
func ProfileAtLeast(name string, major, minor int) bool {
	p, ok := lookupProfile(name)
	return ok && p.atLeast(major, minor)
}

// atLeast reports whether the profile's release is major.minor or later.
func (p profileRow) atLeast(major, minor int) bool {
	return p.major > major || (p.major == major && p.minor >= minor)
}

// Assignor names accepted in partition.assignment.strategy, with the release
// that introduced each (ConsumerConfig / KIP-54 / KIP-429).
type assignorInfo struct {
	name         string
	major, minor int
	why          string
}

var assignorNames = []assignorInfo{
	{"range", 0, 9, ""},
	{"roundrobin", 0, 9, ""},
	{"sticky", 0, 11, "KIP-54, Kafka 0.11"},
	{"cooperative-sticky", 2, 4, "KIP-429, Kafka 2.4"},
}

// clientDefaults returns a Client holding the defaults of a client profile
// (ConsumerConfig of that release).
func clientDefaults(p profileInfo) Client {
	c := Client{
		Profile:           p.name,
		HeartbeatInterval: 3000 * time.Millisecond,
		RetryBackoff:      100 * time.Millisecond,
		// retry.backoff.max.ms exists from 3.7 (KIP-580); earlier profiles
		// carry the value but a faithful client model ignores it.
		RetryBackoffMax:    1000 * time.Millisecond,
		AutoCommit:         true,
		AutoCommitInterval: 5000 * time.Millisecond,
		StaticMembership:   false,
		// NetworkClient (CommonClientConfigs): 50 ms / 1 s reconnect
		// backoff, 10 s / 30 s connection setup timeout (KIP-601, 2.7;
		// the max was 127 s in 2.7.0). 0 where the era has no such property.
		ReconnectBackoff:    50 * time.Millisecond,
		ReconnectBackoffMax: 1000 * time.Millisecond,
		// metadata.max.age.ms (CommonClientConfigs), 5 minutes in every era.
		MetadataMaxAge: 300000 * time.Millisecond,
	}
	if p.atLeast(2, 7) {
		c.SocketSetupTimeout = 10000 * time.Millisecond
		c.SocketSetupTimeoutMax = 30000 * time.Millisecond
		if p.major == 2 && p.minor == 7 {
			// 127 s through 2.7.2 (CommonClientConfigs
			// .DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS @2.7.0 …
			// @2.7.2), so kafka-2.7.2 too.
			c.SocketSetupTimeoutMax = 127000 * time.Millisecond
		}
	}
	switch {
	case !p.atLeast(2, 0):
		// 0.10.0: session 30 s, request.timeout.ms 40 s, no
		// max.poll.interval.ms (KIP-62 came in 0.10.1): 0 = not applicable.
		c.SessionTimeout = 30000 * time.Millisecond
		c.RequestTimeout = 40000 * time.Millisecond
		c.MaxPollInterval = 0
		c.Assignors = []string{"range"}
	case !p.atLeast(3, 0):
		c.SessionTimeout = 10000 * time.Millisecond
		c.RequestTimeout = 30000 * time.Millisecond
		c.MaxPollInterval = 300000 * time.Millisecond
		c.Assignors = []string{"range"}
	default:
		// KIP-735 (3.0): session.timeout.ms 45 s; 3.0 default strategy
		// list [range, cooperative-sticky] (KIP-726's first step).
		c.SessionTimeout = 45000 * time.Millisecond
		c.RequestTimeout = 30000 * time.Millisecond
		c.MaxPollInterval = 300000 * time.Millisecond
		c.Assignors = []string{"range", "cooperative-sticky"}
	}
	return c
}

// coordinatorDefaults returns the broker defaults of a coordinator profile
// (KafkaConfig / GroupCoordinatorConfig of that release).
func coordinatorDefaults(p profileInfo) Coordinator {
	c := Coordinator{
		Brokers:               3,
		Profile:               p.name,
		InitialRebalanceDelay: 3000 * time.Millisecond,
		MinSessionTimeout:     6000 * time.Millisecond,
		MaxSessionTimeout:     1800000 * time.Millisecond,
		MaxSize:               math.MaxInt32,
		LoadTime:              0,
		AppendLatency:         Dist{Kind: DistConstant},
		RequestTime:           Dist{Kind: DistConstant},
		OffsetsCommitTimeout:  5000 * time.Millisecond,
	}
	if !p.atLeast(0, 11) {
		// group.initial.rebalance.delay.ms arrived in 0.11 (KIP-134): a 0.10
		// broker completes the first join without waiting.
		c.InitialRebalanceDelay = 0
	}
	if !p.atLeast(2, 3) {
		// group.max.session.timeout.ms was 300000 (KAFKA-3636, 0.10.0)
		// until KIP-345 raised it to 30 minutes in 2.3.
		c.MaxSessionTimeout = 300000 * time.Millisecond
	}
	setAppendLinger(p, &c, defaultAppendLingerMs(p))
	c.MetadataMode = defaultMetadataMode(p)
	setMetadataMode(p, &c, c.MetadataMode)
	consumerCoordinatorDefaults(p, &c)
	return c
}

// defaultAppendLingerMs is group.coordinator.append.linger.ms of the Java
// group coordinator, the classic groups' coordinator from 4.0
// (GroupCoordinatorConfig.GROUP_COORDINATOR_APPEND_LINGER_MS_DEFAULT: 10 at
// v7.9.0 = 3.9, where that coordinator is opt-in and not modelled; 5 at
// v8.0.0 and v8.1.0, apache/kafka PR #18274; -1, adaptive, at v8.2.0 and
// v8.3.0, KAFKA-19826). 0: the Scala coordinator, no linger.
func defaultAppendLingerMs(p profileInfo) int64 {
	switch {
	case !p.atLeast(4, 0):
		return 0
	case !p.atLeast(4, 2):
		return 5
	}
	return -1
}

// setAppendLinger sets group.coordinator.append.linger.ms (-1: adaptive,
// run as 0: the model has no coordinator event queue for the flush event
// to wait behind).
func setAppendLinger(p profileInfo, c *Coordinator, ms int64) {
	c.AppendLingerAdaptive = ms < 0
	c.AppendLinger = time.Duration(max(ms, 0)) * time.Millisecond
}

// Metadata modes (Coordinator.MetadataMode, scenario key metadata.mode).
const (
	MetadataKRaft     = "kraft"
	MetadataZooKeeper = "zookeeper"
)

// defaultMetadataMode is the metadata mode a coordinator profile assumes:
// ZooKeeper up to 3.2 (KRaft was early access in 2.8 and not for
// production before 3.3), KRaft from 3.3 (KIP-833 marked it
// production-ready in 3.3; 3.3–3.9 clusters run either, and a scenario says
// metadata.mode: zookeeper for one that still runs ZooKeeper) and the only
// mode from 4.0 (KIP-500: ZooKeeper removed).
func defaultMetadataMode(p profileInfo) string {
	if p.atLeast(3, 3) {
		return MetadataKRaft
	}
	return MetadataZooKeeper
}

// metadataModeErr says why a profile cannot run in the mode ("" = it can):
// KRaft arrived in 2.8 (KIP-500, early access; broker.session.timeout.ms,
// KafkaConfig.scala 2.8.0), ZooKeeper mode is gone in 4.0.
func metadataModeErr(p profileInfo, mode string) string {
	switch {
	case mode == MetadataKRaft && !p.atLeast(2, 8):
		return fmt.Sprintf("profile %s has no KRaft mode (KIP-500 arrived in Kafka 2.8)", p.name)
	case mode == MetadataZooKeeper && p.atLeast(4, 0):
		return fmt.Sprintf("profile %s has no ZooKeeper mode (Kafka 4.0 removed it; KRaft only)", p.name)
	}
	return ""
}

// setMetadataMode sets the mode's session timeout to its default and makes
// it the failover delay: how long the controller takes to notice a dead
// broker (KafkaConfig.scala: ZkSessionTimeoutMs = 6000 @2.4.0, 18000 @2.5.0
// (KIP-537); BrokerSessionTimeoutMs = 9000 @2.8.0 … @3.9.0,
// KRaftConfigs v8.0.0), and in KRaft mode broker.heartbeat.interval.ms
// (BrokerHeartbeatIntervalMs = 2000, KafkaConfig.scala @2.8.2;
// BROKER_HEARTBEAT_INTERVAL_MS_DEFAULT, KRaftConfigs @3.9.0-rc3).
func setMetadataMode(p profileInfo, c *Coordinator, mode string) {
	c.MetadataMode = mode
	c.ZkSessionTimeout, c.BrokerSessionTimeout, c.BrokerHeartbeatInterval = 0, 0, 0
	if mode == MetadataKRaft {
		c.BrokerSessionTimeout = 9000 * time.Millisecond
		c.BrokerHeartbeatInterval = 2000 * time.Millisecond
		c.FailoverDelay = c.BrokerSessionTimeout
		return
	}
	c.ZkSessionTimeout = 18000 * time.Millisecond
	if !p.atLeast(2, 5) {
		c.ZkSessionTimeout = 6000 * time.Millisecond
	}
	c.FailoverDelay = c.ZkSessionTimeout
}

// versionEras maps the Kafka releases users type to the era profile that
// models them: a release from First to Last (major.minor, inclusive) is
// simulated by Profile, the latest modelled era at or before it. Releases
// between rows (0.10.1 to 2.2: KIP-62's heartbeat thread without the
// KIP-345 era's join protocol) have no era and are an error. Adding an era
// is adding a row (and shortening the row before it).
var versionEras = []struct {
	Profile     string
	First, Last [2]int
}{
	{"kafka-0.10", [2]int{0, 10}, [2]int{0, 10}},
	{"kafka-2.3", [2]int{2, 3}, [2]int{2, 3}},
	{"kafka-2.4", [2]int{2, 4}, [2]int{2, 4}},
	// 2.5: KAFKA-8421 (client), KAFKA-9801 (broker, commit 146811ab296).
	{"kafka-2.5", [2]int{2, 5}, [2]int{2, 5}},
	{"kafka-2.6", [2]int{2, 6}, [2]int{2, 6}},
	{"kafka-2.7", [2]int{2, 7}, [2]int{2, 7}},
	{"kafka-2.8", [2]int{2, 8}, [2]int{2, 8}},
	{"kafka-3.0", [2]int{3, 0}, [2]int{3, 1}},
	{"kafka-3.2", [2]int{3, 2}, [2]int{3, 2}},
	// 3.3.0–3.3.1: KAFKA-13891 (client), KAFKA-14201 (broker); 3.3.2 is a
	// patch era (patchEras).
	{"kafka-3.3", [2]int{3, 3}, [2]int{3, 3}},
	// 3.4: KAFKA-14009 and KAFKA-14201 (broker), KIP-792 (client).
	{"kafka-3.4", [2]int{3, 4}, [2]int{3, 4}},
	// 3.5 and 3.6 clients are the same model (KAFKA-12639 came in 3.5).
	{"kafka-3.6", [2]int{3, 5}, [2]int{3, 6}},
	{"kafka-3.7", [2]int{3, 7}, [2]int{3, 7}},
	{"kafka-3.8", [2]int{3, 8}, [2]int{3, 8}},
	{"kafka-3.9", [2]int{3, 9}, [2]int{3, 9}},
	{"kafka-4.0", [2]int{4, 0}, [2]int{4, 0}},
	{"kafka-4.1", [2]int{4, 1}, [2]int{4, 1}},
	{"kafka-4.2", [2]int{4, 2}, [2]int{4, 2}},
	{"kafka-4.3", [2]int{4, 3}, [2]int{4, 3}},
	{"kafka-4.4", [2]int{4, 4}, [2]int{4, 4}},
}

// patchEras: patch releases that differ from the minor's first release
// (checked before versionEras).
var patchEras = []struct {
	Profile               string
	Minor                 [2]int
	FirstPatch, LastPatch int
}{
	{"kafka-2.6.1", [2]int{2, 6}, 1, 3},
	{"kafka-2.7.2", [2]int{2, 7}, 2, 2},
	{"kafka-2.8.1", [2]int{2, 8}, 1, 2},
	{"kafka-3.3.2", [2]int{3, 3}, 2, 2},
}

// errNotVersion: the name is not written as a Kafka version at all.
var errNotVersion = errors.New("not a Kafka version")

// ResolveVersion maps a Kafka version ("kafka-3.6.1", "kafka-3.5",
// "3.6.1", "kafka-2.8.0") to the era profile that models it, and a
// one-line note saying so. A version no era covers is an error listing
// the eras.
func ResolveVersion(v string) (profile, note string, err error) {
	num := strings.TrimPrefix(strings.TrimPrefix(v, "kafka-"), "kafka")
	parts := strings.Split(num, ".")
	var mm [2]int
	ok := len(parts) >= 2 && len(parts) <= 4
	for i := 0; ok && i < len(parts); i++ {
		n, e := strconv.Atoi(parts[i])
		ok = e == nil && n >= 0 && n < 1000
		if ok && i < 2 {
			mm[i] = n
		}
	}
	if !ok {
		return "", "", fmt.Errorf("%w: %q (want kafka-MAJOR.MINOR[.PATCH]); known eras: %s", errNotVersion, v, knownEras())
	}
	less := func(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }
	// Patch releases modelled apart from their minor (see profiles).
	if len(parts) >= 3 {
		patch, _ := strconv.Atoi(parts[2])
		for _, pe := range patchEras {
			if mm == pe.Minor && patch >= pe.FirstPatch && patch <= pe.LastPatch {
				return pe.Profile, fmt.Sprintf("Kafka %s is modelled by profile %s (%d.%d.%d–%d.%d.%d)", num, pe.Profile,
					mm[0], mm[1], pe.FirstPatch, mm[0], mm[1], pe.LastPatch), nil
			}
		}
	}
	for _, e := range versionEras {
		if !less(mm, e.First) && !less(e.Last, mm) {
			note := fmt.Sprintf("Kafka %s is modelled by profile %s (the era covering %s)", num, e.Profile, eraSpan(e.First, e.Last))
			if p, ok := lookupProfile(e.Profile); ok {
				p.patch = versionPatch(v)
				if c := consumerProfile(p); c != "" && c != e.Profile {
					note += fmt.Sprintf("; its consumer-group (KIP-848) coordinator by %s", c)
				}
			}
			return e.Profile, note, nil
		}
	}
	return "", "", fmt.Errorf("no profile models Kafka %s; known eras: %s", num, knownEras())
}

// versionPatch is the patch number of a version string (kafka-4.1.2: 2),
// -1 when it names none.
func versionPatch(v string) int {
	parts := strings.Split(strings.TrimPrefix(strings.TrimPrefix(v, "kafka-"), "kafka"), ".")
	if len(parts) < 3 {
		return -1
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		return -1
	}
	return n
}

func eraSpan(first, last [2]int) string {
	if first == last {
		return fmt.Sprintf("%d.%d.x", first[0], first[1])
	}
	return fmt.Sprintf("%d.%d–%d.%d", first[0], first[1], last[0], last[1])
}

func knownEras() string {
	var out []string
	for _, e := range versionEras {
		out = append(out, e.Profile+" ("+eraSpan(e.First, e.Last)+")")
	}
	return strings.Join(out, ", ")
}

// ProfileIndex is a profile name's place in release order (the order of
// ProfileNames), -1 for a name that is not a profile. Patch-release
// profiles sit between their minor and the next (kafka-2.6 < kafka-2.6.1 <
// kafka-2.7), so a bug's affected range is [from, fixed) in this order.
// A coarse name (kafka-3.x) takes the place of the first profile of the
// release it stands for (kafka-3.7; kafka-2.x: kafka-2.8, whose client is
// 2.8.1's and whose broker is the 2.8.0 the coarse name stands for).
func ProfileIndex(name string) int {
	p, ok := lookupProfile(name)
	if !ok {
		return -1
	}
	at := -1
	for i, q := range profiles {
		if q.name == name && !strings.HasSuffix(name, ".x") {
			return i
		}
		if at < 0 && q.major == p.major && q.minor == p.minor && !strings.HasSuffix(q.name, ".x") {
			at = i
		}
	}
	return at
}

// NewestProfile is the newest release a scenario can name.
var NewestProfile = profiles[len(profiles)-1].name
