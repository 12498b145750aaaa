package protocol

// The trace's typed vocabulary of states and triggers (after etcd-io/raft's
// raftpb.MessageType and StateType): group state, member state, process
// lifecycle, rebalance reason, group-type conversion, revocation and leave
// request are enums whose String() is exactly the text the trace carries
// in Event.State, Event.Reason or Event.Detail, so trace hashes and golden
// traces do not move. The text is what a trace keeps (hashed, in the JSON
// lines); the typed field beside it is what every consumer of the trace
// compares (metrics, checkers, oracles, explain, timelines), never the
// text. An event's typed field and its text are one fact: TypeText fills
// the first from the second where a model wrote only the text, and the
// harness's TestTypedFieldsAgreeWithText holds the two equal over whole
// runs.

// GroupState is the broker's state of a group (Event.GroupState of
// EvGroupState): the classic GroupState of GroupMetadata.scala and the
// consumer group's ConsumerGroup.ConsumerGroupState, one enum, since a
// group migrates between the two (KIP-848 online migration) and the
// observers follow it across.
type GroupState uint8

const (
	// GroupStateNone: no state yet (a group the coordinator never loaded).
	GroupStateNone GroupState = iota
	GroupEmpty
	GroupPreparingRebalance  // classic only
	GroupCompletingRebalance // classic only
	GroupStable
	GroupDead        // classic only
	GroupAssigning   // consumer protocol only
	GroupReconciling // consumer protocol only
)

var groupStateText = [...]string{"", "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Assigning", "Reconciling"}

// String is Kafka's name of the state, as the trace carries it.
func (s GroupState) String() string { return textOf(groupStateText[:], s) }

// MemberState is a member's state as its owner reports it (Event.MemberState
// of EvMemberState): the classic client's AbstractCoordinator.MemberState,
// the KIP-848 client's MemberState, or the consumer-group coordinator's
// reconciliation state of one member (modern.MemberState). The names are
// Kafka's; STABLE is one value for all three.
type MemberState uint8

const (
	MemberStateNone MemberState = iota
	// The classic client (AbstractCoordinator.MemberState, 2.6.1+).
	MemberUnjoined
	MemberPreparingRebalance
	MemberCompletingRebalance
	MemberStable // STABLE: every owner's name for it
	// The KIP-848 client (ConsumerMembershipManager's MemberState).
	MemberUnsubscribed
	MemberJoining
	MemberReconciling
	MemberAcknowledging
	MemberFenced
	MemberPrepareLeaving
	MemberLeaving
	MemberFatal
	MemberStale
	// The consumer-group coordinator's view of a member (modern.MemberState).
	MemberUnrevokedPartitions
	MemberUnreleasedPartitions
	MemberUnknown
)

var memberStateText = [...]string{"", "UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE",
	"UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING", "FENCED", "PREPARE_LEAVING", "LEAVING", "FATAL", "STALE",
	"UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS", "UNKNOWN"}

// String is Kafka's name of the state, as the trace carries it.
func (s MemberState) String() string { return textOf(memberStateText[:], s) }

// ProcessState is a step of a process's lifecycle (Event.Process of the
// harness's process and broker-process events).
type ProcessState uint8

const (
	ProcessNone ProcessState = iota
	ProcessStarted
	ProcessCrashed
	// ProcessHostDown: the process died with its host.
	ProcessHostDown
	// ProcessClosed: KafkaConsumer.close() returned.
	ProcessClosed
	// ProcessFatal: the member stopped on a fatal error.
	ProcessFatal
	// ProcessPaused, ProcessResumed: a pause fault froze the process (a GC
	// pause, SIGSTOP) and let it go; it is alive throughout.
	ProcessPaused
	ProcessResumed
)

var processText = [...]string{"", "started", "crashed", "host-down", "closed", "fatal", "paused", "resumed"}

// String is the trace text of the step.
func (s ProcessState) String() string { return textOf(processText[:], s) }

// Ended reports whether the step ends the process (crashed, host-down,
// closed, fatal); started, paused and resumed do not.
func (s ProcessState) Ended() bool {
	return s == ProcessCrashed || s == ProcessHostDown || s == ProcessClosed || s == ProcessFatal
}

// RebalanceReason is what made the coordinator start a rebalance
// (Event.Trigger of EvRebalanceStart): the classic GroupCoordinator's
// prepareRebalance reason or the consumer-group coordinator's group epoch
// bump; also the removal reasons the consumer-group coordinator bumps the
// epoch for.
type RebalanceReason uint8

const (
	RebalanceUnknown RebalanceReason = iota
	RebalanceJoin
	RebalanceLeave
	RebalanceSessionExpired
	RebalanceSyncTimeout
	RebalanceMetadata
	RebalanceCoordinatorFailover
	// RebalanceAppendError: the group record failed to append
	// (GroupCoordinator.onCompleteJoin's storeGroup callback).
	RebalanceAppendError
	// RebalanceDowngrade: an online downgrade handed the group to the
	// classic coordinator mid-rebalance.
	RebalanceDowngrade
	// RebalanceSubscription: a member's subscription changed (KIP-848; a
	// new member's first heartbeat).
	RebalanceSubscription
	RebalanceRebalanceTimeout
	RebalanceJoinTimeout
	// RebalanceFenced: a static member replaced (KIP-345, consumer group).
	RebalanceFenced
)

