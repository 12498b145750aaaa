package coordinator

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// The group-record append: GroupMetadataManager.storeGroup →
// appendForGroup → ReplicaManager.appendRecords(acks=all, timeout =
// offsets.commit.timeout.ms) and its callback. Three callers append:
//
//   - doSyncGroup (the leader's SyncGroup in CompletingRebalance): the
//     callback stores the assignments, answers every parked SyncGroup and
//     moves to Stable — only if the group is still CompletingRebalance in
//     the same generation; otherwise it does nothing (the parked members were
//     answered by whatever moved the group on). On error: the parked members
//     get the mapped error and maybePrepareRebalance.
//   - updateStaticMemberAndRebalance (a static restart in Stable, 2.7+): the
//     callback answers the restart's JoinGroup, or on error reverts the
//     replacement and answers the error.
//   - onCompleteJoin (the group became Empty): fire-and-forget, an error is
//     only logged.
//
// An append is modelled as a timer (tkAppend) in the broker's heap; while it
// is outstanding the group is left exactly as Kafka leaves it (parked
// SyncGroups stay parked, their members count as alive, a heartbeat still
// counts). The record reaches out.Persist only when the append completes
// successfully, so a failover while an append is outstanding loads the last
// completed record (Resign drops outstanding appends).

// appendKind tells which storeGroup caller an append completes.
type appendKind uint8

const (
	appendSync   appendKind = iota // doSyncGroup, the leader's assignment
	appendStatic                   // updateStaticMemberAndRebalance in Stable (2.7+)
	appendEmpty                    // onCompleteJoin, the group became Empty
)

// reasonAppendError is the EvRebalanceStart reason of a rebalance started
// by a failed SyncGroup append.
const reasonAppendError = "append-error"

// appendOp is one outstanding storeGroup: the record and what its callback
// closes over in Scala.
type appendOp struct {
	kind  appendKind
	rec   GroupRecord        // written when the append completes successfully
	gen   int32              // the group's generation at storeGroup
	errc  protocol.ErrorCode // the raw log-append error (None: success)
	timer timer              // completion (tkAppend); unarmed when synchronous

	// appendSync: the leader's assignment (missing members filled).
	assignment map[string]protocol.Assignment

	// appendStatic: the replaced member and what a revert restores.
	m              *member
	oldID, newID   string
	currentLeader  string // group.leaderOrNull before the replacement
	skipSupported  bool   // KIP-814 supportSkippingAssignment
	oldConfig      *MemberConfig
	oldClientIDLen int32
	joinConn       Conn // the restart's JoinGroup (responseCallback)
	joinCorr       uint64
}

// storeGroup mirrors GroupMetadataManager.storeGroup: draw the append's
// latency and outcome; complete it at once when the latency is zero and no
// earlier append of the group is outstanding (the synchronous behaviour of
// a zero-latency configuration), else arm its completion. Appends of one
// group complete in order: the log of its __consumer_offsets partition is
// ordered, so a record cannot be committed before the one appended ahead
// of it.
func (b *Broker) storeGroup(now protocol.Instant, g *group, op *appendOp, out *Output) {
	op.gen = g.generation
	// With the Java coordinator's append linger the record waits in the
	// open batch until its flush (linger.go); the append starts then.
	flush := b.batchFlush(now, g)
	wait := time.Duration(flush - now)
	d, errc := b.drawAppend(g, &op.rec, wait)
	op.errc = errc
	n := len(g.log.appends)
	if d == 0 && n == 0 && wait == 0 {
		b.completeAppend(now, g, op, out)
		return
	}
	at := flush.Add(d)
	if n > 0 {
		at = max(at, g.log.appends[n-1].timer.at)
	}
	op.timer = timer{id: -1, kind: tkAppend, g: g}
	g.log.appends = append(g.log.appends, op)
	b.schedule(&op.timer, at)
}

// drawAppend draws one append's latency and raw error (in this order, so a
// configuration without errors draws the same latencies). Deviation: Kafka
// answers NOT_ENOUGH_REPLICAS at once (the leader rejects the write) and
// the others after some wait; here every outcome arrives after the drawn
// latency. A latency over offsets.commit.timeout.ms is the DelayedProduce
// expiring: REQUEST_TIMED_OUT at the timeout. wait is the time the record
// spends in the open batch before the append starts (the Java
// coordinator's linger); the timeout counts from the write, wait included
// (the write event's offsets.commit.timeout.ms).
func (b *Broker) drawAppend(g *group, rec *GroupRecord, wait time.Duration) (time.Duration, protocol.ErrorCode) {
	var d time.Duration
	if b.cfg.AppendLatency != nil {
		d = max(b.cfg.AppendLatency.Draw(b.cfg.Rand), 0)
	}
	if bw := b.cfg.AppendBytesPerSecond; bw > 0 {
		d += time.Duration(recordSize(g, rec) * int64(time.Second) / bw)
	}
	errc := protocol.None
	if p := b.cfg.AppendErrorProbability; p > 0 && b.cfg.Rand.Float64() < p {
		errc = b.cfg.AppendError
	}
	if t := b.cfg.AppendTimeout; t > 0 && wait+d > t {
		// Deviation: a timed-out append is in the leader's log and may
		// still be committed later; here it is never persisted.
		d, errc = max(t-wait, 0), protocol.RequestTimedOut
	}
	return d, errc
}

