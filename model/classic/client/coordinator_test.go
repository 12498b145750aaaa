// Ports of Kafka's AbstractCoordinatorTest and ConsumerCoordinatorTest
// (clients/src/test/java/org/apache/kafka/clients/consumer/internals/).
//
// Goal: the member handles every request/response path the way the Java
// client does, per profile. Method: the scripted driver of driver_test.go
// plays the coordinator; each case names the Java test it ports.
package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// AbstractCoordinatorTest.testJoinGroupRequestTimeout,
// testJoinGroupRequestTimeoutLowerBoundedByDefaultRequestTimeout and the
// per-version rule of §2.1.
//
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestTimeoutLowerBoundedByDefaultRequestTimeout @3.7.0
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestTimeout @3.7.0
func TestJoinGroupRequestTimeout(t *testing.T) {
	cases := []struct {
		java, profile string
		maxPoll       time.Duration
		want          time.Duration
	}{
		{"testJoinGroupRequestTimeout", "kafka-3.6", 60 * time.Second, 65 * time.Second},
		{"testJoinGroupRequestTimeoutLowerBoundedByDefaultRequestTimeout", "kafka-3.6", 10 * time.Second, 30 * time.Second},
		{"2.0-2.5 rule: rebalance+5s", "kafka-2.5", 10 * time.Second, 15 * time.Second},
		{"0.10: request.timeout.ms", "kafka-0.10", 10 * time.Second, 30 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, c.profile, func(cfg *Config) { cfg.MaxPollInterval = c.maxPoll })
			d.start()
			d.findCoordinator()
			d.pop(protocol.APIJoinGroup)
			require.Equal(t, d.now.Add(c.want), d.m.net.Inflight()[0].Deadline)
			// Just before the deadline nothing happens; at it the request times out.
			d.advance(c.want - time.Millisecond)
			require.Empty(t, d.eventsOf(protocol.EvRequestTimeout))
			d.advance(time.Millisecond)
			require.Len(t, d.eventsOf(protocol.EvRequestTimeout), 1)
			require.Equal(t, protocol.APIJoinGroup, d.eventsOf(protocol.EvRequestTimeout)[0].API)
			dead := d.eventsOf(protocol.EvCoordinatorDead)
			require.Len(t, dead, 1)
			require.Equal(t, "request-timeout", dead[0].Reason)
		})
	}
}

// AbstractCoordinatorTest.testTimeoutAndRetryJoinGroupIfNeeded and
// testRetainMemberIdAfterJoinGroupDisconnect: a JoinGroup lost to a
// disconnect is retried, after rediscovery, with the same member id.
//
// Kafka: AbstractCoordinatorTest.testTimeoutAndRetryJoinGroupIfNeeded @3.6.1
// Kafka: AbstractCoordinatorTest.testRetainMemberIdAfterJoinGroupDisconnect @3.7.0
func TestRetainMemberIdAfterJoinGroupDisconnect(t *testing.T) {
	d := newDriver(t, "kafka-3.6")
	d.stable(tp(0))
	d.m.gen = newGeneration(1, "m1", "range", true)
	d.call(func(o *Output) { d.m.requestRejoin(o, RejoinRebalanceInProgress) })
	d.advance(200 * time.Millisecond) // processing ends; poll() sends JoinGroup
	j := d.pop(protocol.APIJoinGroup)
	require.Equal(t, "m1", j.Req.(*protocol.JoinGroupRequest).MemberID)
	d.call(func(o *Output) { d.m.Disconnected(d.now, 0, o) })
	require.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 1)
	d.advance(time.Second)
	d.findCoordinator()
	d.advance(time.Second)
	j2 := d.pop(protocol.APIJoinGroup)
	require.Equal(t, "m1", j2.Req.(*protocol.JoinGroupRequest).MemberID)
	completeJoin(t, d, j2, 10, "m1")
}

// completeJoin answers a JoinGroup and the SyncGroup that follows and
// checks the member ends STABLE in that generation with that id
// (AbstractCoordinatorTest.ensureActiveGroup).
func completeJoin(t *testing.T, d *driver, j Send, gen int32, id string) {
	t.Helper()
	d.respond(j, &protocol.JoinGroupResponse{GenerationID: gen, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: id})
	s := d.pop(protocol.APISyncGroup)
	require.Equal(t, id, s.Req.(*protocol.SyncGroupRequest).MemberID)
	require.Equal(t, gen, s.Req.(*protocol.SyncGroupRequest).GenerationID)
	d.respond(s, &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: "range", Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0)}}})
	d.advance(200 * time.Millisecond)
	require.Equal(t, Stable, d.m.State())
	g, m := d.m.Generation()
	require.Equal(t, gen, g)
	require.Equal(t, id, m)
}

