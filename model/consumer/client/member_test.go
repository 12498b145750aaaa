package client_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/consumer/client"
	broker "github.com/rebalsim/rebalsim/model/consumer/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// world is a tiny fixed-step loop (1 ms) joining consumer-protocol members
// to the KIP-848 broker model: every request is answered after 1 ms, each
// application polls every 100 ms and finishes a callback at its next poll.
type world struct {
	t       *testing.T
	now     protocol.Instant
	b       *broker.Coordinator
	members []*client.Member
	inbox   [][]protocol.ConsumerGroupHeartbeatRequest // per member: requests to answer next step
	cb      []bool                                     // a callback is running on the member's app thread
	nextPol []protocol.Instant
	alive   []bool
	// double ownership seen at any step
	doubles int
}

func newWorld(t *testing.T, n int) *world {
	b, err := broker.New(broker.Config{Name: "broker-0", Profile: "kafka-4.2", Topics: []assign.Topic{{Name: "t", Partitions: 6}}})
	require.NoError(t, err)
	w := &world{t: t, b: b}
	for i := 0; i < n; i++ {
		w.add(i)
	}
	return w
}

func (w *world) add(i int) {
	m := client.New(client.Config{Name: fmt.Sprint("m", i), GroupID: "g", MemberID: fmt.Sprint("id-", i), Topics: []string{"t"}},
		rand.New(rand.NewPCG(uint64(i), 7)))
	w.members = append(w.members, m)
	w.inbox = append(w.inbox, nil)
	w.cb = append(w.cb, false)
	w.nextPol = append(w.nextPol, w.now.Add(time.Duration(i)*7*time.Millisecond))
	w.alive = append(w.alive, true)
	var out client.Output
	m.CoordinatorFound(w.now, &out)
	w.collect(len(w.members)-1, &out)
}

func (w *world) collect(i int, out *client.Output) {
	w.inbox[i] = append(w.inbox[i], out.Sends...)
	if out.Callback != client.NoCallback {
		w.cb[i] = true
	}
}

func (w *world) step() {
	w.now = w.now.Add(time.Millisecond)
	var bo broker.Output
	w.b.Tick(w.now, &bo)
	for i, m := range w.members {
		if !w.alive[i] {
			w.inbox[i] = nil
			continue
		}
		reqs := w.inbox[i]
		w.inbox[i] = nil
		for k := range reqs {
			bo = broker.Output{}
			w.b.Heartbeat(w.now, &reqs[k], &bo)
			var out client.Output
			m.Response(w.now, bo.Resp, &out)
			w.collect(i, &out)
		}
		var out client.Output
		if w.now >= w.nextPol[i] {
			w.nextPol[i] = w.now.Add(100 * time.Millisecond)
			if w.cb[i] {
				w.cb[i] = false
				m.CallbackDone(w.now, &out)
				w.collect(i, &out)
				out = client.Output{}
			}
			m.AppPoll(w.now, &out)
		} else if m.NextDeadline() <= w.now {
			m.Tick(w.now, &out)
		}
		w.collect(i, &out)
	}
	seen := map[protocol.TopicPartition]bool{}
	for i, m := range w.members {
		if !w.alive[i] {
			continue
		}
		for _, p := range m.Owned() {
			if seen[p] {
				w.doubles++
			}
			seen[p] = true
		}
	}
}

func (w *world) run(d time.Duration) {
	for end := w.now.Add(d); w.now < end; {
		w.step()
	}
}

