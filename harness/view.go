package harness

import (
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// worldView is the checkers' runView of a world: it answers questions and
// changes nothing.
type worldView struct{ w *world }

func (v worldView) now() sim.Instant { return v.w.q.Now() }

func (v worldView) scenario() *scenario.Scenario { return v.w.sc }

func (v worldView) faults() []scenario.Fault { return v.w.faults }

func (v worldView) partitions(group string) []protocol.TopicPartition {
	if g := v.w.groupByID(group); g != nil {
		return g.partitionList()
	}
	return nil
}

func (v worldView) health() []groupHealth {
	w := v.w
	out := make([]groupHealth, len(w.groups))
	for i, g := range w.groups {
		h := groupHealth{id: g.id, fatal: len(g.m.fatal) > 0, state: g.m.coordState, open: g.m.open, settled: g.m.settled, live: g.m.live}
		for _, c := range g.cohorts {
			h.cohorts = append(h.cohorts, c.sc)
		}
		for _, si := range g.slots {
			if w.slots[si].alive {
				h.procs++
			}
		}
		out[i] = h
	}
	return out
}

func (v worldView) sharedOwnership(i int32) bool {
	w := v.w
	s := w.slots[i]
	if s.cp() == nil && (w.groups[s.group].cs == nil || !w.groups[s.group].cs.active) {
		return false
	}
	return w.groups[s.group].m.extra > 0
}

func (v worldView) slotName(i int32) string { return v.w.slots[i].name }

func (v worldView) subscription(i int32) []string {
	s := v.w.slots[i]
	return v.w.groups[s.group].cohorts[s.cohort].sc.Subscribe
}

func (v worldView) holders(slot int32, tp protocol.TopicPartition) []string {
	w := v.w
	s := w.slots[slot]
	g := w.groups[s.group]
	i, ok := g.m.indexOf(tp)
	if !ok || g.m.owners[i] < 2 {
		return nil
	}
	var holders []string
	for _, si := range g.slots {
		o := w.slots[si]
		if !o.alive || !slicesContains(o.owned, tp) || !w.brokerBelieves(g, o, tp) {
			continue
		}
		holders = append(holders, o.name)
	}
	return holders
}