// The fatal JoinGroup errors: AbstractCoordinatorTest.testGroupMaxSizeExceptionIsFatal,
// testJoinGroupRequestWithFencedInstanceIdException, testJoinGroupProtocolTypeAndName
// (inconsistent type), ConsumerCoordinatorTest.testJoinGroupInvalidGroupId,
// testInvalidSessionTimeout; and testJoinGroupRequestWithRebalanceInProgress
// before KAFKA-10870.
//
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestWithFencedInstanceIdException @3.7.0
// Kafka: AbstractCoordinatorTest.testJoinGroupProtocolTypeAndName @3.7.0
// Kafka: ConsumerCoordinatorTest.testInvalidSessionTimeout @3.7.0
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestWithRebalanceInProgress @3.7.0
// Kafka: AbstractCoordinatorTest.testGroupMaxSizeExceptionIsFatal @3.7.0
// Kafka: ConsumerCoordinatorTest.testJoinGroupInvalidGroupId @3.7.0
func TestJoinGroupFatalErrors(t *testing.T) {
	cases := []struct {
		java, profile string
		resp          protocol.JoinGroupResponse
		want          protocol.ErrorCode
	}{
		{"testGroupMaxSizeExceptionIsFatal", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.GroupMaxSizeReached}, protocol.GroupMaxSizeReached},
		{"testJoinGroupRequestWithFencedInstanceIdException", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.FencedInstanceID}, protocol.FencedInstanceID},
		{"testJoinGroupProtocolTypeAndName", "kafka-3.6", protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "connect", ProtocolName: "range", MemberID: "m1", Leader: "x"}, protocol.InconsistentGroupProtocol},
		{"testJoinGroupInvalidGroupId", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.InvalidGroupID}, protocol.InvalidGroupID},
		{"testInvalidSessionTimeout", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.InvalidSessionTimeout}, protocol.InvalidSessionTimeout},
		{"GROUP_AUTHORIZATION_FAILED", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.GroupAuthorizationFailed}, protocol.GroupAuthorizationFailed},
		{"UNSUPPORTED_VERSION", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.UnsupportedVersion}, protocol.UnsupportedVersion},
		{"testJoinGroupRequestWithRebalanceInProgress before 2.8", "kafka-2.7", protocol.JoinGroupResponse{Error: protocol.RebalanceInProgress}, protocol.RebalanceInProgress},
		{"unexpected error", "kafka-3.6", protocol.JoinGroupResponse{Error: protocol.UnknownServerError}, protocol.UnknownServerError},
		{"MEMBER_ID_REQUIRED on v0 is unexpected", "kafka-0.10", protocol.JoinGroupResponse{Error: protocol.MemberIDRequired, MemberID: "x"}, protocol.MemberIDRequired},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.start()
			d.findCoordinator()
			resp := c.resp
			d.respond(d.pop(protocol.APIJoinGroup), &resp)
			require.True(t, d.m.Stopped())
			require.Equal(t, c.want, d.m.FatalError())
			f := d.eventsOf(protocol.EvFatal)
			require.Len(t, f, 1)
			require.Equal(t, c.want, f[0].Err)
			require.Equal(t, protocol.Never, d.m.NextAppDeadline())
			require.Equal(t, protocol.Never, d.m.NextHeartbeatDeadline())
		})
	}
}

func reasons(evs []protocol.Event) []string {
	var r []string
	for _, e := range evs {
		r = append(r, e.Reason)
	}
	return r
}

