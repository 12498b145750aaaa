package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// Two oracles for symptoms a crash never shows, so that exploration can
// tell a client bug from a fault (docs/OBSERVABILITY.md, "Oracles"):
//
//   - abandoned-member-id (KAFKA-13214, KAFKA-13419): a live process joins
//     the group under a new member id while the coordinator still holds the
//     id it joined with before — the client dropped its id (reset it to
//     UNKNOWN_MEMBER_ID) without leaving, so the old id lingers until it
//     expires one session timeout later (a dynamic member: an eviction of a
//     process that never died) or is fenced (a static member). A crash
//     differs: the new id belongs to a new process (the id joined before
//     the process started again); and so does a leave (a poll-timeout or
//     close leave: AbstractCoordinator.maybeLeaveGroup sends LeaveGroup
//     for a dynamic member, none for a static one, KIP-345, and resets the
//     id either way), so neither counts. Only ids the coordinator made members count: a
//     KIP-394 pending id whose MEMBER_ID_REQUIRED answer was lost is
//     Kafka's design, not a dropped id.
//   - sync-overrun (KAFKA-12890): the sync phase of a rebalance
//     (CompletingRebalance) is bounded by the rebalance timeout: from 2.8.1
//     the coordinator removes the members whose SyncGroup did not arrive
//     (GroupCoordinator.onExpirePendingSync), before 2.6.1 the session timer
//     of a member that does not heartbeat in CompletingRebalance did. The
//     oracle fires when a group stays in CompletingRebalance longer than its
//     members' largest rebalance timeout (max.poll.interval.ms) and session
//     timeout plus 10 s, at the coordinator that holds it (a failover or a
//     broker death ends the phase).

// syncOverrunSlack is the slack over the bound: a heartbeat round and the
// timer's lateness.
const syncOverrunSlack = 10 * time.Second

// idsState is the two oracles' state.
type idsState struct {
	addedAt   map[string]time.Duration // member id → when the coordinator added it
	startedAt map[string]time.Duration // process → when it last started
	leftAt    map[string]time.Duration // process → when it last left (maybeLeaveGroup)
	idsOf     map[string][]string      // process → the member ids the coordinators hold for it
	latest    map[string]string        // process → the member id last added for it
	knew      map[string]bool          // member id → its process got a JoinGroup answer while it was its latest
	syncSince map[string]time.Duration // group → in CompletingRebalance since (absent: not)
	syncBound map[string]time.Duration
	abandoned []Finding
	overrun   []Finding
	fired     map[string]bool // oracle + process or group: one finding each
}

func newIDsState(sc *scenario.Scenario) *idsState {
	s := &idsState{addedAt: map[string]time.Duration{}, startedAt: map[string]time.Duration{}, leftAt: map[string]time.Duration{}, idsOf: map[string][]string{},
		latest: map[string]string{}, knew: map[string]bool{},
		syncSince: map[string]time.Duration{}, syncBound: map[string]time.Duration{}, fired: map[string]bool{}}
	for i := range sc.Groups {
		c := &sc.Groups[i]
		b := max(c.Client.MaxPollInterval, sc.SessionTimeout(c)) + syncOverrunSlack
		s.syncBound[c.ID] = max(s.syncBound[c.ID], b)
	}
	return s
}

