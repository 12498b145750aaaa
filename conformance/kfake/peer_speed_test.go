package kfake_test

// TestPeerSpeed compares rebalsim's speed with what people would use
// instead: franz-go kgo consumers against a kfake cluster under
// testing/synctest (virtual time, in-memory connections), on the same crash
// scenario — n members of one group with Kafka's default timings
// (session.timeout.ms 45 s, heartbeat.interval.ms 3 s, auto-commit every
// 5 s), one partition per member, one member crashing at 60 s, 5 simulated
// minutes — at 10, 100 and 300 members (how fast a peer that is not a
// simulator runs the same work, for scale). It prints wall
// time and simulated member-seconds per wall-second for both, side by side.
//
// It is slow (kfake at 300 members takes tens of seconds), so it runs only
// when asked:
//
//	cd conformance/kfake && REBALSIM_PEER_SPEED=1 go test -run TestPeerSpeed -v -timeout 30m
//
// or ./peer_speed.sh. REBALSIM_PEER_SPEED_MEMBERS=10,100 picks the sizes.
//
// What "the same scenario" means here, and where the two differ: the kgo
// members are dynamic consumers with kgo's defaults for the settings above
// (kgo's own defaults equal Kafka's: 45 s, 3 s, 5 s auto-commit); a crash
// is the member's connections cut and every later dial left to time out (its
// heartbeats stop, so the coordinator evicts it after the session timeout,
// as for a process that died without a LeaveGroup); no records are
// produced, so kgo's auto-commit has nothing to commit and sends no
// OffsetCommit (rebalsim's kafka-3.x client commits every 5 s anyway), and
// kgo's poll loop is one blocking PollFetches rather than a poll every
// 100 ms. rebalsim runs on one goroutine; the kgo/kfake side uses as many
// cores as GOMAXPROCS allows (set GOMAXPROCS=1 for a per-core comparison).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

const (
	peerDuration = 5 * time.Minute
	peerCrashAt  = 60 * time.Second
)

func TestPeerSpeed(t *testing.T) {
	if os.Getenv("REBALSIM_PEER_SPEED") == "" {
		t.Skip("slow: set REBALSIM_PEER_SPEED=1 (see the comment)")
	}
	sizes := []int{10, 100, 300}
	if s := os.Getenv("REBALSIM_PEER_SPEED_MEMBERS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err)
			sizes = append(sizes, n)
		}
	}
	type row struct {
		n                int
		simWall, kfWall  time.Duration
		simRate, kfRate  float64
		simEvict, kfLeft int
	}
	var rows []row
	for _, n := range sizes {
		memberSeconds := float64(n) * peerDuration.Seconds()
		// rebalsim: best of 3 (it is short).
		var simWall time.Duration
		var evictions int
		for i := 0; i < 3; i++ {
			d, ev := runRebalsim(t, n)
			if i == 0 || d < simWall {
				simWall = d
			}
			evictions = ev
		}
		kfWall, members := runKfake(t, n)
		rows = append(rows, row{n: n, simWall: simWall, kfWall: kfWall,
			simRate: memberSeconds / simWall.Seconds(), kfRate: memberSeconds / kfWall.Seconds(),
			simEvict: evictions, kfLeft: members})
	}
	t.Logf("crash scenario, %v simulated, crash at %v; wall time and simulated member-s per wall-s", peerDuration, peerCrashAt)
	t.Logf("%8s %12s %14s %12s %14s %8s %s", "members", "rebalsim", "member-s/s", "kgo+kfake", "member-s/s", "ratio", "check")
	for _, r := range rows {
		t.Logf("%8d %12v %14.0f %12v %14.0f %7.0fx  rebalsim evictions=%d, kfake group size at end=%d",
			r.n, r.simWall.Round(time.Millisecond), r.simRate, r.kfWall.Round(time.Millisecond), r.kfRate,
			r.simRate/r.kfRate, r.simEvict, r.kfLeft)
	}
}

// runRebalsim runs the crash scenario in rebalsim and returns the wall time
// and the number of evictions (1 expected).
func runRebalsim(t *testing.T, n int) (time.Duration, int) {
	src := fmt.Sprintf(`
name: peer-crash-%d
duration: %s
coordinator: {brokers: 1, profile: kafka-3.x}
network: {latency: {dist: uniform, min: 0ms, max: 2ms}}
topics: [{name: t, partitions: %d}]
groups:
  - id: g
    members: %d
    subscribe: [t]
    client: {profile: kafka-3.x}
    start: {at: 0s, stagger: 1ms}
faults:
  - {at: %s, crash: g-1}
`, n, peerDuration, n, n, peerCrashAt)
	sc, err := scenario.Parse("peer.yaml", []byte(src))
	require.NoError(t, err)
	start := time.Now()
	res, err := harness.Run(sc, 1, harness.Options{})
	wall := time.Since(start)
	require.NoError(t, err)
	return wall, int(res.Summary.Groups[0].Evictions)
}

// runKfake runs the crash scenario with n kgo consumers against a
// one-broker kfake cluster inside a synctest bubble and returns the wall
// time and the group's size at the end (n-1 expected).
func runKfake(t *testing.T, n int) (time.Duration, int) {
	var size int
	// The wall time is taken outside the bubble (inside, time.Now is
	// virtual); it includes the cluster's start and the clients' close
	// after the measurement, a small part of the whole.
	wallStart := time.Now()
	synctest.Test(t, func(t *testing.T) {
		var stack kfake.VirtualNetwork
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(19300), kfake.ListenFn(stack.Listen),
			kfake.SeedTopics(int32(n), "t"))
		require.NoError(t, err)
		defer c.Close()

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clients := make([]*kgo.Client, n)
		var wg sync.WaitGroup
		start := time.Now() // the bubble's clock: virtual
		for i := 0; i < n; i++ {
			opts := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.Dialer(stack.DialContext),
				kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"), kgo.ClientID("g-" + strconv.Itoa(i)),
				kgo.DisableAutoCommit()} // see the comment on auto-commit above
			if i == 1 {
				opts = append(opts, kgo.InstanceID("g-1")) // the one that crashes: see crash below
			}
			cl, err := kgo.NewClient(opts...)
			require.NoError(t, err)
			clients[i] = cl
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if cl.PollFetches(ctx).IsClientClosed() {
						return
					}
				}
			}()
			time.Sleep(time.Millisecond) // stagger: 1ms
		}
		time.Sleep(peerCrashAt - time.Since(start))
		// The crash: member 1 is static (group.instance.id), and a static
		// kgo member's Close sends no LeaveGroup, so the coordinator
		// learns of it only when its session times out, as for a process
		// that died. (Cutting its connections instead deadlocks the bubble:
		// kgo waits on a mutex, which synctest does not count as durably
		// blocked, while the dial under it waits for virtual time.)
		clients[1].Close()
		time.Sleep(peerDuration - time.Since(start))
		size = groupSize(t, clients[0])
		cancel()
		wg.Wait()
		for i, cl := range clients {
			if i != 1 {
				cl.Close() // a LeaveGroup each: after the measurement
			}
		}
	})
	return time.Since(wallStart), size
}

// groupSize is the number of members kfake lists for group g.
func groupSize(t *testing.T, cl *kgo.Client) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{"g"}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) == 0 {
		t.Logf("DescribeGroups: %v", err)
		return -1
	}
	return len(resp.Groups[0].Members)
}
