package scenario

import "go.yaml.in/yaml/v3"

// brokerHeartbeatInterval reads coordinator.broker.heartbeat.interval.ms
// (KRaft mode only): how often each broker heartbeats to the controller
// (BrokerLifecycleManager; KRaftConfigs.BROKER_HEARTBEAT_INTERVAL_MS_CONFIG
// @3.9.0-rc3, default 2000). A broker heartbeating no more often than its
// session timeout would be fenced between two heartbeats, so the interval
// must be below broker.session.timeout.ms.
func (d *decoder) brokerHeartbeatInterval(v *yaml.Node, path, profile string, c *Coordinator) error {
	const key = "broker.heartbeat.interval.ms"
	if c.MetadataMode != MetadataKRaft {
		return d.errf(v, sub(path, key), "not a property of metadata.mode %s (profile %s): it applies in %s mode", c.MetadataMode, profile, MetadataKRaft)
	}
	ms, err := d.millis(v, sub(path, key))
	if err != nil {
		return err
	}
	if ms <= 0 {
		return d.errf(v, sub(path, key), "must be at least 1")
	}
	if ms >= c.BrokerSessionTimeout {
		return d.errf(v, sub(path, key), "must be less than broker.session.timeout.ms (%d): a broker would be fenced between two heartbeats", c.BrokerSessionTimeout.Milliseconds())
	}
	c.BrokerHeartbeatInterval = ms
	return nil
}
