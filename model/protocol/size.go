package protocol

// Wire sizes: an estimate of each message's serialized size in bytes, after
// Kafka's schemas (the request header: api key, version, correlation id,
// client id; strings as 2-byte length + bytes; arrays as 4-byte count). The
// network uses them for transmission time when a bandwidth is set, which is
// what makes a 10,000-member JoinGroup response to the leader, the leader's
// SyncGroup and the group record cost more than a heartbeat.

const (
	requestHeaderBytes  = 2 + 2 + 4 + 2 // api key, version, correlation id, client id length
	responseHeaderBytes = 4             // correlation id
	sizePrefix          = 4             // the frame's length prefix
)

func strBytes(s string) int { return 2 + len(s) }

// SubscriptionBytes is the ConsumerProtocolSubscription's size.
func SubscriptionBytes(s *Subscription) int {
	n := 2 + 4 // version, topics count
	for _, t := range s.Topics {
		n += strBytes(t)
	}
	n += 4 + len(s.UserData)
	n += 4 + partitionsBytes(s.OwnedPartitions)
	return n + 4 // generation
}

// AssignmentBytes is the ConsumerProtocolAssignment's size.
func AssignmentBytes(a *Assignment) int {
	return 2 + 4 + partitionsBytes(a.Partitions) + 4 + len(a.UserData)
}

// partitionsBytes counts a list grouped by topic: topic name + 4-byte count
// + 4 bytes per partition (the list is sorted by topic in practice).
func partitionsBytes(ps []TopicPartition) int {
	n := 0
	last := ""
	for i, tp := range ps {
		if i == 0 || tp.Topic != last {
			n += strBytes(tp.Topic) + 4
			last = tp.Topic
		}
		n += 4
	}
	return n
}

// RequestBytes estimates a request's size on the wire.
func RequestBytes(r Request) int {
	n := sizePrefix + requestHeaderBytes
	switch r := r.(type) {
	case *FindCoordinatorRequest:
		n += strBytes(r.Key) + 1
	case *JoinGroupRequest:
		n += len(r.ClientID) + strBytes(r.GroupID) + 4 + 4 + strBytes(r.MemberID) + strBytes(r.GroupInstanceID) +
			strBytes(r.ProtocolType) + 4 + strBytes(r.Reason)
		for i := range r.Protocols {
			n += strBytes(r.Protocols[i].Name) + 4 + SubscriptionBytes(&r.Protocols[i].Metadata)
		}
	case *SyncGroupRequest:
		n += strBytes(r.GroupID) + 4 + strBytes(r.MemberID) + strBytes(r.GroupInstanceID) +
			strBytes(r.ProtocolType) + strBytes(r.ProtocolName) + 4
		for i := range r.Assignments {
			n += strBytes(r.Assignments[i].MemberID) + 4 + AssignmentBytes(&r.Assignments[i].Assignment)
		}
	case *HeartbeatRequest:
		n += strBytes(r.GroupID) + 4 + strBytes(r.MemberID) + strBytes(r.GroupInstanceID)
	case *LeaveGroupRequest:
		n += strBytes(r.GroupID) + 4
		for _, m := range r.Members {
			n += strBytes(m.MemberID) + strBytes(m.GroupInstanceID) + strBytes(m.Reason)
		}
	case *OffsetCommitRequest:
		n += strBytes(r.GroupID) + 4 + strBytes(r.MemberID) + strBytes(r.GroupInstanceID) + 4
		// each partition: index, offset, leader epoch, metadata
		n += partitionsBytes(r.Partitions) + len(r.Partitions)*(8+4+2)
	}
	return n
}

// ResponseBytes estimates a response's size on the wire.
func ResponseBytes(r Response) int {
	n := sizePrefix + responseHeaderBytes + 4 + 2 // throttle time, error code
	switch r := r.(type) {
	case *FindCoordinatorResponse:
		n += 2 + 4 + 2 + 16 + 4 // error message, node id, host, port
	case *JoinGroupResponse:
		n += 4 + strBytes(r.ProtocolType) + strBytes(r.ProtocolName) + strBytes(r.Leader) + 1 + strBytes(r.MemberID) + 4
		for i := range r.Members {
			n += strBytes(r.Members[i].MemberID) + strBytes(r.Members[i].GroupInstanceID) + 4 + SubscriptionBytes(&r.Members[i].Metadata)
		}
	case *SyncGroupResponse:
		n += strBytes(r.ProtocolType) + strBytes(r.ProtocolName) + 4 + AssignmentBytes(&r.Assignment)
	case *HeartbeatResponse:
	case *LeaveGroupResponse:
		n += 4 + len(r.Members)*(2+2+2)
	case *OffsetCommitResponse:
		n += 4 + 16
	}
	return n
}