// onAppendTimer fires the group's oldest outstanding append (appends
// complete in order, and equal deadlines fire in arming order, so it is
// always the head).
func (b *Broker) onAppendTimer(now protocol.Instant, t *timer, out *Output) {
	g := t.g
	check(len(g.log.appends) > 0 && &g.log.appends[0].timer == t, "onAppendTimer: not the oldest append")
	op := g.log.appends[0]
	g.log.appends[0] = nil
	g.log.appends = g.log.appends[1:]
	b.completeAppend(now, g, op, out)
}

// completeAppend runs storeGroup's putCacheCallback: a successful append
// is persisted (out.Persist), then the caller's callback runs with the
// mapped error.
func (b *Broker) completeAppend(now protocol.Instant, g *group, op *appendOp, out *Output) {
	if op.errc == protocol.None {
		b.persist(g, op.rec, out)
	}
	errc := b.mapAppendError(op.errc)
	switch op.kind {
	case appendSync:
		b.onSyncGroupStored(now, g, op, errc, out)
	case appendStatic:
		b.onStaticMemberStored(now, g, op, errc, out)
	case appendEmpty:
		// onCompleteJoin's callback only logs a failure ("the previous
		// generation written to the log will become active again").
	}
}

// onSyncGroupStored is doSyncGroup's storeGroup callback (3.6.1): only if
// the group is still CompletingRebalance in the generation of the
// SyncGroup; otherwise another member joined or left meanwhile and the
// callback does nothing.
func (b *Broker) onSyncGroupStored(now protocol.Instant, g *group, op *appendOp, errc protocol.ErrorCode, out *Output) {
	if g.state != CompletingRebalance || g.generation != op.gen {
		return
	}
	if errc != protocol.None {
		b.resetAndPropagateAssignmentError(now, g, errc, out)
		b.maybePrepareRebalance(now, g, reasonAppendError, out)
		return
	}
	b.setAndPropagateAssignment(now, g, op.assignment, out)
	b.becomeStable(g, out)
}

// onStaticMemberStored is updateStaticMemberAndRebalance's storeGroup
// callback (2.7+; KIP-814 branch 3.2+). Like Kafka it does not look at the
// group state: a rebalance that started meanwhile does not stop it.
func (b *Broker) onStaticMemberStored(now protocol.Instant, g *group, op *appendOp, errc protocol.ErrorCode, out *Output) {
	m := op.m
	if errc == protocol.None {
		if g.byID[m.id] != m {
			// Deviation: the member was removed while its JoinGroup was
			// parked (only the 2.6+ group.max.size removal does that);
			// Kafka would still invoke the removed object's callback.
			return
		}
		leader, skip := op.currentLeader, false
		if op.skipSupported {
			// v9+: the current leader id; the leader gets the member list
			// and skipAssignment.
			leader = g.leader
			skip = g.leader == op.newID
		}
		resp := b.joinResult(g, m, leader, skip, skip)
		// JoinGroupResult(memberId = newMemberId): if the instance restarted
		// again meanwhile, Kafka answers the newer restart with this id.
		resp.MemberID = op.newID
		b.maybeInvokeJoinCallback(m, resp, out)
		return
	}
	if g.byID[op.newID] != m {
		// Deviation: the instance restarted again, or the member was
		// removed, meanwhile; Kafka's revert throws
		// IllegalArgumentException in replaceStaticMember (after dropping
		// the member's parked JoinGroup callback) and answers nothing.
		return
	}
	// group.updateMember(member, oldProtocols, oldRebalanceTimeoutMs,
	// oldSessionTimeoutMs, callback = null): the parked JoinGroup is dropped.
	parked := m.awaitingJoin && m.joinConn == op.joinConn && m.joinCorr == op.joinCorr
	g.setConfig(m, op.oldConfig)
	if m.awaitingJoin {
		m.awaitingJoin = false
		g.numAwaitingJoin--
		check(g.numAwaitingJoin >= 0, "onStaticMemberStored: numAwaitingJoin < 0")
	}
	b.replaceStaticMember(g, m, op.oldID, "", out)
	m.clientIDLen = op.oldClientIDLen
	b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
	if !parked {
		// Deviation: the restart's JoinGroup was already answered (a
		// rebalance completed meanwhile); Kafka would answer it again.
		return
	}
	b.reply(out, op.joinConn, op.joinCorr, &protocol.JoinGroupResponse{Error: errc, GenerationID: g.generation,
		ProtocolType: g.protocolType, ProtocolName: g.protocolName, Leader: op.currentLeader,
		MemberID: protocol.UnknownMemberIDValue})
}