// AbstractCoordinatorTest.testJoinGroupRequestWithRebalanceInProgress (2.8+,
// KAFKA-10870): immediate retry with the same member id.
//
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestWithRebalanceInProgress @3.6.1
func TestJoinGroupRequestWithRebalanceInProgress(t *testing.T) {
	d := newDriver(t, "kafka-3.6")
	d.start()
	d.findCoordinator()
	d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{Error: protocol.MemberIDRequired, MemberID: "m1"})
	d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{Error: protocol.RebalanceInProgress})
	require.False(t, d.m.Stopped())
	j := d.pop(protocol.APIJoinGroup)
	require.Equal(t, "m1", j.Req.(*protocol.JoinGroupRequest).MemberID)
	require.True(t, d.m.rejoinNeededOrPending())
	require.False(t, d.m.needsJoinPrepare, "the retry does not run onJoinPrepare again")
	d.respond(j, &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
	d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0)}}})
	d.advance(200 * time.Millisecond)
	require.Equal(t, Stable, d.m.State())
	require.Len(t, d.eventsOf(protocol.EvAssigned), 1, "onJoinComplete once")
}

// The same from a member that owns partitions: onJoinPrepare (eager: revoke
// everything) runs once for the rebalance, not again for the retried
// JoinGroup; onJoinComplete runs once.
//
// Kafka: AbstractCoordinatorTest.testJoinGroupRequestWithRebalanceInProgress @3.7.0
func TestJoinGroupRebalanceInProgressCallbackCounts(t *testing.T) {
	d := newDriver(t, "kafka-3.7")
	d.stable(tp(0))
	d.advance(200 * time.Millisecond)
	assigned := len(d.eventsOf(protocol.EvAssigned))
	d.advance(3 * time.Second)
	d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
	d.advance(200 * time.Millisecond)
	d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{Error: protocol.RebalanceInProgress})
	d.advance(200 * time.Millisecond)
	j := d.pop(protocol.APIJoinGroup)
	require.Equal(t, "m1", j.Req.(*protocol.JoinGroupRequest).MemberID)
	d.respond(j, &protocol.JoinGroupResponse{GenerationID: 2, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
	d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(1)}}})
	d.advance(200 * time.Millisecond)
	require.Len(t, d.eventsOf(protocol.EvRevoked), 1, "onJoinPrepare once")
	require.Len(t, d.eventsOf(protocol.EvAssigned), assigned+1, "onJoinComplete once")
	require.Equal(t, []protocol.TopicPartition{tp(1)}, d.m.Owned())
}

// SyncGroup errors: AbstractCoordinatorTest.testSyncGroupRequestWithFencedInstanceIdException,
// ConsumerCoordinatorTest.testUnexpectedErrorOnSyncGroup, testUnknownMemberIdOnSyncGroup,
// testRebalanceInProgressOnSyncGroup, testIllegalGenerationOnSyncGroup.
//
// Kafka: ConsumerCoordinatorTest.testUnknownMemberIdOnSyncGroup @3.7.0
// Kafka: ConsumerCoordinatorTest.testRebalanceInProgressOnSyncGroup @3.7.0
// Kafka: ConsumerCoordinatorTest.testIllegalGenerationOnSyncGroup @3.7.0
// Kafka: AbstractCoordinatorTest.testSyncGroupRequestWithFencedInstanceIdException @3.7.0
// Kafka: ConsumerCoordinatorTest.testUnexpectedErrorOnSyncGroup @3.7.0
// Kafka: AbstractCoordinatorTest.testResetGenerationIdAfterSyncGroupFailedWithRebalanceInProgress @3.3.1
func TestSyncGroupErrors(t *testing.T) {
	cases := []struct {
		java, profile string
		err           protocol.ErrorCode
		fatal         bool
		rejoinID      string // member id of the next JoinGroup (sent at once)
		gen           int32  // generation after the response
	}{
		{"testSyncGroupRequestWithFencedInstanceIdException", "kafka-3.6", protocol.FencedInstanceID, true, "", 1},
		{"testUnexpectedErrorOnSyncGroup", "kafka-3.6", protocol.CoordinatorLoadInProgress, true, "", 1},
		{"GROUP_AUTHORIZATION_FAILED", "kafka-3.6", protocol.GroupAuthorizationFailed, true, "", 1},
		{"testUnknownMemberIdOnSyncGroup", "kafka-3.6", protocol.UnknownMemberID, false, "", -1},
		{"testRebalanceInProgressOnSyncGroup", "kafka-3.6", protocol.RebalanceInProgress, false, "m1", 1},
		{"testResetGenerationIdAfterSyncGroupFailedWithRebalanceInProgress (3.3.0)", "kafka-3.3", protocol.RebalanceInProgress, false, "m1", -1},
		{"testIllegalGenerationOnSyncGroup", "kafka-3.6", protocol.IllegalGeneration, false, "m1", -1},
		{"testIllegalGenerationOnSyncGroup before KAFKA-13419", "kafka-3.0", protocol.IllegalGeneration, false, "", -1},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.start()
			d.findCoordinator()
			d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
			require.Equal(t, CompletingRebalance, d.m.State())
			d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Error: c.err})
			require.Equal(t, c.fatal, d.m.Stopped())
			if c.fatal {
				require.Equal(t, c.err, d.m.FatalError())
				return
			}
			gen, _ := d.m.Generation()
			require.Equal(t, c.gen, gen)
			j := d.pop(protocol.APIJoinGroup)
			require.Equal(t, c.rejoinID, j.Req.(*protocol.JoinGroupRequest).MemberID)
			completeJoin(t, d, j, 2, "m2")
		})
	}
}

