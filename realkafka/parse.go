package realkafka

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LogLine is one line of a broker or client log written with the testbed's
// patterns: log4j2 "%d{UNIX_MILLIS} %p [%t] %c %m" (4.x brokers, every
// client) or reload4j "%d{yyyy-MM-dd HH:mm:ss,SSS} %p [%t] %c %m" in UTC
// (3.x brokers; reload4j has no epoch-ms pattern).
type LogLine struct {
	TsMs   int64
	Level  string
	Thread string
	Logger string
	Msg    string
}

// ParseLogLine splits a log line; ok is false for continuation lines (stack
// traces) and anything else.
func ParseLogLine(s string) (LogLine, bool) {
	var l LogLine
	rest := s
	if len(s) > 24 && s[4] == '-' && s[10] == ' ' && s[19] == ',' {
		t, err := time.Parse("2006-01-02 15:04:05,000", s[:23])
		if err != nil {
			return l, false
		}
		l.TsMs = t.UnixMilli()
		rest = s[24:]
	} else {
		sp := strings.IndexByte(s, ' ')
		if sp < 10 {
			return l, false
		}
		ts, err := strconv.ParseInt(s[:sp], 10, 64)
		if err != nil {
			return l, false
		}
		l.TsMs = ts
		rest = s[sp+1:]
	}
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return l, false
	}
	l.Level, rest = rest[:sp], rest[sp+1:]
	if !strings.HasPrefix(rest, "[") {
		return l, false
	}
	end := strings.Index(rest, "] ")
	if end < 0 {
		return l, false
	}
	l.Thread, rest = rest[1:end], rest[end+2:]
	sp = strings.IndexByte(rest, ' ')
	if sp < 0 {
		return l, false
	}
	l.Logger, l.Msg = rest[:sp], rest[sp+1:]
	return l, true
}

// BrokerKind is what a broker line says about a group.
type BrokerKind int

const (
	BrokerNone BrokerKind = iota
	BrokerPreparing
	BrokerStabilized
	BrokerStable // the leader's assignment received: the group is Stable
	BrokerEmpty
	BrokerEvicted // session expiry, pending-member expiry
	BrokerNotRejoined
	BrokerLeave
	BrokerFenced
	BrokerElected
	BrokerResigned
	BrokerEpochBump // consumer protocol
	BrokerConsumerFenced
	BrokerConsumerLeave
	BrokerConsumerMember // DEBUG "new assignment state"
	BrokerConsumerJoin
	BrokerTargetAssignment
	BrokerLoaded // the new coordinator finished loading __consumer_offsets-p
	// BrokerMemberCreated: a classic member's first JoinGroup (no member
	// id) reached the coordinator, which made its member id.
	BrokerMemberCreated
)

// BrokerEvent is one parsed broker line.
type BrokerEvent struct {
	TsMs      int64
	Kind      BrokerKind
	Group     string
	Gen       int32
	Member    string   // member id
	Members   []string // BrokerNotRejoined, sync-timeout removals
	Reason    string   // Preparing: the (reason: …) text; fences: the cause
	Partition int32    // Elected/Resigned: __consumer_offsets partition
	State     string
	// BrokerConsumerMember: the member's assigned partitions after the
	// line ("topicId-p", their "@partition-epoch" suffix left out), sorted.
	Assigned []string
	// TookMs: BrokerTargetAssignment's assignor time ("… assignor in Nms",
	// GroupMetadataManager.updateTargetAssignment @v8.0.0), -1 when the
	// line has none.
	TookMs int64
}