// dropAppends discards the group's outstanding appends at resignation:
// nothing is persisted (the next coordinator loads the last completed
// record). Kafka completes the outstanding DelayedProduce with
// NOT_LEADER_OR_FOLLOWER (→ NOT_COORDINATOR) when the partition's
// leadership moves, just before onResignation. For a SyncGroup append that
// callback answers the parked SyncGroups NOT_COORDINATOR, which Resign does
// anyway; for a static restart it answers the parked JoinGroup
// NOT_COORDINATOR, modelled here (the revert is moot: the group is
// unloaded).
func (b *Broker) dropAppends(g *group, out *Output) {
	for i, op := range g.log.appends {
		b.cancel(&op.timer)
		g.log.appends[i] = nil
		if op.kind != appendStatic {
			continue
		}
		m := op.m
		if g.byID[op.newID] != m || !m.awaitingJoin || m.joinConn != op.joinConn || m.joinCorr != op.joinCorr {
			continue
		}
		b.maybeInvokeJoinCallback(m, &protocol.JoinGroupResponse{Error: protocol.NotCoordinator,
			GenerationID: g.generation, ProtocolType: g.protocolType, ProtocolName: g.protocolName,
			Leader: op.currentLeader, MemberID: protocol.UnknownMemberIDValue}, out)
	}
	g.log.appends = g.log.appends[:0]
}

// mapAppendError maps a raw log-append error to the error a caller sees:
// Scala's storeGroup mapping (mapAppendError) or, for the Java coordinator
// (4.x), GroupMetadataManager.appendGroupMetadataErrorToResponseError
// (v8.0.0 5839-5858, unchanged to v8.3.0; every classic-group append
// callback uses it): REQUEST_TIMED_OUT → COORDINATOR_NOT_AVAILABLE (Scala:
// REBALANCE_IN_PROGRESS), and NOT_ENOUGH_REPLICAS_AFTER_APPEND, not in its
// list, passes through unchanged (Scala: COORDINATOR_NOT_AVAILABLE).
func (b *Broker) mapAppendError(e protocol.ErrorCode) protocol.ErrorCode {
	if !b.feat.javaClassic {
		return mapAppendError(e)
	}
	switch e {
	case protocol.UnknownTopicOrPartition, protocol.NotEnoughReplicas, protocol.RequestTimedOut:
		return protocol.CoordinatorNotAvailable
	case protocol.NotLeaderOrFollower, protocol.KafkaStorageError:
		return protocol.NotCoordinator
	case protocol.UnknownServerError, protocol.None, protocol.NetworkException, protocol.CoordinatorLoadInProgress,
		protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.IllegalGeneration,
		protocol.InconsistentGroupProtocol, protocol.InvalidGroupID, protocol.UnknownMemberID,
		protocol.InvalidSessionTimeout, protocol.RebalanceInProgress, protocol.InvalidCommitOffsetSize,
		protocol.GroupAuthorizationFailed, protocol.UnsupportedVersion, protocol.MemberIDRequired,
		protocol.GroupMaxSizeReached, protocol.FencedInstanceID, protocol.GroupIDNotFound,
		protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		return e // passes through unchanged
	}
	return e
}

// mapAppendError mirrors storeGroup's putCacheCallback error mapping
// (GroupMetadataManagerTest.testStoreGroupErrorMapping). MESSAGE_TOO_LARGE,
// RECORD_LIST_TOO_LARGE and INVALID_FETCH_SIZE (→ UNKNOWN_SERVER_ERROR) are
// not in protocol.ErrorCode and never drawn; any other code passes through.
func mapAppendError(e protocol.ErrorCode) protocol.ErrorCode {
	switch e {
	case protocol.None:
		return protocol.None
	case protocol.UnknownTopicOrPartition, protocol.NotEnoughReplicas, protocol.NotEnoughReplicasAfterAppend:
		return protocol.CoordinatorNotAvailable
	case protocol.NotLeaderOrFollower, protocol.KafkaStorageError:
		return protocol.NotCoordinator
	case protocol.RequestTimedOut:
		return protocol.RebalanceInProgress
	case protocol.UnknownServerError, protocol.NetworkException, protocol.CoordinatorLoadInProgress,
		protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.IllegalGeneration,
		protocol.InconsistentGroupProtocol, protocol.InvalidGroupID, protocol.UnknownMemberID,
		protocol.InvalidSessionTimeout, protocol.RebalanceInProgress, protocol.InvalidCommitOffsetSize,
		protocol.GroupAuthorizationFailed, protocol.UnsupportedVersion, protocol.MemberIDRequired,
		protocol.GroupMaxSizeReached, protocol.FencedInstanceID, protocol.GroupIDNotFound, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		return e
	}
	return e
}

