package scenario

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Random writes a random valid scenario file drawn from r: random profiles,
// group sizes, topics, client timeouts (heartbeat below session, and the
// pre-2.0 request.timeout.ms above it), assignors the profile has, network
// latency and loss, and a fault timeline inside the run.
// maxPollMs, when positive, is every group's max.poll.interval.ms (profiles
// that have it). The fuzz targets and the hostile-input tests seed from it;
// every output parses (TestRandomScenariosParse).
func Random(r *rand.Rand, maxPollMs int) []byte {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	var b strings.Builder
	durS := 20 + r.IntN(100)
	fmt.Fprintf(&b, "name: random-%d\nduration: %ds\n", r.Uint32(), durS)
	coordProfile := profiles[r.IntN(len(profiles))]
	fmt.Fprintf(&b, "coordinator: {profile: %s, brokers: %d, load.time: %dms}\n", coordProfile.name, 1+r.IntN(3), r.IntN(3000))
	fmt.Fprintf(&b, "network: {latency: %s, loss: %g", pick("1ms", "0ms", "{dist: uniform, min: 0ms, max: 5ms}", "{dist: exponential, min: 1ms, mean: 3ms}"), []float64{0, 0, 0.001, 0.01, 0.05}[r.IntN(5)])
	b.WriteString("}\n")
	nTopics := 1 + r.IntN(2)
	b.WriteString("topics:\n")
	for i := 0; i < nTopics; i++ {
		fmt.Fprintf(&b, "  - {name: t%d, partitions: %d}\n", i, 1+r.IntN(24))
	}
	b.WriteString("groups:\n")
	nGroups := 1 + r.IntN(2)
	members := make([]int, nGroups)
	for gi := 0; gi < nGroups; gi++ {
		p := profiles[r.IntN(len(profiles))]
		members[gi] = 1 + r.IntN(8)
		hb := 100 + r.IntN(3000)
		sess := hb + 1 + r.IntN(20000)
		fmt.Fprintf(&b, "  - id: g%d\n    members: %d\n    subscribe: [t%d]\n", gi, members[gi], r.IntN(nTopics))
		fmt.Fprintf(&b, "    client: {profile: %s, session.timeout.ms: %d, heartbeat.interval.ms: %d", p.name, sess, hb)
		if !p.atLeast(2, 0) {
			fmt.Fprintf(&b, ", request.timeout.ms: %d", sess+1+r.IntN(10000))
		} else {
			fmt.Fprintf(&b, ", request.timeout.ms: %d", 100+r.IntN(30000))
		}
		if p.atLeast(0, 11) {
			mp := 1000 + r.IntN(60000)
			if maxPollMs > 0 {
				mp = maxPollMs
			}
			fmt.Fprintf(&b, ", max.poll.interval.ms: %d", mp)
		}
		var as []string
		for _, a := range assignorNames {
			if p.atLeast(a.major, a.minor) && r.IntN(2) == 0 {
				as = append(as, a.name)
			}
		}
		if len(as) > 0 {
			fmt.Fprintf(&b, ", partition.assignment.strategy: [%s]", strings.Join(as, ", "))
		}
		if p.atLeast(2, 3) && r.IntN(3) == 0 {
			b.WriteString(", group.instance.id: true")
		}
		b.WriteString("}\n")
		fmt.Fprintf(&b, "    workload: {poll.interval: %dms, poll.timeout: %dms, assign.time: %dms, callback.time: %dms}\n",
			r.IntN(500), 1+r.IntN(200), r.IntN(3)*r.IntN(200), r.IntN(3)*r.IntN(300))
		fmt.Fprintf(&b, "    start: {at: %dms, stagger: %dms}\n", r.IntN(2000), r.IntN(200))
	}
	nFaults := r.IntN(6)
	if nFaults > 0 {
		b.WriteString("faults:\n")
	}
	for i := 0; i < nFaults; i++ {
		gi := r.IntN(nGroups)
		m := fmt.Sprintf("g%d-%d", gi, r.IntN(members[gi]))
		at := r.IntN(durS*1000 - 1)
		forMs := 1 + r.IntN(20000)
		switch r.IntN(9) {
		case 0:
			fmt.Fprintf(&b, "  - {at: %dms, crash: %s}\n", at, m)
		case 1:
			fmt.Fprintf(&b, "  - {at: %dms, restart: %s}\n", at, m)
		case 2:
			fmt.Fprintf(&b, "  - {at: %dms, pause: %s, for: %dms}\n", at, m, forMs)
		case 3:
			fmt.Fprintf(&b, "  - {at: %dms, slow-poll: %s, for: %dms}\n", at, m, forMs)
		case 4:
			fmt.Fprintf(&b, "  - {at: %dms, partition: [%s, coordinator], for: %dms}\n", at, m, forMs)
		case 5:
			fmt.Fprintf(&b, "  - {at: %dms, loss: %g, for: %dms}\n", at, 0.05+0.5*r.Float64(), forMs)
		case 6:
			fmt.Fprintf(&b, "  - {at: %dms, coordinator-failover: g%d}\n", at, gi)
		case 7:
			fmt.Fprintf(&b, "  - {at: %dms, leave: %s}\n", at, m)
		case 8:
			fmt.Fprintf(&b, "  - {at: %dms, latency: %dms, for: %dms}\n", at, r.IntN(300), forMs)
		}
	}
	return []byte(b.String())
}
