package experiments

import (
	"time"

	"github.com/rebalsim/rebalsim/scenario"
)

// Config is the effective configuration of a run: what the simulator used,
// with every profile default filled in, under the Kafka property names of a
// scenario file (times in ms). `simrun run --json`, `simrun tune --json`,
// `simrun compare --json` and a sweep's effective_config.jsonl carry it, so
// a result says which session.timeout.ms it had even when the file left it
// to the profile.
type Config struct {
	Scenario    string         `json:"scenario"`
	DurationMs  int64          `json:"duration_ms"`
	Coordinator map[string]any `json:"coordinator"`
	Network     map[string]any `json:"network"`
	Groups      []GroupConfig  `json:"groups"`
	Faults      []string       `json:"faults"`
}

// GroupConfig is one groups: entry (a group or one cohort of one).
type GroupConfig struct {
	ID      string         `json:"id"`
	Members int            `json:"members"`
	Client  map[string]any `json:"client"`
	// Configs are the group's configs (scenario `configs:`), when set.
	Configs map[string]any `json:"configs,omitempty"`
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// EffectiveConfig describes a parsed scenario (defaults filled in).
func EffectiveConfig(sc *scenario.Scenario) Config {
	c := sc.Coordinator
	cfg := Config{
		Scenario:   sc.Name,
		DurationMs: ms(sc.Duration),
		Coordinator: map[string]any{
			"brokers":                          c.Brokers,
			"profile":                          c.Profile,
			"group.initial.rebalance.delay.ms": ms(c.InitialRebalanceDelay),
			"group.min.session.timeout.ms":     ms(c.MinSessionTimeout),
			"group.max.session.timeout.ms":     ms(c.MaxSessionTimeout),
			"group.max.size":                   c.MaxSize,
			"offsets.commit.timeout.ms":        ms(c.OffsetsCommitTimeout),
		},
		Network: map[string]any{
			"latency": scenario.FormatDist(sc.Network.Latency),
			"loss":    sc.Network.Loss,
		},
		Faults: []string{},
	}
	for _, g := range sc.Groups {
		cl := g.Client
		cfg.Groups = append(cfg.Groups, GroupConfig{ID: g.ID, Members: g.Members, Client: map[string]any{
			"profile":                       cl.Profile,
			"session.timeout.ms":            ms(cl.SessionTimeout),
			"heartbeat.interval.ms":         ms(cl.HeartbeatInterval),
			"max.poll.interval.ms":          ms(cl.MaxPollInterval),
			"retry.backoff.ms":              ms(cl.RetryBackoff),
			"retry.backoff.max.ms":          ms(cl.RetryBackoffMax),
			"request.timeout.ms":            ms(cl.RequestTimeout),
			"partition.assignment.strategy": cl.Assignors,
			"group.instance.id":             cl.StaticMembership,
			"enable.auto.commit":            cl.AutoCommit,
			"auto.commit.interval.ms":       ms(cl.AutoCommitInterval),
		}})
		if gc := g.Configs; gc.Set() {
			m := map[string]any{}
			if gc.SessionTimeout > 0 {
				m["consumer.session.timeout.ms"] = ms(gc.SessionTimeout)
			}
			if gc.HeartbeatInterval > 0 {
				m["consumer.heartbeat.interval.ms"] = ms(gc.HeartbeatInterval)
			}
			if gc.AssignmentIntervalSet {
				m["consumer.assignment.interval.ms"] = ms(gc.AssignmentInterval)
			}
			cfg.Groups[len(cfg.Groups)-1].Configs = m
		}
		if g.Consumer() {
			// group.protocol=consumer: the broker owns the session, the
			// heartbeat interval and the assignor (ConsumerConfig rejects
			// the classic keys).
			m := cfg.Groups[len(cfg.Groups)-1].Client
			delete(m, "session.timeout.ms")
			delete(m, "heartbeat.interval.ms")
			delete(m, "partition.assignment.strategy")
			m["group.protocol"] = cl.GroupProtocol
			m["group.remote.assignor"] = cl.RemoteAssignor
			cc := cfg.Coordinator
			cc["group.consumer.session.timeout.ms"] = ms(c.ConsumerSessionTimeout)
			cc["group.consumer.heartbeat.interval.ms"] = ms(c.ConsumerHeartbeatInterval)
			cc["group.consumer.max.size"] = c.ConsumerMaxSize
			cc["group.consumer.assignors"] = c.ConsumerAssignors
			if c.ConsumerProfile >= "kafka-4.3" { // KIP-1263 (4.3+); the names sort in release order
				cc["group.consumer.assignment.interval.ms"] = ms(c.ConsumerAssignmentInterval)
			}
		}
	}
	for _, f := range sc.Faults {
		cfg.Faults = append(cfg.Faults, scenario.FormatFault(f))
	}
	if migrates(sc) {
		// The online migration (KIP-848): the broker's consumer-group
		// settings and its migration policy matter even when every
		// member starts classic.
		cc := cfg.Coordinator
		cc["group.consumer.session.timeout.ms"] = ms(c.ConsumerSessionTimeout)
		cc["group.consumer.heartbeat.interval.ms"] = ms(c.ConsumerHeartbeatInterval)
		cc["group.consumer.max.size"] = c.ConsumerMaxSize
		cc["group.consumer.assignors"] = c.ConsumerAssignors
		cc["group.consumer.migration.policy"] = c.ConsumerMigrationPolicy
	}
	return cfg
}

// migrates reports whether a group of the scenario may run both protocols:
// cohorts of one group id with different group.protocol values, or a
// rolling restart that changes group.protocol.
func migrates(sc *scenario.Scenario) bool {
	for _, f := range sc.Faults {
		if f.Set != nil && f.Set.GroupProtocol != "" {
			return true
		}
	}
	for i := range sc.Groups {
		for j := range sc.Groups[:i] {
			if sc.Groups[i].ID == sc.Groups[j].ID && sc.Groups[i].Consumer() != sc.Groups[j].Consumer() {
				return true
			}
		}
	}
	return false
}
