package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestLeaderWatchesMetadata ports two ConsumerCoordinatorTest cases, the
// leader that ran the assignor rejoins when a partition is added
// (Kafka: ConsumerCoordinatorTest.testMetadataChangeTriggersRebalance @3.2.0)
// and a leader told to skip the assignment (KIP-814) watches too
// (Kafka: ConsumerCoordinatorTest.testStaticLeaderRejoinsGroupAndCanTriggersRebalance @3.2.0),
// and adds the follower, whose
// assignmentSnapshot onJoinComplete clears: it does not rejoin. The
// metadata refresh is metadata.max.age.ms after the last one (metadata.go).
func TestLeaderWatchesMetadata(t *testing.T) {
	for _, c := range []struct {
		name         string
		leader, skip bool
		rejoins      bool
	}{
		{"testMetadataChangeTriggersRebalance", true, false, true},
		{"testStaticLeaderRejoinsGroupAndCanTriggersRebalance", true, true, true},
		{"follower", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cluster := &Cluster{Topics: []assign.Topic{{Name: "t", Partitions: 1}}}
			d := newDriver(t, "kafka-3.2", func(cfg *Config) {
				cfg.Metadata = Metadata{Cluster: cluster, MaxAge: 5 * time.Second}
			})
			d.start()
			d.findCoordinator()
			j := d.pop(protocol.APIJoinGroup)
			resp := &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "other", MemberID: "m1"}
			if c.leader {
				resp.Leader = "m1"
				resp.SkipAssignment = c.skip
				resp.Members = []protocol.JoinGroupMember{{MemberID: "m1", Metadata: protocol.Subscription{Topics: []string{"t"}}}}
			}
			d.respond(j, resp)
			s := d.pop(protocol.APISyncGroup)
			if c.leader && !c.skip {
				require.Len(t, s.Req.(*protocol.SyncGroupRequest).Assignments, 1, "the assignor ran")
			}
			d.respond(s, &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: "range", Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0)}}})
			require.Equal(t, Stable, d.m.State())
			require.False(t, d.m.rejoinNeededOrPending())

			// A partition is added; nothing happens before the next refresh.
			cluster.Topics[0].Partitions = 2
			cluster.Version++
			// (Within the session timeout: the driver answers no heartbeat.)
			d.advance(4 * time.Second)
			assert.Empty(t, d.eventsOf(protocol.EvRejoinRequested))
			d.advance(2 * time.Second)
			require.NotNil(t, d.m.meta)
			assert.Equal(t, 1, d.m.meta.version, "the refresh saw the change")
			var reasons []string
			for _, e := range d.eventsOf(protocol.EvRejoinRequested) {
				reasons = append(reasons, e.Reason)
			}
			if c.rejoins {
				assert.Equal(t, []string{"metadata-changed"}, reasons)
				assert.Equal(t, 1, d.count(protocol.APIJoinGroup), "the leader rejoins")
			} else {
				assert.Empty(t, reasons)
				assert.Zero(t, d.count(protocol.APIJoinGroup))
			}
		})
	}
}
