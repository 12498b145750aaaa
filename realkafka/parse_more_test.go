package realkafka

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// want391 are the lines of testdata/lines/broker-3.9.1.log: the Scala
// GroupCoordinator of broker 3.9.1 logging through reload4j in UTC
// (GroupCoordinator.scala:1501, :1576, :607, :1733, :1233@v7.9.0).
var want391 = []wantBroker{
	{BrokerPreparing, "payments", 0, "", "join", 1796162884271},
	{BrokerPreparing, "payments", 1, "", "session-expired", 1796162923958},
	{BrokerStabilized, "payments", 1, "", "", 1796162890998},
	{BrokerStabilized, "payments", 2, "", "", 1796162925928},
	{BrokerStable, "payments", 1, "payments-10-e7c8bdf5-8385-444e-94ef-e43ee872b566", "", 1796162892004},
	{BrokerEvicted, "payments", 0, "payments-3-9e187091-d9dc-43bd-8464-0c89dcb20be5", "", 1796162923837},
	{BrokerElected, "", 0, "", "", 1796162881770},
	// graceful-leave: the reason (:659) and the LeaveGroup line (:661, the
	// member printed as its whole MemberMetadata).
	{BrokerPreparing, "payments", 1, "", "leave", 1796164805876},
	{BrokerLeave, "payments", 0, "payments-3-31151fe4-2a93-476f-b0d4-534cdf35c9c9", "", 1796164805878},
}

// want431 are the consumer-protocol lines of broker 4.3.1
// (GroupMetadataManager.java@v8.3.0 :3075, :3449, :3894, :3570 (DEBUG), :4596).
var want431 = []wantBroker{
	{BrokerConsumerJoin, "payments", 0, "488KcI7TSuy1-uRX_z8IIw", "", 1796165308604},
	{BrokerEpochBump, "payments", 2, "", "", 1796165309941},
	{BrokerTargetAssignment, "payments", 2, "", "", 1796165310622},
	{BrokerConsumerMember, "payments", 2, "488KcI7TSuy1-uRX_z8IIw", "", 1796165310803},
	{BrokerConsumerFenced, "payments", 0, "FU3p1wRmQXGogGmbY5cGKw", "", 1796165412176},
}

// clientCases are client lines captured from further runs: 2.8.2 against a
// 4.4.0 broker (it logs through AbstractCoordinator's own logger, not
// ConsumerCoordinator's as 3.x does), and 4.3.1 under the consumer protocol.
var clientCases = map[string][]wantClient{
	"client-2.8.2.log": {
		{ClientCoordinatorFound, "10.77.0.1:9092", 0, "", 1796165517994},
		{ClientJoining, "", 0, "", 1796165518013},
		{ClientSynced, "", 1, "", 1796165524231},
	},
	"client-4.3.1.log": {
		{ClientTransition, "", 0, "", 1796165308204},
		{ClientCoordinatorFound, "10.77.0.2:9092", 0, "", 1796165306931},
	},
}

// TestParseClassicLeaveInConsumerGroup: a classic member leaving a group the
// 4.3.1 broker has converted to a consumer group (the classic → consumer
// rolling restart) logs "[GroupId G] Dynamic member M has left group …" —
// captured from the migrate-consumer run; without it the converter kept the
// member in the group and never settled.
func TestParseClassicLeaveInConsumerGroup(t *testing.T) {
	l := "1796167740130 INFO [group-coordinator-event-processor-0] org.apache.kafka.coordinator.group.GroupMetadataManager [GroupCoordinator id=0 topic=__consumer_offsets partition=0] [GroupId payments] Dynamic member payments-1-99803339-72b4-4786-9803-7dfc05606121 has left group through explicit `LeaveGroup` request; client reason: the consumer is being closed"
	e, ok := ParseBroker(l)
	require.True(t, ok)
	require.Equal(t, BrokerConsumerLeave, e.Kind)
	require.Equal(t, "payments", e.Group)
	require.Equal(t, "payments-1-99803339-72b4-4786-9803-7dfc05606121", e.Member)
	require.Equal(t, int64(1796167740130), e.TsMs)
}

// TestParseAssignedPartitions: a "new assignment state" line's
// assignedPartitions (GroupMetadataManager.maybeReconcile,
// Utils.assignmentToString): at 4.4.0 each partition carries its epoch
// ("Uuid-p@e"), left out; sorted; an empty assignment is an empty list,
// told apart from a line that printed none [captured: cal-consumer-crash
// 4.4.0 rep 3].
func TestParseAssignedPartitions(t *testing.T) {
	l := "1796626908672 DEBUG [group-coordinator-event-processor-0] org.apache.kafka.coordinator.group.GroupMetadataManager [GroupCoordinator id=0 topic=__consumer_offsets partition=0] [GroupId payments] Member ykKJPwHsSGmNTcGcDGIPXw new assignment state: epoch=8, previousEpoch=7, state=STABLE, assignedPartitions=[L81UwFo9Q2Oi38ppmghB3A-10@7, L81UwFo9Q2Oi38ppmghB3A-11@7, L81UwFo9Q2Oi38ppmghB3A-7@8] and revokedPartitions=[]."
	e, ok := ParseBroker(l)
	require.True(t, ok)
	require.Equal(t, BrokerConsumerMember, e.Kind)
	require.Equal(t, int32(8), e.Gen)
	require.Equal(t, []string{"L81UwFo9Q2Oi38ppmghB3A-10", "L81UwFo9Q2Oi38ppmghB3A-11", "L81UwFo9Q2Oi38ppmghB3A-7"}, e.Assigned)
	e, ok = ParseBroker("1796626848620 DEBUG [group-coordinator-event-processor-0] org.apache.kafka.coordinator.group.GroupMetadataManager [GroupCoordinator id=0 topic=__consumer_offsets partition=0] [GroupId payments] Member HAll47aiSS6nkl51HTNjMQ new assignment state: epoch=7, previousEpoch=2, state=UNRELEASED_PARTITIONS, assignedPartitions=[] and revokedPartitions=[].")
	require.True(t, ok)
	require.Equal(t, "UNRELEASED_PARTITIONS", e.State)
	require.NotNil(t, e.Assigned)
	require.Empty(t, e.Assigned)
	// 4.3.1 prints no partition epoch.
	e, ok = ParseBroker(captured(t, "broker-4.3.1.log")[3])
	require.True(t, ok)
	require.Len(t, e.Assigned, 24)
	require.Equal(t, "O-lvhaR2SlSeavTOkxVMWA-0", e.Assigned[0])
}