// The broker lines (docs/real-kafka-testbed.md §2; Scala
// core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala@v7.9.0,
// Java group-coordinator/.../GroupMetadataManager.java@v8.0.0 and @v8.3.0).
var (
	rePreparing = regexp.MustCompile(`Preparing to rebalance group (\S+) in state (\S+) with old generation (\d+)(?: \(__consumer_offsets-\d+\))? \(reason: (.*)\)\.?$`)
	// Scala :1576 "Stabilized group G generation N (__consumer_offsets-p) with S members"; Java :4948 "… with S members."
	reStabilized = regexp.MustCompile(`Stabilized group (\S+) generation (\d+)`)
	reEmpty      = regexp.MustCompile(`Group (\S+) with generation (\d+) is now empty`)
	reAssignment = regexp.MustCompile(`Assignment received from leader (\S+) for group (\S+) for generation (\d+)`)
	reFailed     = regexp.MustCompile(`Member (\S+) in group (\S+) has failed, removing it from the group`)
	rePending    = regexp.MustCompile(`Pending member (\S+) in group (\S+) has been removed after session timeout expiration`)
	reNotJoined  = regexp.MustCompile(`Group (\S+) removed dynamic members who haven't joined: (.*)$`)
	// Scala :661 "Member ${MemberMetadata} has left group G through explicit `LeaveGroup`; client reason: r"
	reLeaveScala = regexp.MustCompile("Member (.*) has left group (\\S+) through explicit `LeaveGroup`; client reason: (.*)$")
	// Java :6320 "[Group G] Member M has left group through explicit `LeaveGroup` request; client reason: r"
	reLeaveJava     = regexp.MustCompile("\\[Group (\\S+)\\] Member (\\S+) has left group through explicit `LeaveGroup` request; client reason: (.*)$")
	reReplace       = regexp.MustCompile(`joins group (\S+) in \S+ state\. Replacing previously mapped member (\S+) with this groupInstanceId`)
	reElected       = regexp.MustCompile(`Elected as the group coordinator for partition (\d+)`)
	reResigned      = regexp.MustCompile(`Resigned as the group coordinator for partition (\d+)`)
	reLoading       = regexp.MustCompile(`Scheduling loading of metadata from __consumer_offsets-(\d+)`)
	reUnloading     = regexp.MustCompile(`Scheduling unloading of metadata for __consumer_offsets-(\d+)`)
	reEpochBump     = regexp.MustCompile(`\[GroupId (\S+)\] Bumped group epoch to (\d+)`)
	reCFenced       = regexp.MustCompile(`\[GroupId (\S+)\] Member (\S+) fenced from the group because (.*?)\.?$`)
	reCLeave        = regexp.MustCompile(`\[GroupId (\S+)\] Member (\S+) left the consumer group`)
	reCState        = regexp.MustCompile(`\[GroupId (\S+)\] Member (\S+) new assignment state: epoch=(\d+), previousEpoch=(-?\d+), state=(\S+),`)
	reCAssigned     = regexp.MustCompile(`assignedPartitions=\[([^\]]*)\]`)
	reCClassicLeave = regexp.MustCompile("\\[GroupId (\\S+)\\] (?:Dynamic|Static) member (\\S+) has left group through explicit `LeaveGroup` request")
	reCJoin         = regexp.MustCompile(`\[GroupId (\S+)\] Member (\S+) joins the consumer group`)
	reTarget        = regexp.MustCompile(`\[GroupId (\S+)\] Computed a new target assignment for epoch (\d+)`)
	reTargetTook    = regexp.MustCompile(`for epoch \d+ with '[^']*' assignor in (\d+)ms`)
	reMemberID      = regexp.MustCompile(`memberId=([^,)\s]+)`)
	// Scala GroupMetadataManager.doLoadGroupsAndOffsets @3.9.1: "Finished
	// loading offsets and group metadata from __consumer_offsets-0 in N
	// milliseconds for epoch E, …" [measured]; Java CoordinatorRuntime
	// @4.x: "Finished loading of metadata from __consumer_offsets-0 with
	// epoch E in Nms …".
	// Scala GroupCoordinator.doNewMemberJoinGroup @3.9.1: "Dynamic member
	// with unknown member id joins group G in S state. Created a new member
	// id M and request the member to rejoin with this id." [measured]; the
	// Java coordinator's classic path words it alike ("… and requesting …").
	reMemberCreated = regexp.MustCompile(`Dynamic member with unknown member id joins group (\S+) in \S+ state\. Created a new member id (\S+) and request`)
	reLoaded        = regexp.MustCompile(`Finished loading (?:offsets and group metadata|of metadata) from __consumer_offsets-(\d+)`)
	reSyncExpiry    = regexp.MustCompile(`Removing (.*) on pending sync request expiration`)
)

