package coordinator

// Test helpers. Goal: drive one Broker the way Kafka's GroupCoordinatorTest
// drives GroupCoordinator (core/src/test/scala/unit/kafka/coordinator/group/
// GroupCoordinatorTest.scala), with the same constants, but with virtual
// time: advance() plays the role of MockTime.sleep + purgatory expiry.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// GroupCoordinatorTest's constants.
const (
	testGroup               = "groupId"
	testInitialDelay        = 50 * time.Millisecond
	testMinSession          = 10 * time.Millisecond
	testMaxSession          = 10 * time.Minute
	testMaxSize             = 4
	defaultSessionTimeout   = 500 * time.Millisecond
	defaultRebalanceTimeout = 500 * time.Millisecond
	testNewMemberJoin       = 5 * time.Minute
)

type fixture struct {
	t    *testing.T
	b    *Broker
	now  protocol.Instant
	out  Output
	corr uint64
	// persisted is the latest GroupRecord the broker wrote (what the
	// harness would hand to the next coordinator).
	persisted *GroupRecord
}

func (f *fixture) notePersist() {
	if n := len(f.out.Persist); n > 0 {
		rec := f.out.Persist[n-1]
		f.persisted = &rec
	}
}

func testConfig(profile string) Config {
	return Config{
		BrokerID:              1,
		Name:                  "broker-1",
		Profile:               Profile(profile),
		InitialRebalanceDelay: testInitialDelay,
		MinSessionTimeout:     testMinSession,
		MaxSessionTimeout:     testMaxSession,
		MaxSize:               testMaxSize,
		NewMemberJoinTimeout:  testNewMemberJoin,
	}
}

// newFixture builds a broker elected (immediately loaded) for testGroup.
func newFixture(t *testing.T, profile string, mods ...func(*Config)) *fixture {
	t.Helper()
	cfg := testConfig(profile)
	for _, m := range mods {
		m(&cfg)
	}
	f := &fixture{t: t, b: NewBroker(cfg)}
	f.b.SetCoordinator(testGroup, cfg.BrokerID)
	f.b.Elect(0, testGroup, 0, nil, &f.out)
	return f
}

// send handles req on conn and returns the replies it produced.
func (f *fixture) send(conn Conn, req protocol.Request) []Reply {
	f.t.Helper()
	f.out.Reset()
	f.corr++
	f.b.Handle(f.now, conn, f.corr, req, &f.out)
	f.notePersist()
	f.checkIndexes()
	return append([]Reply(nil), f.out.Replies...)
}

// advance moves virtual time by d, firing every timer due.
func (f *fixture) advance(d time.Duration) []Reply {
	f.t.Helper()
	f.out.Reset()
	f.now = f.now.Add(d)
	f.b.Tick(f.now, &f.out)
	f.notePersist()
	f.checkIndexes()
	return append([]Reply(nil), f.out.Replies...)
}

func (f *fixture) events(kind protocol.EventKind) []protocol.Event {
	var evs []protocol.Event
	for _, e := range f.out.Events {
		if e.Kind == kind {
			evs = append(evs, e)
		}
	}
	return evs
}

func (f *fixture) state() GroupState {
	s, _, ok := f.b.GroupState(testGroup)
	require.True(f.t, ok, "group exists")
	return s
}

func (f *fixture) generation() int32 {
	_, g, ok := f.b.GroupState(testGroup)
	require.True(f.t, ok, "group exists")
	return g
}

func protocols(names ...string) []protocol.GroupProtocol {
	ps := make([]protocol.GroupProtocol, len(names))
	for i, n := range names {
		ps[i] = protocol.GroupProtocol{Name: n, Metadata: protocol.Subscription{Topics: []string{"t"}, GenerationID: -1}}
	}
	return ps
}

// joinReq is a JoinGroup v3 (no KIP-394) with the test defaults.
func staticJoin(memberID, instanceID string) *protocol.JoinGroupRequest {
	return &protocol.JoinGroupRequest{
		ClientID:         "client",
		GroupID:          testGroup,
		SessionTimeout:   defaultSessionTimeout,
		RebalanceTimeout: defaultRebalanceTimeout,
		MemberID:         memberID,
		GroupInstanceID:  instanceID,
		ProtocolType:     protocol.ConsumerProtocolType,
		Protocols:        protocols("range"),
		Version:          5,
	}
}

// dynamicJoin is a JoinGroup v3 without instance id (no MEMBER_ID_REQUIRED).
func dynamicJoin(memberID string) *protocol.JoinGroupRequest {
	r := staticJoin(memberID, "")
	r.Version = 3
	return r
}

func syncReq(memberID string, gen int32, assignments ...protocol.SyncGroupAssignment) *protocol.SyncGroupRequest {
	return &protocol.SyncGroupRequest{GroupID: testGroup, GenerationID: gen, MemberID: memberID, Assignments: assignments}
}

func hbReq(memberID string, gen int32) *protocol.HeartbeatRequest {
	return &protocol.HeartbeatRequest{GroupID: testGroup, GenerationID: gen, MemberID: memberID}
}

func leaveReq(members ...protocol.LeaveGroupMember) *protocol.LeaveGroupRequest {
	return &protocol.LeaveGroupRequest{GroupID: testGroup, Members: members}
}

