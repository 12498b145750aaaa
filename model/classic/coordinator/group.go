package coordinator

import (
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// member mirrors MemberMetadata.scala. The awaiting join/sync callbacks are
// the (Conn, Corr) of the parked request.
type member struct {
	id string
	// cfg is the group.instance.id, the session and rebalance timeouts and
	// the protocols, shared and replaced whole (Broker.config, setConfig):
	// one pointer a member instead of the values (memberSize).
	cfg        *MemberConfig
	assignment protocol.Assignment

	// The parked JoinGroup and SyncGroup (ordered for size: memberSize).
	joinConn Conn
	syncConn Conn
	joinCorr uint64
	syncCorr uint64
	// clientIDLen is the length of the member's client.id, all that the
	// group record's size (recordSize) needs of it.
	clientIDLen  int32
	joinVersion  int16
	awaitingJoin bool // awaitingJoinCallback != null
	awaitingSync bool // awaitingSyncCallback != null

	isNew       bool // MemberMetadata.isNew
	pendingSync bool // in GroupMetadata.pendingSyncMembers (2.8.1+)
	// resynced: the member has talked to this coordinator successfully since
	// the group was loaded by a failover (trace attribution only, not Kafka).
	resynced bool
	// gone: removed from its group (group.remove); Broker.connMember's
	// cache trusts a member only while it is not gone.
	gone bool

	hb timer // DelayedHeartbeat
}

// memberSize is member's size on 64-bit platforms: the 144-byte allocation
// size class, the per-member budget that keeps the live heap of a
// 100,000-member group small (every member of every group is one); change
// it deliberately.
const memberSize = 144

var _ [memberSize - unsafe.Sizeof(member{})]struct{} // fails to compile if member grows

// isStatic mirrors MemberMetadata.isStaticMember.
func (m *member) isStatic() bool { return m.cfg.GroupInstanceID != "" }

// instanceID is the member's group.instance.id ("" = dynamic).
func (m *member) instanceID() string { return m.cfg.GroupInstanceID }

// hasSatisfiedHeartbeat mirrors MemberMetadata.hasSatisfiedHeartbeat with
// heartbeatSatisfied=false (it is only true transiently inside
// completeAndScheduleNextExpiration): a new member must heartbeat even while
// awaiting join; others parked in JoinGroup or SyncGroup are alive.
func (m *member) hasSatisfiedHeartbeat() bool {
	if m.isNew {
		return false
	}
	return m.awaitingJoin || m.awaitingSync
}

// metadata returns the member's metadata for the named protocol
// (MemberMetadata.metadata).
func (m *member) metadata(name string) (protocol.Subscription, bool) {
	ps := m.cfg.Protocols
	for i := range ps {
		if ps[i].Name == name {
			return ps[i].Metadata, true
		}
	}
	return protocol.Subscription{}, false
}

// matches mirrors MemberMetadata.matches: same protocols, same order, same
// metadata.
func (m *member) matches(protocols []protocol.GroupProtocol) bool {
	ps := m.cfg.Protocols
	if len(protocols) != len(ps) {
		return false
	}
	for i := range protocols {
		if protocols[i].Name != ps[i].Name || !protocols[i].Metadata.Equal(ps[i].Metadata) {
			return false
		}
	}
	return true
}

// pendingMember is a KIP-394 member id handed out with MEMBER_ID_REQUIRED
// and not yet used in a second JoinGroup.
type pendingMember struct {
	id    string
	timer timer
}

// joinKind tells which delayed join is armed in group.join.
type joinKind uint8

const (
	joinNone joinKind = iota
	joinDelayed
	joinInitial
)

// group mirrors GroupMetadata.scala. Members live in a slice in the order
// they were added (Kafka keeps a HashMap; see electLeader for the rule that
// replaces hash order), with a map used only for lookup, never iterated.
type group struct {
	id           string
	state        GroupState
	generation   int32
	protocolType string
	protocolName string
	leader       string

	members         []*member
	byID            map[string]*member
	static          map[string]*member // instance id -> member
	pending         []*pendingMember
	pendingByID     map[string]*pendingMember
	numAwaitingJoin int
	numPendingSync  int
	// stalePendingSync counts pending-sync ids of replaced static members
	// (replaceStaticMember keeps the old id in pendingSyncMembers); they
	// are included in numPendingSync.
	stalePendingSync int
	// supported counts, per protocol name, the members that list it
	// (GroupMetadata.supportedProtocols): a protocol is a candidate when its
	// count is len(members). Kept by add, remove and setProtocols, so a
	// JoinGroup's protocol check is O(protocols), not O(members).
	supported      map[string]int
	newMemberAdded bool

	join          timer
	joinKind      joinKind
	joinDelay     time.Duration // InitialDelayedJoin delayMs
	joinRemaining time.Duration // InitialDelayedJoin remainingMs

	sync    timer
	syncGen int32

	// log is the group's writes to its __consumer_offsets partition.
	log groupLog

	// failover: loaded by a failover and not every member has
	// resynchronised yet (trace attribution only, see prepareRebalance).
	failover failoverSync

	part *partition
}

// failoverSync tracks a group loaded by a coordinator failover until every
// member has resynchronised (trace attribution only).
type failoverSync struct {
	pending  bool // not every member has resynchronised yet
	unsynced int  // members that have not
}

// groupLog is a group's writes to its __consumer_offsets partition:
// storeGroup's outstanding appends and the Java coordinator's open batch.
type groupLog struct {
	// appends are the outstanding group-record appends, oldest first
	// (append.go); empty with a zero-latency configuration.
	appends []*appendOp
	// batch is the flush of the open write batch of the Java coordinator's
	// append linger (armed: a batch is open), held the responses it
	// releases (linger.go).
	batch timer
	held  []Reply
}

func newGroup(id string, part *partition) *group {
	g := &group{
		id:          id,
		state:       Empty,
		byID:        map[string]*member{},
		static:      map[string]*member{},
		pendingByID: map[string]*pendingMember{},
		supported:   map[string]int{},
		part:        part,
	}
	g.join = timer{id: -1, kind: tkJoin, g: g}
	g.sync = timer{id: -1, kind: tkSync, g: g}
	g.log.batch = timer{id: -1, kind: tkLinger, g: g}
	return g
}

func (g *group) has(id string) bool { _, ok := g.byID[id]; return ok }

// rebalanceTimeout mirrors GroupMetadata.rebalanceTimeoutMs: the max over
// current members (0 if none).
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.cfg.RebalanceTimeout)
	}
	return d
}