// AbstractCoordinatorTest.testJoinGroupUnknownMemberResponseWithOldGeneration,
// testSyncGroupUnknownMemberResponseWithOldGeneration,
// testSyncGroupIllegalGenerationResponseWithOldGeneration (KAFKA-9823): an
// error for a request sent in an older generation does not reset the
// current one.
//
// Kafka: AbstractCoordinatorTest.testSyncGroupUnknownMemberResponseWithOldGeneration @3.7.0
// Kafka: AbstractCoordinatorTest.testSyncGroupIllegalGenerationResponseWithOldGeneration @3.7.0
// Kafka: AbstractCoordinatorTest.testJoinGroupUnknownMemberResponseWithOldGeneration @3.7.0
func TestResponseWithOldGeneration(t *testing.T) {
	cases := []struct {
		java string
		api  protocol.APIKey
		err  protocol.ErrorCode
	}{
		{"testJoinGroupUnknownMemberResponseWithOldGeneration", protocol.APIJoinGroup, protocol.UnknownMemberID},
		{"testSyncGroupUnknownMemberResponseWithOldGeneration", protocol.APISyncGroup, protocol.UnknownMemberID},
		{"testSyncGroupIllegalGenerationResponseWithOldGeneration", protocol.APISyncGroup, protocol.IllegalGeneration},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, "kafka-3.6")
			d.start()
			d.findCoordinator()
			j := d.pop(protocol.APIJoinGroup)
			var req Send
			if c.api == protocol.APIJoinGroup {
				req = j
			} else {
				d.respond(j, &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
				req = d.pop(protocol.APISyncGroup)
			}
			newer := newGeneration(2, "m2", "range", true)
			d.m.gen = newer // changed meanwhile (as the Java tests do)
			var resp protocol.Response
			if c.api == protocol.APIJoinGroup {
				resp = &protocol.JoinGroupResponse{Error: c.err}
			} else {
				resp = &protocol.SyncGroupResponse{Error: c.err}
			}
			d.respond(req, resp)
			require.Equal(t, *newer, *d.m.gen)
			require.Empty(t, d.eventsOf(protocol.EvGenerationReset))
		})
	}
}