func atoi32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}

// memberList splits a printed collection of member ids ("[a, b]", "a,b",
// "Set(a, b)").
func memberList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "Set(")
	s = strings.Trim(s, "[]()")
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// assignedList reads the assignedPartitions of a "new assignment state"
// line ("Uuid-p@e, …" at 4.4.0, "Uuid-p, …" at 4.3.1: Utils.assignmentToString)
// as a sorted list of "Uuid-p"; an empty assignment is an empty, non-nil list.
func assignedList(s string) []string {
	out := []string{}
	for _, f := range memberList(s) {
		if i := strings.LastIndexByte(f, '@'); i >= 0 {
			f = f[:i]
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// ParseBroker reads one broker log line.
func ParseBroker(s string) (BrokerEvent, bool) {
	l, ok := ParseLogLine(s)
	if !ok {
		return BrokerEvent{}, false
	}
	e := BrokerEvent{TsMs: l.TsMs}
	m := l.Msg
	switch {
	case strings.Contains(m, "Preparing to rebalance group"):
		if g := rePreparing.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.State, e.Gen, e.Reason = BrokerPreparing, g[1], g[2], atoi32(g[3]), g[4]
			if x := reSyncExpiry.FindStringSubmatch(e.Reason); x != nil {
				e.Members = memberList(x[1])
			}
		}
	case strings.Contains(m, "Stabilized group"):
		if g := reStabilized.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Gen = BrokerStabilized, g[1], atoi32(g[2])
		}
	case strings.Contains(m, "is now empty"):
		if g := reEmpty.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Gen = BrokerEmpty, g[1], atoi32(g[2])
		}
	case strings.Contains(m, "Assignment received from leader"):
		if g := reAssignment.FindStringSubmatch(m); g != nil {
			e.Kind, e.Member, e.Group, e.Gen = BrokerStable, g[1], g[2], atoi32(g[3])
		}
	case strings.Contains(m, "has failed, removing it from the group"):
		if g := reFailed.FindStringSubmatch(m); g != nil {
			e.Kind, e.Member, e.Group, e.Reason = BrokerEvicted, g[1], g[2], "session"
		}
	case strings.Contains(m, "has been removed after session timeout expiration"):
		if g := rePending.FindStringSubmatch(m); g != nil {
			e.Kind, e.Member, e.Group, e.Reason = BrokerEvicted, g[1], g[2], "pending-session"
		}
	case strings.Contains(m, "removed dynamic members who haven't joined"):
		if g := reNotJoined.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Members = BrokerNotRejoined, g[1], memberList(g[2])
		}
	case strings.Contains(m, "through explicit `LeaveGroup`"):
		// A classic member leaving a consumer group (after an online
		// upgrade): "[GroupId G] Dynamic member M has left group through
		// explicit `LeaveGroup` request; client reason: r" [measured: broker
		// 4.3.1, the classic → consumer rolling restart].
		if g := reCClassicLeave.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member = BrokerConsumerLeave, g[1], g[2]
		} else if g := reLeaveJava.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member, e.Reason = BrokerLeave, g[1], g[2], g[3]
		} else if g := reLeaveScala.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Reason = BrokerLeave, g[2], g[3]
			e.Member = g[1]
			if x := reMemberID.FindStringSubmatch(g[1]); x != nil {
				e.Member = x[1]
			}
		}
	case strings.Contains(m, "Replacing previously mapped member"):
		if g := reReplace.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member = BrokerFenced, g[1], g[2]
		}
	case strings.Contains(m, "group coordinator for partition"):
		if g := reElected.FindStringSubmatch(m); g != nil {
			e.Kind, e.Partition = BrokerElected, atoi32(g[1])
		} else if g := reResigned.FindStringSubmatch(m); g != nil {
			e.Kind, e.Partition = BrokerResigned, atoi32(g[1])
		}
	case strings.Contains(m, "Created a new member id"):
		if g := reMemberCreated.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member = BrokerMemberCreated, g[1], g[2]
		}
	case strings.Contains(m, "Finished loading"):
		if g := reLoaded.FindStringSubmatch(m); g != nil {
			e.Kind, e.Partition = BrokerLoaded, atoi32(g[1])
		}
	case strings.Contains(m, "loading of metadata"):
		if g := reLoading.FindStringSubmatch(m); g != nil {
			e.Kind, e.Partition = BrokerElected, atoi32(g[1])
		} else if g := reUnloading.FindStringSubmatch(m); g != nil {
			e.Kind, e.Partition = BrokerResigned, atoi32(g[1])
		}
	case strings.Contains(m, "Bumped group epoch to"):
		if g := reEpochBump.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Gen = BrokerEpochBump, g[1], atoi32(g[2])
		}
	case strings.Contains(m, "fenced from the group because"):
		if g := reCFenced.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member, e.Reason = BrokerConsumerFenced, g[1], g[2], g[3]
		}
	case strings.Contains(m, "left the consumer group"):
		if g := reCLeave.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member = BrokerConsumerLeave, g[1], g[2]
		}
	case strings.Contains(m, "joins the consumer group"):
		if g := reCJoin.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member = BrokerConsumerJoin, g[1], g[2]
		}
	case strings.Contains(m, "Computed a new target assignment"):
		if g := reTarget.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Gen, e.TookMs = BrokerTargetAssignment, g[1], atoi32(g[2]), -1
			if t := reTargetTook.FindStringSubmatch(m); t != nil {
				e.TookMs, _ = strconv.ParseInt(t[1], 10, 64)
			}
		}
	case strings.Contains(m, "new assignment state"):
		if g := reCState.FindStringSubmatch(m); g != nil {
			e.Kind, e.Group, e.Member, e.Gen, e.State = BrokerConsumerMember, g[1], g[2], atoi32(g[3]), g[5]
			if a := reCAssigned.FindStringSubmatch(m); a != nil {
				e.Assigned = assignedList(a[1])
			}
		}
	}
	return e, e.Kind != BrokerNone
}