// observeIDs updates the two oracles with one trace event (called from
// oracleSet.observe before its own bookkeeping).
func (o *oracleSet) observeIDs(e *TraceEvent, at time.Duration) {
	s := o.ids
	switch e.Kind {
	case tracing.EvProcess:
		if e.Process == protocol.ProcessStarted {
			s.startedAt[e.Node] = at
		}
	case protocol.EvLeave:
		// maybeLeaveGroup ran: a dynamic member sends LeaveGroup, a static
		// one does not (KIP-345), and both reset their member id
		// (resetGenerationOnLeaveGroup): the client did its part.
		s.leftAt[e.Node] = at
	case protocol.EvJoined:
		// The JoinGroup answer reached the client: it knows its id.
		if id := s.latest[e.Node]; id != "" {
			s.knew[id] = true
		}
	case protocol.EvMemberAdded:
		proc := e.Detail
		if e.Conversion == protocol.ConversionUpgrade {
			// A classic member carried into the consumer group by an
			// online upgrade (GroupMetadataManager.convertToConsumerGroup):
			// the same id, not a join of the process now running.
			if !slices.Contains(s.idsOf[proc], e.Peer) {
				s.idsOf[proc] = append(s.idsOf[proc], e.Peer)
			}
			return
		}
		s.addedAt[e.Peer] = at
		s.latest[proc] = e.Peer
		if !slices.Contains(s.idsOf[proc], e.Peer) {
			s.idsOf[proc] = append(s.idsOf[proc], e.Peer)
		}
	case protocol.EvMemberRemoved:
		proc := o.owner[e.Peer]
		ids := s.idsOf[proc]
		s.idsOf[proc] = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == e.Peer })
		switch e.Removal {
		case protocol.RemovalSessionExpired, protocol.RemovalFenced:
		default:
			return
		}
		p := o.procs[proc]
		added, known := s.addedAt[e.Peer]
		if !slices.Contains(ids, e.Peer) {
			// Removed before, at an earlier coordinator: a coordinator that
			// loaded the group from the log holds ids removed since the
			// last write (Kafka's behaviour), and removes them again.
			return
		}
		if !s.knew[e.Peer] {
			// The answer that carried the id never reached the client (a
			// static member's JoinGroup answer lost to a broker's host
			// going down): it rejoins without an id, as Kafka's client must.
			return
		}
		if p == nil || !p.alive || !known || added < s.startedAt[proc] || s.leftAfter(proc, added) ||
			!o.cfg.Enabled(scenario.OracleAbandonedMemberID) {
			return // a dead or restarted process's id, or one it left with
		}
		var newer string
		for _, id := range ids {
			if id != e.Peer && s.addedAt[id] > added {
				newer = id
			}
		}
		if e.Removal == protocol.RemovalSessionExpired && newer == "" {
			return // the process simply stopped heartbeating (a pause, a partition)
		}
		k := scenario.OracleAbandonedMemberID + "\x00" + proc
		if s.fired[k] {
			return
		}
		s.fired[k] = true
		how := "fenced by its own rejoin without it (a static member)"
		if e.Removal == protocol.RemovalSessionExpired {
			how = "expired like a crashed member's while the process was in the group as " + newer
		}
		s.abandoned = append(s.abandoned, Finding{Oracle: scenario.OracleAbandonedMemberID, Group: e.Group, Node: proc,
			AtMs: int64(at / time.Millisecond),
			Message: humanf("%s dropped its member id %s (joined at %v; the process alive since %v, no leave): the id was %s",
				proc, e.Peer, added, s.startedAt[proc], how)})
	case protocol.EvGroupState:
		s.syncState(o, e.Group, e.GroupState == protocol.GroupCompletingRebalance, at)
	case tracing.EvBrokerProcess:
		if e.Process != protocol.ProcessStarted {
			for _, g := range o.groups {
				if g.coord == e.Node {
					s.syncState(o, g.id, false, at)
				}
			}
		}
	}
}

// leftAfter reports whether proc left the group (maybeLeaveGroup) after t.
func (s *idsState) leftAfter(proc string, t time.Duration) bool {
	at, ok := s.leftAt[proc]
	return ok && at >= t
}

// syncState records whether group is in CompletingRebalance from at on,
// judging the phase that ends.
func (s *idsState) syncState(o *oracleSet, group string, completing bool, at time.Duration) {
	since, in := s.syncSince[group]
	switch {
	case completing && !in:
		s.syncSince[group] = at
	case !completing && in:
		s.judgeSync(o, group, since, at)
		delete(s.syncSince, group)
	}
}

func (s *idsState) judgeSync(o *oracleSet, group string, since, at time.Duration) {
	bound := s.syncBound[group]
	k := scenario.OracleSyncOverrun + "\x00" + group
	if bound == 0 || at-since <= bound || s.fired[k] || !o.cfg.Enabled(scenario.OracleSyncOverrun) {
		return
	}
	s.fired[k] = true
	s.overrun = append(s.overrun, Finding{Oracle: scenario.OracleSyncOverrun, Group: group, AtMs: int64(at / time.Millisecond),
		Message: humanf("group %s stayed in CompletingRebalance for %v from %v (bound %v: the largest rebalance and session timeout + %v)",
			group, at-since, since, bound, syncOverrunSlack)})
}

// finishIDs judges an open sync phase at the end of the run and returns the
// two oracles' findings.
func (o *oracleSet) finishIDs(end time.Duration) []Finding {
	s := o.ids
	groups := make([]string, 0, len(s.syncSince))
	for _, g := range o.sc.GroupIDs() {
		if _, ok := s.syncSince[g]; ok {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		s.judgeSync(o, g, s.syncSince[g], end)
	}
	return append(append([]Finding(nil), s.abandoned...), s.overrun...)
}

// humanf is fmt.Sprintf with every time.Duration argument written as every
// view writes durations ("10.4 s", "250 ms"; internal/durfmt), so that an
// oracle's message never shows Go's "17.914595966s".
func humanf(format string, args ...any) string {
	for i, a := range args {
		if d, ok := a.(time.Duration); ok {
			args[i] = durfmt.Human(d)
		}
	}
	return fmt.Sprintf(format, args...)
}