// Heartbeat responses: ConsumerCoordinatorTest.testNormalHeartbeat,
// testCoordinatorNotAvailable, testNotCoordinator, testIllegalGeneration,
// testUnknownMemberId; AbstractCoordinatorTest.testHeartbeatRequestWithFencedInstanceIdException.
//
// Kafka: ConsumerCoordinatorTest.testCoordinatorNotAvailable @3.7.0
// Kafka: ConsumerCoordinatorTest.testNotCoordinator @3.7.0
// Kafka: ConsumerCoordinatorTest.testIllegalGeneration @3.7.0
// Kafka: ConsumerCoordinatorTest.testUnknownMemberId @3.7.0
// Kafka: ConsumerCoordinatorTest.testNormalHeartbeat @3.7.0
// Kafka: AbstractCoordinatorTest.testHeartbeatRequestWithFencedInstanceIdException @3.7.0
func TestHeartbeatResponses(t *testing.T) {
	cases := []struct {
		java, profile string
		err           protocol.ErrorCode
		coordDead     bool
		state         MemberState
		gen           int32
		memberID      string
		fatal         bool
	}{
		{"testNormalHeartbeat", "kafka-3.6", protocol.None, false, Stable, 1, "m1", false},
		{"testCoordinatorNotAvailable", "kafka-3.6", protocol.CoordinatorNotAvailable, true, Stable, 1, "m1", false},
		{"testNotCoordinator", "kafka-3.6", protocol.NotCoordinator, true, Stable, 1, "m1", false},
		{"testIllegalGeneration", "kafka-3.6", protocol.IllegalGeneration, false, Unjoined, -1, "m1", false},
		{"testIllegalGeneration before KAFKA-13419", "kafka-3.0", protocol.IllegalGeneration, false, Unjoined, -1, "", false},
		{"testUnknownMemberId", "kafka-3.6", protocol.UnknownMemberID, false, Unjoined, -1, "", false},
		{"testHeartbeatRequestWithFencedInstanceIdException", "kafka-3.6", protocol.FencedInstanceID, false, Unjoined, -1, "", true},
		{"GROUP_AUTHORIZATION_FAILED only fails the heartbeat", "kafka-3.6", protocol.GroupAuthorizationFailed, false, Stable, 1, "m1", false},
	}
	for _, c := range cases {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.stable(tp(0))
			d.advance(3 * time.Second)
			hb := d.pop(protocol.APIHeartbeat)
			require.Equal(t, int32(1), hb.Req.(*protocol.HeartbeatRequest).GenerationID)
			d.respond(hb, &protocol.HeartbeatResponse{Error: c.err})
			if c.fatal {
				d.advance(200 * time.Millisecond) // thrown at the next poll()
				require.True(t, d.m.Stopped())
				require.Equal(t, c.err, d.m.FatalError())
				return
			}
			require.Equal(t, c.coordDead, len(d.eventsOf(protocol.EvCoordinatorDead)) == 1)
			require.Equal(t, c.state, d.m.State())
			gen, id := d.m.Generation()
			require.Equal(t, c.gen, gen)
			require.Equal(t, c.memberID, id)
		})
	}
}

// AbstractCoordinatorTest.testHeartbeatIllegalGenerationResponseWithOldGeneration,
// testHeartbeatUnknownMemberResponseWithOldGeneration,
// testHeartbeatInstanceFencedResponseWithOldGeneration: stale heartbeat
// errors count as liveness and change nothing.
//
// Kafka: AbstractCoordinatorTest.testHeartbeatUnknownMemberResponseWithOldGeneration @3.7.0
// Kafka: AbstractCoordinatorTest.testHeartbeatInstanceFencedResponseWithOldGeneration @3.7.0
// Kafka: AbstractCoordinatorTest.testHeartbeatIllegalGenerationResponseWithOldGeneration @3.7.0
func TestHeartbeatResponseWithOldGeneration(t *testing.T) {
	for _, c := range []struct {
		java string
		err  protocol.ErrorCode
	}{
		{"testHeartbeatIllegalGenerationResponseWithOldGeneration", protocol.IllegalGeneration},
		{"testHeartbeatUnknownMemberResponseWithOldGeneration", protocol.UnknownMemberID},
		{"testHeartbeatInstanceFencedResponseWithOldGeneration", protocol.FencedInstanceID},
	} {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, "kafka-3.6")
			d.stable(tp(0))
			d.advance(3 * time.Second)
			hb := d.pop(protocol.APIHeartbeat)
			newer := newGeneration(2, "m1", "range", true)
			d.m.gen = newer
			d.respond(hb, &protocol.HeartbeatResponse{Error: c.err})
			require.Equal(t, *newer, *d.m.gen)
			require.Equal(t, Stable, d.m.State())
			require.False(t, d.m.Stopped())
			require.Equal(t, d.now.Add(10*time.Second), d.m.hb.sessionDeadline) // receiveHeartbeat
		})
	}
}

// AbstractCoordinatorTest.testHeartbeatRebalanceInProgressResponseDuringRebalancing:
// REBALANCE_IN_PROGRESS in COMPLETING_REBALANCE is ignored (no rejoin request).
//
// Kafka: AbstractCoordinatorTest.testHeartbeatRebalanceInProgressResponseDuringRebalancing @3.6.1
func TestHeartbeatRebalanceInProgressResponseDuringRebalancing(t *testing.T) {
	d := newDriver(t, "kafka-3.6")
	d.start()
	d.findCoordinator()
	d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
	sync := d.pop(protocol.APISyncGroup)
	d.advance(3 * time.Second)
	before := len(d.eventsOf(protocol.EvRejoinRequested))
	d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
	require.Len(t, d.eventsOf(protocol.EvRejoinRequested), before)
	d.respond(sync, &protocol.SyncGroupResponse{ProtocolType: "consumer", ProtocolName: "range", Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(1)}}})
	require.Equal(t, Stable, d.m.State())
	require.Equal(t, []protocol.TopicPartition{tp(1)}, d.m.Owned())
}

