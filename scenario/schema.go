package scenario

// keySchema is one key of a mapping in the scenario file. A key is a leaf
// (a scalar, a list of scalars or a distribution), a nested mapping
// (fields), or a sequence of mappings (items). The same tables drive the
// "unknown key" checks of the decoder and the path matching of overrides, so
// the two cannot drift apart.
type keySchema struct {
	name   string
	fields *mapSchema // nested mapping
	items  *mapSchema // sequence of mappings
}

// mapSchema lists the keys a mapping may hold, in the order of INTERFACE.md.
type mapSchema struct {
	keys []keySchema
}

func leaves(names ...string) []keySchema {
	out := make([]keySchema, len(names))
	for i, n := range names {
		out[i] = keySchema{name: n}
	}
	return out
}

// names returns the mapping's keys, for "known keys" messages.
func (m *mapSchema) names() []string {
	out := make([]string, len(m.keys))
	for i, k := range m.keys {
		out[i] = k.name
	}
	return out
}

func (m *mapSchema) has(name string) bool {
	_, ok := m.key(name)
	return ok
}

func (m *mapSchema) key(name string) (keySchema, bool) {
	for _, k := range m.keys {
		if k.name == name {
			return k, true
		}
	}
	return keySchema{}, false
}

// Fault action keys, in INTERFACE.md order.
var faultActions = []FaultKind{
	FaultCrash, FaultRestart, FaultPause, FaultSlowPoll, FaultPartition, FaultLoss, FaultHostDown,
	FaultLatency, FaultCoordinatorFailover, FaultLeave, FaultJoin, FaultRollingRestart,
	FaultFilter, FaultAddPartitions,
}

var (
	coordinatorSchema = &mapSchema{keys: leaves(
		"brokers", "profile", "group.initial.rebalance.delay.ms",
		"group.min.session.timeout.ms", "group.max.session.timeout.ms",
		"group.max.size", "load.time", "append.latency", "append.bandwidth",
		"offsets.commit.timeout.ms", "append.error.probability", "append.error", "request.time",
		"group.coordinator.append.linger.ms",
		"failover.delay", "metadata.mode", "zookeeper.session.timeout.ms", "broker.session.timeout.ms",
		"broker.heartbeat.interval.ms",
		"group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms",
		"group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
		"group.consumer.max.size", "group.consumer.assignors", "group.consumer.migration.policy",
		"consumer.assign.time", "consumer.first.target.time", "consumer.append.latency", "consumer.first.append.latency",
		"group.consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms")}
	networkSchema = &mapSchema{keys: leaves("latency", "loss", "bandwidth", "retransmit")}
	lossSchema    = &mapSchema{keys: leaves("to-broker", "from-broker")}
	topicSchema   = &mapSchema{keys: leaves("name", "partitions")}
	clientSchema  = &mapSchema{keys: leaves(
		"profile", "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms",
		"retry.backoff.ms", "retry.backoff.max.ms", "request.timeout.ms",
		"partition.assignment.strategy", "group.instance.id", "enable.auto.commit",
		"auto.commit.interval.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
		"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
		"group.protocol", "group.remote.assignor", "metadata.max.age.ms")}
	workloadSchema = &mapSchema{keys: leaves("poll.interval", "poll.timeout", "assign.time", "callback.time", "wait.overshoot")}
	startSchema    = &mapSchema{keys: leaves("at", "stagger")}
	groupSchema    = &mapSchema{keys: []keySchema{
		{name: "id"}, {name: "members"}, {name: "subscribe"},
		{name: "client", fields: clientSchema},
		{name: "workload", fields: workloadSchema},
		{name: "start", fields: startSchema},
		{name: "configs", fields: groupConfigSchema},
	}}
	// groupConfigSchema: the group's dynamic configs (GroupConfig,
	// kafka-configs --entity-type groups; consumer.go).
	groupConfigSchema = &mapSchema{keys: leaves("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms", "consumer.assignment.interval.ms")}
	faultSchema       = func() *mapSchema {
		ks := leaves("at")
		for _, a := range faultActions {
			k := keySchema{name: string(a)}
			if a == FaultFilter {
				k.fields = filterSchema
			}
			ks = append(ks, k)
		}
		ks = append(ks, leaves("for", "interval", "downtime", "direction", "partitions", "jitter")...)
		ks = append(ks, keySchema{name: "set", fields: rollingSetSchema})
		return &mapSchema{keys: ks}
	}()
	// rollingSetSchema: the client settings a rolling restart may change
	// (the online migration, KIP-848).
	rollingSetSchema = &mapSchema{keys: leaves("group.protocol", "group.remote.assignor")}
	filterSchema     = &mapSchema{keys: leaves("api", "member", "direction", "action", "delay")}
	swarmSchema      = &mapSchema{keys: leaves(
		"from", "until",
		"crash", "crash.downtime", "pause", "pause.for", "partition", "partition.for",
		"loss", "loss.probability", "loss.for", "latency", "latency.value", "latency.for",
		"coordinator-failover")}
	rootSchema = &mapSchema{keys: []keySchema{
		{name: "name"}, {name: "duration"}, {name: "seed"},
		{name: "coordinator", fields: coordinatorSchema},
		{name: "network", fields: networkSchema},
		{name: "topics", items: topicSchema},
		{name: "groups", items: groupSchema},
		{name: "faults", items: faultSchema},
		{name: "swarm", fields: swarmSchema},
		{name: "timing"},
		{name: "measure", fields: measureSchema},
		{name: "oracles", fields: oraclesSchema},
	}}
	measureSchema = &mapSchema{keys: leaves("from")}
)
