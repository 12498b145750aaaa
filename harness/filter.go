package harness

import (
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// faultExt is the state of the fault extensions of docs/OBSERVABILITY.md:
// the message filters active now.
type faultExt struct {
	filters []activeFilter // in the order their faults started
	// Overlapping windows (the swarm draws them): loss and latency windows
	// active now, in start order (the latest one is in effect; when it ends
	// the one before applies again, then the scenario's network), and cut
	// counts per direction (a path heals when its last partition ends).
	loss    []int
	latency []int
	cuts    map[[2]sim.NodeID]int
}

// cut adds one partition of a→b.
func (w *world) cut(a, b sim.NodeID) {
	if w.ext.cuts == nil {
		w.ext.cuts = make(map[[2]sim.NodeID]int)
	}
	k := [2]sim.NodeID{a, b}
	w.ext.cuts[k]++
	if w.ext.cuts[k] == 1 {
		w.net.Cut(a, b)
	}
}

// heal removes one partition of a→b; the path heals with the last one.
func (w *world) heal(a, b sim.NodeID) {
	k := [2]sim.NodeID{a, b}
	if w.ext.cuts[k] == 0 {
		return
	}
	w.ext.cuts[k]--
	if w.ext.cuts[k] == 0 {
		w.net.Heal(a, b)
	}
}

// endWindow removes fault i from a list of active windows and returns the
// fault now in effect, or -1 for the scenario's own setting.
func endWindow(active *[]int, i int) int {
	*active = slices.DeleteFunc(*active, func(x int) bool { return x == i })
	if n := len(*active); n > 0 {
		return (*active)[n-1]
	}
	return -1
}

// activeFilter is one filter fault in its window, resolved for the hot path.
type activeFilter struct {
	fault  int             // index into world.faults
	api    protocol.APIKey // 0: every API
	member int32           // slot index; -1: every member
	req    bool            // match requests (member → broker)
	resp   bool            // match responses (broker → member)
	drop   bool            // drop; else delay
	delay  time.Duration   // extra one-way delay
}

// apiByName maps scenario.APINames to Kafka API keys.
func apiByName(name string) protocol.APIKey {
	for _, k := range []protocol.APIKey{protocol.APIFindCoordinator, protocol.APIJoinGroup, protocol.APISyncGroup,
		protocol.APIHeartbeat, protocol.APILeaveGroup, protocol.APIOffsetCommit} {
		if k.String() == name {
			return k
		}
	}
	return 0
}

// addFilter activates filter fault i and installs the world's filter on the
// network. A filter is a harness decision, not Kafka behaviour: it stands for
// a middlebox or a buggy link that loses or holds back chosen messages.
func (w *world) addFilter(i int) {
	mf := w.faults[i].Filter
	af := activeFilter{fault: i, api: apiByName(mf.API), member: -1, drop: mf.Action == scenario.FilterDrop, delay: mf.Delay}
	if mf.Member != "" {
		if s := w.slotByName(mf.Member); s != nil {
			af.member = s.id
		}
	}
	af.req = mf.Direction != scenario.FilterResponse
	af.resp = mf.Direction != scenario.FilterRequest
	w.ext.filters = append(w.ext.filters, af)
	w.net.SetFilter(w.filterMsg)
}

// removeFilter ends filter fault i's window; with no filter left the network
// runs without one (no per-message cost).
func (w *world) removeFilter(i int) {
	fs := w.ext.filters[:0]
	for _, af := range w.ext.filters {
		if af.fault != i {
			fs = append(fs, af)
		}
	}
	w.ext.filters = fs
	if len(fs) == 0 {
		w.net.SetFilter(nil)
	}
}

// filterMsg is the sim.Filter of the world: a message matched by any active
// filter that drops is dropped; otherwise it is delayed by the largest delay
// of the filters that match it.
func (w *world) filterMsg(_ sim.Instant, _, _ sim.NodeID, env envelope) sim.Verdict {
	var v sim.Verdict
	isReq := env.req != nil
	var api protocol.APIKey
	if isReq {
		api = env.req.API()
	} else {
		api = env.resp.API()
	}
	member := w.conns[env.conn].slot
	for k := range w.ext.filters {
		af := &w.ext.filters[k]
		if (isReq && !af.req) || (!isReq && !af.resp) {
			continue
		}
		if af.api != 0 && af.api != api {
			continue
		}
		if af.member >= 0 && af.member != member {
			continue
		}
		if af.drop {
			return sim.Verdict{Drop: true}
		}
		if af.delay > v.Delay {
			v.Delay = af.delay
		}
	}
	return v
}

// filterDetail describes a filter for the fault event's detail, e.g.
// "api=Heartbeat member=payments-2 direction=request action=drop".
func filterDetail(mf *scenario.MessageFilter) string {
	var b strings.Builder
	if mf.API != "" {
		b.WriteString("api=" + mf.API + " ")
	}
	if mf.Member != "" {
		b.WriteString("member=" + mf.Member + " ")
	}
	b.WriteString("direction=" + mf.Direction + " action=" + mf.Action)
	if mf.Action == scenario.FilterDelay {
		b.WriteString(" delay=" + mf.Delay.String())
	}
	return b.String()
}