// ConsumerCoordinatorTest.testNormalJoinGroupFollower.
//
// Kafka: ConsumerCoordinatorTest.testNormalJoinGroupFollower @3.6.1
func TestNormalJoinGroupFollower(t *testing.T) {
	d := newDriver(t, "kafka-3.6")
	d.start()
	d.findCoordinator()
	j := d.sends[0].Req.(*protocol.JoinGroupRequest)
	assert.Equal(t, "c-0", j.ClientID)
	assert.Equal(t, "consumer", j.ProtocolType)
	assert.Equal(t, 300*time.Second, j.RebalanceTimeout)
	require.Len(t, j.Protocols, 1)
	assert.Equal(t, int32(-1), j.Protocols[0].Metadata.GenerationID)
	d.joinFollower(1, "m1", tp(3))
	require.Equal(t, Stable, d.m.State())
	require.Equal(t, []protocol.TopicPartition{tp(3)}, d.m.Owned())
	asg := d.eventsOf(protocol.EvAssigned)
	require.Len(t, asg, 1)
	require.Equal(t, int32(1), asg[0].Gen)
	// A response whose correlation id is not in flight is ignored.
	n := len(d.events)
	d.respond(Send{Corr: 999}, &protocol.HeartbeatResponse{})
	require.Len(t, d.events, n)
}

// ConsumerCoordinatorTest.testCoordinatorDisconnect and
// testCoordinatorDisconnectAfterNotCoordinatorError: NOT_COORDINATOR on one
// request disconnects the coordinator and fails the others in flight.
//
// Kafka: ConsumerCoordinatorTest.testCoordinatorDisconnect @3.6.1
// Kafka: ConsumerCoordinatorTest.testCoordinatorDisconnectAfterNotCoordinatorError @3.7.0
func TestInFlightRequestsFailedAfterCoordinatorMarkedDead(t *testing.T) {
	d := newDriver(t, "kafka-3.6")
	d.start()
	d.findCoordinator()
	d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{GenerationID: 1, ProtocolType: "consumer", ProtocolName: "range", Leader: "x", MemberID: "m1"})
	sync := d.pop(protocol.APISyncGroup)
	d.advance(3 * time.Second) // heartbeat in COMPLETING_REBALANCE
	hb := d.pop(protocol.APIHeartbeat)
	d.respond(hb, &protocol.HeartbeatResponse{Error: protocol.NotCoordinator})
	require.Len(t, d.eventsOf(protocol.EvCoordinatorDead), 1)
	for _, e := range d.m.net.Inflight() {
		require.NotEqual(t, protocol.APISyncGroup, e.API, "the SyncGroup failed with the disconnect")
	}
	d.respond(sync, &protocol.SyncGroupResponse{}) // too late: ignored
	require.NotEqual(t, Stable, d.m.State())
	d.advance(time.Second)
	d.findCoordinator()
	d.advance(time.Second)
	require.Equal(t, "m1", d.pop(protocol.APIJoinGroup).Req.(*protocol.JoinGroupRequest).MemberID)
}

// AbstractCoordinatorTest.testLookupCoordinator: with no broker available
// (every connection in reconnect backoff) the lookup fails at once; after
// the backoff one FindCoordinator goes out, one at a time. The next lookup
// after a failed one goes to the least-loaded node (NetworkClient
// .leastLoadedNode): the READY connection with the fewest requests in flight.
//
// Kafka: AbstractCoordinatorTest.testLookupCoordinator @3.7.0
func TestLookupCoordinator(t *testing.T) {
	d := newDriver(t, "kafka-3.6")
	for _, b := range []int32{0, 1} {
		d.m.net.ConnFor(b, false).ForceBackoff(0, 50*time.Millisecond)
	}
	d.start()
	require.Zero(t, d.count(protocol.APIFindCoordinator), "no broker available: the lookup failed at once")
	d.advance(40 * time.Millisecond)
	require.Zero(t, d.count(protocol.APIFindCoordinator))
	d.advance(100 * time.Millisecond)
	require.Equal(t, 1, d.count(protocol.APIFindCoordinator), "one lookup after the backoff, one at a time")
	f := d.pop(protocol.APIFindCoordinator)
	d.respond(f, &protocol.FindCoordinatorResponse{Error: protocol.CoordinatorNotAvailable, NodeID: -1})
	require.Zero(t, d.count(protocol.APIFindCoordinator))
	d.advance(100 * time.Millisecond)
	f2 := d.pop(protocol.APIFindCoordinator)
	require.Equal(t, f.Broker, f2.Broker, "the READY connection is the least loaded")
}