// The consumer protocol end to end (kafka-consumer-protocol.md §2.7, §3.7):
// members join one by one and every one reaches STABLE with a balanced
// share; no partition is ever owned by two members at once (revocation
// always precedes assignment); a member that stops heartbeating is fenced
// at its session timeout and its partitions go to the others.
func TestConsumerProtocolEndToEnd(t *testing.T) {
	w := newWorld(t, 1)
	w.run(2 * time.Second)
	require.Equal(t, client.Stable, w.members[0].State())
	assert.Len(t, w.members[0].Owned(), 6)
	w.add(1)
	w.add(2)
	w.run(30 * time.Second)
	total := 0
	for i, m := range w.members {
		assert.Equal(t, client.Stable, m.State(), "member %d", i)
		assert.Len(t, m.Owned(), 2, "member %d: uniform, balanced", i)
		total += len(m.Owned())
	}
	assert.Equal(t, 6, total)
	assert.Zero(t, w.doubles, "never owned twice")
	g := w.b.Group("g")
	assert.Equal(t, broker.GroupStable, g.State())

	// m2's process vanishes: fenced 45 s after its last heartbeat.
	w.alive[2] = false
	w.run(60 * time.Second)
	assert.Len(t, g.Members(), 2)
	var owned []protocol.TopicPartition
	for _, m := range w.members[:2] {
		assert.Equal(t, client.Stable, m.State())
		owned = append(owned, m.Owned()...)
	}
	slices.SortFunc(owned, func(a, b protocol.TopicPartition) int { return int(a.Partition - b.Partition) })
	assert.Len(t, owned, 6, "the fenced member's partitions were reassigned")
	assert.Zero(t, w.doubles)
}

// Poll timeout: an application that stops calling poll() leaves the group
// (leave heartbeat with epoch −1) when max.poll.interval.ms expires, loses
// its partitions (STALE) and rejoins at its next poll().
func TestPollTimeoutLeavesAndRejoins(t *testing.T) {
	w := newWorld(t, 2)
	w.run(5 * time.Second)
	require.Equal(t, client.Stable, w.members[1].State())
	m := w.members[1]
	w.nextPol[1] = w.now.Add(400 * time.Second) // stuck in processing
	w.run(301 * time.Second)
	assert.Equal(t, client.Stale, m.State())
	assert.Empty(t, m.Owned())
	assert.Len(t, w.b.Group("g").Members(), 1, "the leave fenced it on the broker at once")
	w.nextPol[1] = w.now
	w.run(10 * time.Second)
	assert.Equal(t, client.Stable, m.State())
	assert.Len(t, m.Owned(), 3)
	assert.Zero(t, w.doubles)
}

// A fenced member whose application thread is busy sends nothing until its
// onPartitionsLost callback has run, then rejoins at epoch 0 once: no
// heartbeat storm from the FENCED state.
// Kafka: AbstractMembershipManager.shouldSkipHeartbeat @v8.0.0 (isNotInGroup:
// UNSUBSCRIBED, FENCED, FATAL, STALE); transitionToFenced runs the lost
// callback, then transitionToJoining.
func TestFencedMemberSkipsHeartbeatsUntilLostCallback(t *testing.T) {
	w := newWorld(t, 2)
	w.run(20 * time.Second)
	m := w.members[1]
	require.Equal(t, client.Stable, m.State())
	require.NotEmpty(t, m.Owned())
	w.nextPol[1] = w.now.Add(20 * time.Second) // the application thread is busy
	var out client.Output
	m.Response(w.now, &protocol.ConsumerGroupHeartbeatResponse{Error: protocol.FencedMemberEpoch}, &out)
	w.collect(1, &out)
	assert.Equal(t, client.Fenced, m.State())
	assert.Equal(t, client.CallbackLost, out.Callback, "the lost callback waits for the application thread")
	assert.Empty(t, out.Sends)
	sent := 0
	for end := w.now.Add(19 * time.Second); w.now < end; {
		sent += len(w.inbox[1])
		w.step()
	}
	assert.Zero(t, sent, "nothing is sent while FENCED")
	assert.Equal(t, client.Fenced, m.State())
	w.run(2 * time.Second) // the poll runs the callback; the member rejoins
	assert.NotEqual(t, client.Fenced, m.State())
	w.run(10 * time.Second)
	assert.Equal(t, client.Stable, m.State())
}
