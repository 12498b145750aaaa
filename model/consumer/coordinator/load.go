package coordinator

import (
	"slices"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Unload removes group id from this coordinator (it resigned or died: the
// __consumer_offsets partition moved) and returns it, or nil.
//
// Persistence: the group's records (group epoch, member, target
// assignment, current assignment) are what a Group holds; the harness
// moves the Group itself to the new coordinator. Deviation: the records
// are taken as written at once — the classic model's append latency and
// append errors are not applied to consumer-group records, so a failover
// never loses a consumer-group change.
func (c *Coordinator) Unload(id string) *Group {
	i := slices.IndexFunc(c.groups, func(g *Group) bool { return g.ID == id })
	if i < 0 {
		return nil
	}
	g := c.groups[i]
	c.groups = slices.Delete(c.groups, i, i+1)
	return g
}

// Load makes this coordinator the owner of g as of now, when its shard has
// loaded: every member gets a fresh session timer and every member still
// revoking (UNREVOKED_PARTITIONS) a fresh rebalance timer
// (GroupMetadataManager.onLoaded, kafka-consumer-protocol.md §2.9).
func (c *Coordinator) Load(now protocol.Instant, g *Group) {
	if g == nil || c.Group(g.ID) != nil {
		return
	}
	for _, m := range g.members {
		// GMM.onLoaded (v8.0.0) schedules every member's session timeout
		// with the group's session timeout, classic members' too, and a
		// rebalance timeout for every member in UNREVOKED_PARTITIONS;
		// classic members' join and sync timers are not rescheduled.
		m.sessionDeadline = now.Add(c.sessionTimeout(g.ID))
		m.rebalanceDL = protocol.Never
		if m.classic != nil {
			m.classic.joinDL, m.classic.syncDL = protocol.Never, protocol.Never
		}
		if m.state == UnrevokedPartitions {
			m.rebalanceDL, m.rebalanceEpoch = now.Add(m.RebalanceTimeout), m.epoch
		}
	}
	// The refresh deadline is not a record: a loaded group starts at
	// ModernGroup's DeadlineAndEpoch.EMPTY, so its first heartbeat
	// refreshes the subscription metadata (v8.0.0, v8.3.0) against this
	// broker's image.
	g.metadataExpired = true
	c.groups = append(c.groups, g)
}

// ContinueIDs carries the member-id sequence over from a previous
// incarnation of this broker (ids stay unique across restarts).
func (c *Coordinator) ContinueIDs(prev *Coordinator) {
	if prev != nil {
		c.nextID = prev.nextID
	}
}