// AbstractCoordinatorTest.testBackoffAndRetryUponRetriableError and
// testReturnUponRetriableErrorAndExpiredTimer (KAFKA-12639): after a
// retriable JoinGroup error 3.5+ waits retry.backoff.ms; 2.5–3.4 re-sends at
// once; ≤2.4 sleeps the backoff.
//
// Kafka: AbstractCoordinatorTest.testReturnUponRetriableErrorAndExpiredTimer @3.7.0
// Kafka: AbstractCoordinatorTest.testBackoffAndRetryUponRetriableError @3.7.0
func TestBackoffAndRetryUponRetriableError(t *testing.T) {
	for _, c := range []struct {
		java, profile string
		wait          time.Duration
	}{
		{"testBackoffAndRetryUponRetriableError", "kafka-3.6", 100 * time.Millisecond},
		{"testReturnUponRetriableErrorAndExpiredTimer before KAFKA-12639", "kafka-3.4", 0},
		{"blocking poll (2.4) sleeps", "kafka-2.4", 100 * time.Millisecond},
	} {
		t.Run(c.java, func(t *testing.T) {
			d := newDriver(t, c.profile)
			d.start()
			d.findCoordinator()
			d.respond(d.pop(protocol.APIJoinGroup), &protocol.JoinGroupResponse{Error: protocol.CoordinatorLoadInProgress})
			if c.wait == 0 {
				require.Equal(t, 1, d.count(protocol.APIJoinGroup))
				return
			}
			require.Zero(t, d.count(protocol.APIJoinGroup))
			d.advance(c.wait - time.Millisecond)
			require.Zero(t, d.count(protocol.APIJoinGroup))
			d.advance(time.Millisecond)
			require.Equal(t, 1, d.count(protocol.APIJoinGroup))
		})
	}
}

// ConsumerCoordinatorTest.testSelectRebalanceProtocol: COOPERATIVE only when
// every assignor supports it, and only from 2.4.
//
// Kafka: ConsumerCoordinatorTest.testSelectRebalanceProtocol @3.6.1
func TestSelectRebalanceProtocol(t *testing.T) {
	for _, c := range []struct {
		profile   string
		assignors []string
		coop      bool
	}{
		{"kafka-3.6", []string{"cooperative-sticky"}, true},
		{"kafka-3.6", []string{"range", "cooperative-sticky"}, false},
		{"kafka-2.3", []string{"cooperative-sticky"}, false},
	} {
		d := newDriver(t, c.profile, func(cfg *Config) { cfg.Assignors = c.assignors })
		require.Equal(t, c.coop, d.m.cooperative, "%s %v", c.profile, c.assignors)
	}
}