var rebalanceText = [...]string{"", "join", "leave", "session-expired", "sync-timeout", "metadata", "coordinator-failover",
	"append-error", "downgrade", "subscription", "rebalance-timeout", "join-timeout", "fenced"}

// String is the trace text of the reason.
func (r RebalanceReason) String() string { return textOf(rebalanceText[:], r) }

// Conversion is why the online migration (KIP-848) converted a group
// between the classic and the consumer protocol, or refused to
// (Event.Conversion of the harness's group-type event).
type Conversion uint8

const (
	ConversionNone Conversion = iota
	// ConversionUpgrade: a classic group became a consumer group at a
	// ConsumerGroupHeartbeat (GroupMetadataManager.convertToConsumerGroup).
	ConversionUpgrade
	// ConversionRefused: the upgrade was refused (Detail: Kafka's reason).
	ConversionRefused
	// ConversionGroupRecreated: an empty classic group was deleted and a
	// consumer group created in its place: a new group, epochs from 1.
	ConversionGroupRecreated
	// ConversionClassicJoinToEmpty: a classic JoinGroup to an empty
	// consumer group made it classic.
	ConversionClassicJoinToEmpty
	// ConversionDowngrade: the last consumer-protocol member left a group
	// of classic members (convertToClassicGroup).
	ConversionDowngrade
	// ConversionDowngradeStaticReplacement: the same, by a static member's
	// replacement, without a rebalance.
	ConversionDowngradeStaticReplacement
)

var conversionText = [...]string{"", "upgrade", "refused", "empty-classic-group-deleted", "classic-join-to-empty", "downgrade", "downgrade-static-replacement"}

// String is the trace text of the conversion.
func (c Conversion) String() string { return textOf(conversionText[:], c) }

// ToConsumer reports whether the conversion made the group a consumer group.
func (c Conversion) ToConsumer() bool {
	return c == ConversionUpgrade || c == ConversionGroupRecreated
}

// Revocation is how a member gave partitions up (Event.Revocation of
// EvRevoked): ConsumerRebalanceListener.onPartitionsRevoked (Detail
// "revoked") or onPartitionsLost (Detail "lost"); LostOnFatal is the
// classic client's onPartitionsLost at a fatal error (Reason "fatal").
type Revocation uint8

const (
	RevocationNone Revocation = iota
	Revoked
	Lost
	LostOnFatal
)

var revocationText = [...]string{"", "revoked", "lost", "lost"}

// String is the event's Detail text.
func (r Revocation) String() string { return textOf(revocationText[:], r) }

// LeaveRequest is whether maybeLeaveGroup sent its LeaveGroup
// (Event.LeaveRequest of EvLeave, Detail): a static member, or one that
// never joined, sends none (classic: "not-sent"); the KIP-848 client skips
// it without a known coordinator ("skipped").
type LeaveRequest uint8

const (
	LeaveRequestNone LeaveRequest = iota
	LeaveSent
	LeaveNotSent
	LeaveSkipped
)

var leaveRequestText = [...]string{"", "sent", "not-sent", "skipped"}

// String is the event's Detail text.
func (l LeaveRequest) String() string { return textOf(leaveRequestText[:], l) }

func textOf[T ~uint8](text []string, v T) string {
	if int(v) < len(text) {
		return text[v]
	}
	return "unknown"
}

// parse is the value whose text is s (zero: none).
func parse[T ~uint8](text []string, s string) T {
	for i, t := range text {
		if t == s {
			return T(i)
		}
	}
	return 0
}

// TypeText sets an event's typed state or trigger from the text a model
// wrote (State of EvGroupState and EvMemberState, Reason of
// EvRebalanceStart and EvMemberAdded, Detail of EvRevoked and EvLeave):
// the one place trace text becomes a type. The models'
// own enums (classic/coordinator.GroupState, classic/client.MemberState,
// consumer/client.State, consumer/coordinator's GroupState and MemberState)
// have exactly these names.
func TypeText(e *Event) {
	switch e.Kind {
	case EvGroupState:
		e.GroupState = parse[GroupState](groupStateText[:], e.State)
	case EvMemberState:
		e.MemberState = parse[MemberState](memberStateText[:], e.State)
	case EvRebalanceStart:
		e.Trigger = parse[RebalanceReason](rebalanceText[:], e.Reason)
	case EvMemberAdded:
		e.Conversion = parse[Conversion](conversionText[:], e.Reason)
	case EvRevoked:
		e.Revocation = parse[Revocation](revocationText[:3], e.Detail)
		if e.Revocation == Lost && e.Reason == "fatal" {
			e.Revocation = LostOnFatal
		}
	case EvLeave:
		e.LeaveRequest = parse[LeaveRequest](leaveRequestText[:], e.Detail)
	case EvRejoinRequested, EvCoordinatorDead, EvCoordinatorFound, EvGenerationReset,
		EvJoined, EvAssigned, EvPollTimeout, EvRequestTimeout, EvFatal, EvAssertFailed,
		EvMemberRemoved, EvGenerationComplete, EvGroupPersisted, EvConnect, EvConnected,
		EvDisconnected:
		// Their text is a free-form reason or detail, not one of the vocabulary's
		// names: nothing to type. Listed, so a new kind must choose.
	}
}