// hasAllMembersJoined mirrors GroupMetadata.hasAllMembersJoined.
func (g *group) hasAllMembersJoined() bool {
	return len(g.members) == g.numAwaitingJoin && len(g.pending) == 0
}

// add mirrors GroupMetadata.add: the first member sets the protocol type
// and, when there is no leader, becomes leader. protocolType is the member's
// (MemberMetadata.protocolType); it is not kept per member because a member
// of a non-empty group always has the group's (supportsProtocols), and only
// the first member's is read (one field less in every member: memberSize).
func (g *group) add(m *member, protocolType string) {
	check(!g.has(m.id), "add: member already present")
	if len(g.members) == 0 {
		g.protocolType = protocolType
	}
	g.members = append(g.members, m)
	g.byID[m.id] = m
	m.gone = false
	g.count(m.cfg.Protocols, 1)
	if m.isStatic() {
		g.static[m.instanceID()] = m
	}
	if g.leader == "" {
		g.leader = m.id
	}
	if m.awaitingJoin {
		g.numAwaitingJoin++
	}
	g.removePending(m.id)
}

// remove mirrors GroupMetadata.remove: if the leader goes, the leadership
// moves to the first remaining member (Kafka: members.keys.headOption, hash
// order; here: join order).
func (g *group) remove(id string) {
	m, ok := g.byID[id]
	if !ok {
		return
	}
	if m.awaitingJoin {
		g.numAwaitingJoin--
	}
	if m.pendingSync {
		m.pendingSync = false
		g.numPendingSync--
	}
	if g.failover.pending && !m.resynced {
		m.resynced = true
		g.failover.unsynced--
		if g.failover.unsynced == 0 {
			g.failover.pending = false
		}
	}
	if m.isStatic() && g.static[m.instanceID()] == m {
		delete(g.static, m.instanceID())
	}
	delete(g.byID, id)
	m.gone = true
	// A removed member stays reachable from Broker.byConn, the connection
	// cache, until its connection is used again (never, for a crashed
	// process); its assignment would keep alive the whole backing array the
	// leader's assignor built for every member of that generation (issue
	// 15: memory per member). Nothing reads it after removal.
	m.assignment = protocol.Assignment{}
	g.count(m.cfg.Protocols, -1)
	i := slices.Index(g.members, m)
	g.members = slices.Delete(g.members, i, i+1)
	if g.leader == id {
		g.leader = ""
		if len(g.members) > 0 {
			g.leader = g.members[0].id
		}
	}
	check(g.numAwaitingJoin >= 0, "remove: numAwaitingJoin < 0")
}