// ConsumerCoordinatorTest.testRebalanceWithMetadataChange-style cooperative
// flow (KIP-429): owned partitions are kept across onJoinPrepare, sent in the
// subscription, the revoked ones are given up in onJoinComplete and a second
// rebalance is requested.
//
// Kafka: ConsumerCoordinatorTest.testRebalanceWithMetadataChange @3.6.1
func TestCooperativeSecondRebalance(t *testing.T) {
	d := newDriver(t, "kafka-3.6", func(cfg *Config) { cfg.Assignors = []string{"cooperative-sticky"} })
	d.stable(tp(0), tp(1))
	d.advance(3 * time.Second)
	d.respond(d.pop(protocol.APIHeartbeat), &protocol.HeartbeatResponse{Error: protocol.RebalanceInProgress})
	d.advance(200 * time.Millisecond)
	jr := d.pop(protocol.APIJoinGroup)
	j := jr.Req.(*protocol.JoinGroupRequest)
	require.Equal(t, []protocol.TopicPartition{tp(0), tp(1)}, j.Protocols[0].Metadata.OwnedPartitions)
	require.Equal(t, int32(1), j.Protocols[0].Metadata.GenerationID)
	require.Empty(t, d.eventsOf(protocol.EvRevoked), "cooperative keeps partitions at join")
	// Still owned partitions keep returning records during the rebalance (2.5+).
	require.Equal(t, appBusy, d.m.app.phase)
	d.advance(50 * time.Millisecond) // the response waits for the next poll()
	d.respond(jr, &protocol.JoinGroupResponse{GenerationID: 2, ProtocolType: "consumer", ProtocolName: "cooperative-sticky", Leader: "x", MemberID: "m1"})
	require.Equal(t, PreparingRebalance, d.m.State(), "queued until the application polls")
	d.advance(100 * time.Millisecond)
	d.respond(d.pop(protocol.APISyncGroup), &protocol.SyncGroupResponse{Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{tp(0)}}})
	d.advance(200 * time.Millisecond)
	rev := d.eventsOf(protocol.EvRevoked)
	require.Len(t, rev, 1)
	require.Equal(t, []protocol.TopicPartition{tp(1)}, rev[0].Partitions)
	require.Equal(t, []protocol.TopicPartition{tp(0)}, d.m.Owned())
	require.Contains(t, reasons(d.eventsOf(protocol.EvRejoinRequested)), "cooperative-revocation")
	require.Equal(t, 1, d.count(protocol.APIJoinGroup), "second rebalance")
}

// AbstractCoordinatorTest.testCoordinatorDiscoveryExponentialBackoff
// (KIP-580, 3.7+): within one ensureCoordinatorReady call (a long poll
// timer) lookup retries back off 100, 200, 400, 800, 1000 ms ±20%. The Java
// test drives the retries by connection backoff, this port by
// COORDINATOR_NOT_AVAILABLE answers; both take retryBackoff.backoff(attempts++)
// (AbstractCoordinator 3.7.0 292-305).
//
// Kafka: AbstractCoordinatorTest.testCoordinatorDiscoveryExponentialBackoff @3.7.0
func TestCoordinatorDiscoveryExponentialBackoff(t *testing.T) {
	d := newDriver(t, "kafka-3.7", func(cfg *Config) { cfg.PollTimeout = Const(time.Minute) })
	gaps := lookupGaps(d, 6)
	bases := []float64{100, 200, 400, 800, 1000, 1000}
	for i, g := range gaps {
		lo := time.Duration(bases[i]*0.8) * time.Millisecond
		hi := min(time.Duration(bases[i]*1.2)*time.Millisecond, time.Second)
		require.GreaterOrEqual(t, g, lo, "attempt %d", i)
		require.LessOrEqual(t, g, hi+time.Millisecond, "attempt %d", i)
	}
}

// The attempts counter is a local of ensureCoordinatorReady (AbstractCoordinator
// 3.7.0 281) and its sleep is bounded by the poll() timer, so with a 100 ms
// poll timeout every poll() restarts at the base backoff: the gaps stay at
// most one poll timeout (+ jitter), they do not grow to retry.backoff.max.ms.
//
// Kafka: AbstractCoordinatorTest.testCoordinatorDiscoveryExponentialBackoff @3.7.0
func TestCoordinatorDiscoveryBackoffRestartsEachPoll(t *testing.T) {
	d := newDriver(t, "kafka-3.7")
	for i, g := range lookupGaps(d, 8) {
		require.LessOrEqual(t, g, 121*time.Millisecond, "attempt %d", i)
	}
}

// lookupGaps answers n FindCoordinator requests COORDINATOR_NOT_AVAILABLE at
// once and returns the time from each answer to the next request.
func lookupGaps(d *driver, n int) []time.Duration {
	d.t.Helper()
	d.start()
	var gaps []time.Duration
	for range n {
		f := d.pop(protocol.APIFindCoordinator)
		d.respond(f, &protocol.FindCoordinatorResponse{Error: protocol.CoordinatorNotAvailable})
		failed := d.now
		for d.count(protocol.APIFindCoordinator) == 0 {
			d.advance(time.Millisecond)
		}
		gaps = append(gaps, d.now.Sub(failed))
	}
	return gaps
}
