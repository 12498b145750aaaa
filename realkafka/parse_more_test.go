package realkafka

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

// clientCases are client lines captured from further runs.
var clientCases = map[string][]wantClient{}