// ClientKind is what a client line says.
type ClientKind int

const (
	ClientNone ClientKind = iota
	ClientCoordinatorFound
	ClientDeadMark
	ClientPollTimeout
	ClientLeaveSent
	ClientJoining
	ClientSynced
	ClientTransition // consumer protocol member state
	// DEBUG (clientDebug): the classic heartbeat thread's request and its
	// successful response (AbstractCoordinator.sendHeartbeatRequest,
	// HeartbeatResponseHandler @3.9.1, @4.4.0, @2.8.2).
	ClientHeartbeatSent
	ClientHeartbeatOK
	// The client learns that the group rebalances: "Request joining group
	// due to: group is already rebalancing" (3.x/4.x requestRejoin from the
	// heartbeat's REBALANCE_IN_PROGRESS [measured, 3.9.1]), "Attempt to
	// heartbeat failed since group is rebalancing" (2.8); Cause: the reason.
	ClientRejoinRequested
	ClientSyncOK // DEBUG "Received successful SyncGroup response"
)

// ClientEvent is one parsed client line.
type ClientEvent struct {
	TsMs   int64
	Kind   ClientKind
	Broker string // coordinator "host:port (id: …)"
	Cause  string
	Member string
	Gen    int32
	From   string
	To     string
}

// The client lines (docs/real-kafka-testbed.md §3.1;
// clients/.../internals/AbstractCoordinator.java @2.8.2, @v7.9.0, @v8.0.0,
// @v8.3.0; AbstractMembershipManager.java@v8.0.0).
var (
	reFound = regexp.MustCompile(`Discovered group coordinator (\S+)`)
	// 4.x consumer protocol (CoordinatorRequestManager) prints the
	// FindCoordinator answer: "Coordinator(key='g', nodeId=1, host='10.77.0.2', port=9092, …)" [measured, 4.3.1].
	reFoundCoord = regexp.MustCompile(`host='([^']+)', port=(\d+)`)
	// 2.8: "…due to cause: C.isDisconnected: B. Rediscovery…"; 3.x/4.x "…cause: C. isDisconnected: B. …";
	// consumer protocol (CoordinatorRequestManager): "…due to cause: C. Rediscovery will be attempted."
	reDead       = regexp.MustCompile(`Group coordinator (\S+).*? is unavailable or invalid due to cause: (.*?)\.\s?(?:isDisconnected: (\w+)\. )?Rediscovery will be attempted`)
	reLeaveSent  = regexp.MustCompile(`Member (\S+) sending LeaveGroup request to coordinator .* due to (.*)$`)
	reSynced     = regexp.MustCompile(`Successfully synced group in generation Generation\{generationId=(-?\d+)`)
	reTransition = regexp.MustCompile(`Member (\S+) with epoch (-?\d+) transitioned from (\S+) to (\S+)\.`)
)