func (g *group) addPending(p *pendingMember) {
	g.pending = append(g.pending, p)
	g.pendingByID[p.id] = p
}

// removePending drops a pending id; it returns the removed entry, or nil.
func (g *group) removePending(id string) *pendingMember {
	p, ok := g.pendingByID[id]
	if !ok {
		return nil
	}
	delete(g.pendingByID, id)
	i := slices.Index(g.pending, p)
	g.pending = slices.Delete(g.pending, i, i+1)
	return p
}

// count adds d to the supported count of every distinct protocol name in
// protocols (GroupMetadata.add/remove/updateMember keep supportedProtocols
// this way). A name a member lists twice counts once, so a count never
// exceeds the number of members listing it.
func (g *group) count(protocols []protocol.GroupProtocol, d int) {
	for i := range protocols {
		name := protocols[i].Name
		dup := false
		for j := 0; j < i; j++ {
			if protocols[j].Name == name {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if c := g.supported[name] + d; c != 0 {
			g.supported[name] = c
		} else {
			delete(g.supported, name)
		}
	}
}

// setConfig replaces a member's timeouts and protocols, keeping the
// supported counts (GroupMetadata.updateMember).
func (g *group) setConfig(m *member, c *MemberConfig) {
	if g.byID[m.id] == m {
		g.count(m.cfg.Protocols, -1)
		g.count(c.Protocols, 1)
	}
	m.cfg = c
}

// maxConfigs is how many recent member configurations a broker keeps for
// sharing (config): a group's cohorts each send one protocol list.
const maxConfigs = 8

// config returns a MemberConfig with this instance id, these timeouts and
// protocols: one made recently when one has the same instance id (a static
// member's is its own) and timeouts and the very same protocol list
// (the same slice: a member's protocol list is never changed in place, so
// the two are equal), else a new one. Sharing it changes nothing a member
// does; it keeps the values out of every member and record (memberSize,
// memberRecordSize).
func (b *Broker) config(instanceID string, session, rebalance time.Duration, protocols []protocol.GroupProtocol) *MemberConfig {
	for i, c := range b.configs {
		if c.GroupInstanceID == instanceID && c.SessionTimeout == session && c.RebalanceTimeout == rebalance && sameSlice(c.Protocols, protocols) {
			if i > 0 { // most recent first
				copy(b.configs[1:i+1], b.configs[:i])
				b.configs[0] = c
			}
			return c
		}
	}
	c := &MemberConfig{GroupInstanceID: instanceID, SessionTimeout: session, RebalanceTimeout: rebalance, Protocols: protocols}
	if len(b.configs) < maxConfigs {
		b.configs = append(b.configs, nil)
	}
	copy(b.configs[1:], b.configs)
	b.configs[0] = c
	return c
}

// sameSlice reports whether a and b are the same slice: the same array and
// length (two empty ones are the same when both or neither are nil).
func sameSlice(a, b []protocol.GroupProtocol) bool {
	return len(a) == len(b) && (a == nil) == (b == nil) && (len(a) == 0 || &a[0] == &b[0])
}

// supportsProtocols mirrors GroupMetadata.supportsProtocols.
func (g *group) supportsProtocols(protocolType string, protocols []protocol.GroupProtocol) bool {
	if g.state == Empty {
		return protocolType != "" && len(protocols) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for i := range protocols {
		// supportedProtocols(name) == members.size: the counts default to
		// 0, so with no member (PreparingRebalance after the last member
		// left, a KIP-394 pending id still to join) every protocol passes
		// (GroupMetadata.supportsProtocols 3.6.1 473-478;
		// ClassicGroup.supportsProtocols v8.0.0 1103-1111).
		if g.supported[protocols[i].Name] == len(g.members) {
			return true
		}
	}
	return false
}

// supportedByAll reports whether every member lists the protocol
// (supportedProtocols(name) == members.size).
func (g *group) supportedByAll(name string) bool {
	return len(g.members) > 0 && g.supported[name] == len(g.members)
}

// selectProtocol mirrors GroupMetadata.selectProtocol (protocol.SelectProtocol,
// the vote both coordinators share).
func (g *group) selectProtocol() string {
	check(len(g.members) > 0, "selectProtocol: no members")
	name := protocol.SelectProtocol(len(g.members), func(i int) []protocol.GroupProtocol { return g.members[i].cfg.Protocols }, g.supportedByAll)
	check(name != "", "selectProtocol: no common protocol")
	return name
}

// electJoinedLeader mirrors GroupMetadata.maybeElectNewJoinedLeader. If the
// leader did not rejoin, Kafka picks any member awaiting join in hash-map
// order; here the earliest-joined one (deterministic rule).
func (g *group) electJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if g.byID[g.leader].awaitingJoin {
		return true
	}
	for _, m := range g.members {
		if m.awaitingJoin {
			g.leader = m.id
			return true
		}
	}
	return false
}

// currentMemberMetadata mirrors GroupMetadata.currentMemberMetadata: the
// member list the leader receives, for the selected protocol.
func (g *group) currentMemberMetadata() []protocol.JoinGroupMember {
	out := make([]protocol.JoinGroupMember, 0, len(g.members))
	for _, m := range g.members {
		md, ok := m.metadata(g.protocolName)
		check(ok, "currentMemberMetadata: member lacks selected protocol")
		out = append(out, protocol.JoinGroupMember{MemberID: m.id, GroupInstanceID: m.instanceID(), Metadata: md})
	}
	return out
}

// record builds the persisted group record (GroupMetadataManager.storeGroup
// / groupMetadataValue) with the given assignments (nil: the stored ones).
func (g *group) record(assignment map[string]protocol.Assignment) GroupRecord {
	rec := GroupRecord{
		GroupID:      g.id,
		GenerationID: g.generation,
		ProtocolType: g.protocolType,
		ProtocolName: g.protocolName,
		Leader:       g.leader,
		Members:      make([]MemberRecord, 0, len(g.members)),
	}
	for _, m := range g.members {
		a := m.assignment
		if assignment != nil {
			a = assignment[m.id]
		}
		rec.Members = append(rec.Members, MemberRecord{
			MemberID:     m.id,
			MemberConfig: m.cfg, // shared: replaced whole (setConfig), never changed in place
			Assignment:   a,
		})
	}
	slices.SortFunc(rec.Members, func(a, b MemberRecord) int { return strings.Compare(a.MemberID, b.MemberID) })
	return rec
}

// check panics with a package-prefixed message on programmer error.
func check(cond bool, msg string) {
	if !cond {
		panic("coordinator: " + msg)
	}
}
