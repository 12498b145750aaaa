package harness

import (
	"strconv"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// fenceDelay is how long after broker b died the controller fences it and
// its coordinator role moves. In KRaft mode the controller fences a broker
// broker.session.timeout.ms after its LAST HEARTBEAT, not after its death
// (BrokerHeartbeatManager.nextCheckTimeNs = lastContactNs +
// sessionTimeoutNs, on which QuorumController
// .rescheduleMaybeFenceStaleBrokers schedules maybeFenceOneStaleBroker
// @3.9.0-rc3), and a broker heartbeats every broker.heartbeat.interval.ms,
// so a death lands at a uniform phase of that interval after the last
// heartbeat: the fence comes session − phase after it (7–9 s by default;
// measured on the testbed: the coordinator's host, silent, fenced 8.4 s
// after, docs/real-kafka-testbed.md §9). The phase is drawn, whole milliseconds, from
// the stream "timing/fence/<broker>/<death>"; none under timing: exact
// (the whole session timeout), nor when failover.delay is written (that
// delay, as written), nor in ZooKeeper mode (deviation: the session of a
// dead broker's ZooKeeper client also runs from its last ping; the model
// waits the whole zookeeper.session.timeout.ms).
// It is the broker's rule (its death, its heartbeats to the controller);
// phase is the world's draw of a phase over an interval from a named stream.
func (b *broker) fenceDelay(c *scenario.Coordinator, phase func(stream string, interval time.Duration) sim.Instant) time.Duration {
	d := c.FailoverDelay
	if c.FailoverDelaySet || c.MetadataMode != scenario.MetadataKRaft || c.BrokerHeartbeatInterval <= 0 {
		return d
	}
	p := phase("timing/fence/"+b.name+"/"+strconv.Itoa(int(b.epoch)), min(c.BrokerHeartbeatInterval, d))
	return d - time.Duration(p)
}