// ParseClient reads one client log line.
func ParseClient(s string) (ClientEvent, bool) {
	l, ok := ParseLogLine(s)
	if !ok {
		return ClientEvent{}, false
	}
	e := ClientEvent{TsMs: l.TsMs}
	m := l.Msg
	switch {
	case strings.Contains(m, "Discovered group coordinator"):
		if g := reFoundCoord.FindStringSubmatch(m); g != nil {
			e.Kind, e.Broker = ClientCoordinatorFound, g[1]+":"+g[2]
		} else if g := reFound.FindStringSubmatch(m); g != nil {
			e.Kind, e.Broker = ClientCoordinatorFound, g[1]
		}
	case strings.Contains(m, "is unavailable or invalid due to cause"):
		if g := reDead.FindStringSubmatch(m); g != nil {
			e.Kind, e.Broker, e.Cause = ClientDeadMark, g[1], g[2]
		}
	case strings.Contains(strings.ToLower(m), "consumer poll timeout has expired. this means"):
		e.Kind = ClientPollTimeout
	case strings.Contains(m, "sending LeaveGroup request"):
		if g := reLeaveSent.FindStringSubmatch(m); g != nil {
			e.Kind, e.Member, e.Cause = ClientLeaveSent, g[1], g[2]
		}
	case strings.HasPrefix(clientMsg(m), "Sending Heartbeat request"):
		e.Kind = ClientHeartbeatSent
	case strings.HasPrefix(clientMsg(m), "Received successful Heartbeat response"):
		e.Kind = ClientHeartbeatOK
	case strings.HasPrefix(clientMsg(m), "Received successful SyncGroup response"):
		e.Kind = ClientSyncOK
	case strings.Contains(m, "Request joining group due to: "):
		e.Kind, e.Cause = ClientRejoinRequested, m[strings.Index(m, "Request joining group due to: ")+len("Request joining group due to: "):]
	case strings.Contains(m, "failed since group is rebalancing"):
		e.Kind, e.Cause = ClientRejoinRequested, "group is already rebalancing"
	case strings.HasSuffix(m, "(Re-)joining group"):
		e.Kind = ClientJoining
	case strings.Contains(m, "Successfully synced group"):
		if g := reSynced.FindStringSubmatch(m); g != nil {
			e.Kind, e.Gen = ClientSynced, atoi32(g[1])
		}
	case strings.Contains(m, "transitioned from"):
		if g := reTransition.FindStringSubmatch(m); g != nil {
			e.Kind, e.Member, e.Gen, e.From, e.To = ClientTransition, g[1], atoi32(g[2]), g[3], g[4]
		}
	}
	return e, e.Kind != ClientNone
}

// clientMsg is a client message without its "[Consumer clientId=…, groupId=…] "
// prefix.
func clientMsg(m string) string {
	if strings.HasPrefix(m, "[") {
		if i := strings.Index(m, "] "); i >= 0 {
			return m[i+2:]
		}
	}
	return m
}

// DriverEvent is one line the driver printed (realkafka/java/Driver.java).
type DriverEvent struct {
	TsMs       int64    `json:"ts_ms"`
	Member     string   `json:"member"`
	Pid        int      `json:"pid"`
	Event      string   `json:"event"`
	AtMs       int64    `json:"at_ms"` // jvm_start: the JVM's start instant
	Generation int32    `json:"generation"`
	MemberID   string   `json:"member_id"`
	Partitions []string `json:"partitions"`
	Name       string   `json:"name"`  // metric
	Value      float64  `json:"value"` // metric
	Class      string   `json:"class"` // fatal
	Message    string   `json:"message"`
}