// only asserts exactly one reply, on conn, and returns its response.
func only(t *testing.T, replies []Reply, conn Conn) protocol.Response {
	t.Helper()
	require.Len(t, replies, 1)
	require.Equal(t, conn, replies[0].Conn)
	return replies[0].Resp
}

// replyOn returns the reply on conn (fails if absent).
func replyOn(t *testing.T, replies []Reply, conn Conn) protocol.Response {
	t.Helper()
	for _, r := range replies {
		if r.Conn == conn {
			return r.Resp
		}
	}
	require.Failf(t, "no reply", "no reply on conn %d in %d replies", conn, len(replies))
	return nil
}

func joinResp(t *testing.T, r protocol.Response) *protocol.JoinGroupResponse {
	t.Helper()
	jr, ok := r.(*protocol.JoinGroupResponse)
	require.True(t, ok, "JoinGroupResponse, got %T", r)
	return jr
}

func syncResp(t *testing.T, r protocol.Response) *protocol.SyncGroupResponse {
	t.Helper()
	sr, ok := r.(*protocol.SyncGroupResponse)
	require.True(t, ok, "SyncGroupResponse, got %T", r)
	return sr
}

// joinSingle joins a new dynamic member alone into an Empty group and
// waits out the initial delay (GroupCoordinatorTest.joinGroup +
// timer.advanceClock(GroupInitialRebalanceDelay + 1)).
func (f *fixture) joinSingle(conn Conn, req *protocol.JoinGroupRequest) *protocol.JoinGroupResponse {
	f.t.Helper()
	require.Empty(f.t, f.send(conn, req))
	return joinResp(f.t, only(f.t, f.completeInitialJoin(), conn))
}

// completeInitialJoin advances in steps of the initial delay until the
// InitialDelayedJoin (with its KIP-134 extensions) completes.
func (f *fixture) completeInitialJoin() []Reply {
	f.t.Helper()
	for i := 0; i < 20; i++ {
		if r := f.advance(testInitialDelay); len(r) > 0 {
			return r
		}
	}
	require.FailNow(f.t, "initial join did not complete")
	return nil
}

// stableGroup forms a Stable group of n dynamic members (conns 1..n),
// returning their member ids in conn order and the generation.
func (f *fixture) stableGroup(n int) ([]string, int32) {
	f.t.Helper()
	for i := 1; i <= n; i++ {
		require.Empty(f.t, f.send(Conn(i), dynamicJoin("")))
	}
	replies := f.completeInitialJoin()
	require.Len(f.t, replies, n)
	ids := make([]string, n)
	var leader string
	var gen int32
	for i := 1; i <= n; i++ {
		jr := joinResp(f.t, replyOn(f.t, replies, Conn(i)))
		require.Equal(f.t, protocol.None, jr.Error)
		ids[i-1] = jr.MemberID
		leader, gen = jr.Leader, jr.GenerationID
	}
	for i, id := range ids {
		if id == leader {
			var as []protocol.SyncGroupAssignment
			for _, m := range ids {
				as = append(as, protocol.SyncGroupAssignment{MemberID: m,
					Assignment: protocol.Assignment{Partitions: []protocol.TopicPartition{{Topic: "t", Partition: 0}}}})
			}
			r := f.send(Conn(i+1), syncReq(id, gen, as...))
			require.Equal(f.t, protocol.None, syncResp(f.t, replyOn(f.t, r, Conn(i+1))).Error)
		}
	}
	for i, id := range ids {
		if id != leader {
			r := f.send(Conn(i+1), syncReq(id, gen))
			require.Equal(f.t, protocol.None, syncResp(f.t, only(f.t, r, Conn(i+1))).Error)
		}
	}
	require.Equal(f.t, Stable, f.state())
	return ids, gen
}

// checkIndexes recounts what the broker keeps incrementally, after every
// request and tick of every test: each group's per-protocol member counts
// (group.supported, GroupMetadata.supportedProtocols) and the timer heap's
// order and back-pointers.
func (f *fixture) checkIndexes() {
	f.t.Helper()
	for _, p := range f.b.parts {
		g := p.group
		if g == nil {
			continue
		}
		want := map[string]int{}
		for _, m := range g.members {
			seen := map[string]bool{}
			for _, gp := range m.cfg.Protocols {
				if !seen[gp.Name] {
					seen[gp.Name] = true
					want[gp.Name]++
				}
			}
		}
		require.Equal(f.t, want, g.supported, "group %s: supported protocol counts", g.id)
	}
	th := &f.b.timers
	h := th.h
	seqs := map[uint64]bool{}
	for i := range h {
		t := th.ptr[h[i].id()]
		require.NotNil(f.t, t, "timer heap id")
		require.Equal(f.t, h[i].id(), t.id, "timer heap id back-pointer")
		require.Equal(f.t, int32(i), th.pos[h[i].id()], "timer heap position")
		require.Equal(f.t, h[i].at, t.at, "timer heap deadline")
		require.False(f.t, seqs[h[i].seq()], "timer heap sequence unique")
		require.LessOrEqual(f.t, h[i].seq(), f.b.timerSeq, "timer heap sequence issued")
		seqs[h[i].seq()] = true
		if i > 0 {
			require.False(f.t, h[i].less(&h[(i-1)/4]), "timer heap order")
		}
	}
}