// isLogAppendError reports whether e is one of the log-append errors
// storeGroup maps (the values Config.AppendError accepts).
func isLogAppendError(e protocol.ErrorCode) bool {
	switch e {
	case protocol.UnknownTopicOrPartition, protocol.NotEnoughReplicas, protocol.NotEnoughReplicasAfterAppend,
		protocol.NotLeaderOrFollower, protocol.KafkaStorageError, protocol.RequestTimedOut:
		return true
	case protocol.None, protocol.UnknownServerError, protocol.NetworkException, protocol.CoordinatorLoadInProgress,
		protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.IllegalGeneration,
		protocol.InconsistentGroupProtocol, protocol.InvalidGroupID, protocol.UnknownMemberID,
		protocol.InvalidSessionTimeout, protocol.RebalanceInProgress, protocol.InvalidCommitOffsetSize,
		protocol.GroupAuthorizationFailed, protocol.UnsupportedVersion, protocol.MemberIDRequired,
		protocol.GroupMaxSizeReached, protocol.FencedInstanceID, protocol.GroupIDNotFound, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		return false
	}
	return false
}

// Size estimate constants (bytes).
const (
	// recordOverhead: a v2 RecordBatch header (61) plus one record's
	// length/attributes/delta/header fields (~10).
	recordOverhead = 71
	// clientHostLen: client_host, e.g. "/10.20.30.40".
	clientHostLen = 13
)

// recordSize estimates the serialized size of the group record append
// (GroupMetadataManager.groupMetadataKey + groupMetadataValue, value v3, in
// one uncompressed v2 batch):
//
//	batch+record overhead 71
//	key:   version 2 + group id (2+len)
//	value: version 2 + protocol type (2+len) + generation 4 + protocol
//	       (2+len) + leader (2+len) + current state timestamp 8 + member
//	       array length 4, then per member:
//	         member id, group instance id, client id (2+len each), client
//	         host (2+13), rebalance + session timeout 8,
//	         subscription bytes (4 + ConsumerProtocolSubscription v1+ of the
//	         selected protocol only: version 2, topics 4+Σ(2+len),
//	         user data 4+len, owned partitions 4+Σ per topic (2+len+4+4·n),
//	         generation 4),
//	         assignment bytes (4 + ConsumerProtocolAssignment: version 2,
//	         4+Σ per topic (2+len+4+4·n), user data 4+len).
//
// Partitions are grouped into topics by runs of equal topic names (the
// client sends them sorted). The rack id and tagged fields are ignored.
func recordSize(g *group, rec *GroupRecord) int64 {
	n := recordOverhead + 2 + 2 + len(rec.GroupID)
	n += 2 + 2 + len(rec.ProtocolType) + 4 + 2 + len(rec.ProtocolName) + 2 + len(rec.Leader) + 8 + 4
	for i := range rec.Members {
		mr := &rec.Members[i]
		n += 2 + len(mr.MemberID) + 2 + len(mr.GroupInstanceID) + 2 + 2 + clientHostLen + 8
		if m := g.byID[mr.MemberID]; m != nil {
			n += int(m.clientIDLen)
		}
		n += 4 + 2 + 4 + 4 + 4 // subscription: length, version, topic array, user data length, generation
		for j := range mr.Protocols {
			if mr.Protocols[j].Name != rec.ProtocolName {
				continue
			}
			s := &mr.Protocols[j].Metadata
			for _, t := range s.Topics {
				n += 2 + len(t)
			}
			n += len(s.UserData) + 4 + partitionsSize(s.OwnedPartitions)
			break
		}
		n += 4 + 2 + 4 + partitionsSize(mr.Assignment.Partitions) + 4 + len(mr.Assignment.UserData)
	}
	return int64(n)
}

// partitionsSize is the serialized size of a topic-partitions array's
// entries (without the array length): per topic 2+len(name) + 4 + 4·n.
func partitionsSize(ps []protocol.TopicPartition) int {
	n := 0
	for i := range ps {
		if i == 0 || ps[i].Topic != ps[i-1].Topic {
			n += 2 + len(ps[i].Topic) + 4
		}
		n += 4
	}
	return n
}
