package tracing

import (
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/vtime"
)

// ObsKind is the kind of a typed observation: what the harness's one
// classifier made of the model events of a run. Every view of a run (the
// JSON summary, `simrun run`'s timeline, `simrun explain`, Perfetto and
// --timeline) reads observations, never the reason text of trace events, so
// they cannot disagree on what an eviction is.
type ObsKind uint8

const (
	// ObsEviction: the coordinator removed a member it judged gone: its
	// session expired, it missed the rebalance, sync or new-member timer, the
	// group was over group.max.size, or the member left because its
	// poll timer (max.poll.interval.ms) expired. False when the member's
	// process was alive (a poll-timeout leave always comes from a live
	// process; a max-size removal is never false: it is not a liveness
	// judgement).
	ObsEviction ObsKind = iota + 1
	// ObsLeave: a member left with LeaveGroup for any other reason (close).
	ObsLeave
	// ObsFence: a static member's old member id was replaced by a new
	// JoinGroup with the same group.instance.id (KIP-345). Not an eviction.
	ObsFence
	// ObsDeadMark: a client marked its coordinator unknown. False when the
	// broker it used was alive and still the group's coordinator.
	ObsDeadMark
	// ObsGeneration: the coordinator completed a join phase (a generation
	// bump).
	ObsGeneration
	// ObsSettle: a settle episode ended (or was still open at the end of the
	// run): Episode holds it.
	ObsSettle
	// ObsFault: a fault started (explicit, swarm or rolling).
	ObsFault
)

var obsText = [...]string{"", "eviction", "leave", "fence", "coordinator-dead", "generation", "settle-episode", "fault"}

func (k ObsKind) String() string {
	if int(k) < len(obsText) {
		return obsText[k]
	}
	return "unknown"
}

// Observation is one classified fact of a run. Seq is the index of the
// trace event that produced it (Result.Trace[Seq] when the trace was kept).
type Observation struct {
	Kind ObsKind
	At   vtime.Instant
	Seq  int64
	// Group is the group id; Member the member name ("payments-3") whose
	// process the fact concerns, MemberID the coordinator's member id, and
	// Process the incarnation of the member's slot (1 for the first
	// process; 0 when unknown).
	Group    string
	Member   string
	MemberID string
	Process  uint32
	False    bool
	Removal  protocol.RemovalReason // ObsEviction, ObsLeave, ObsFence
	Leave    protocol.LeaveReason   // ObsEviction by poll timeout, ObsLeave
	Dead     protocol.DeadReason    // ObsDeadMark
	DeadErr  protocol.ErrorCode     // ObsDeadMark with DeadErrorResponse
	Broker   string                 // ObsDeadMark: the coordinator the client gave up on
	Gen      int32                  // ObsGeneration, ObsDeadMark: the generation
	Fault    string                 // ObsFault: the fault kind; Detail its target
	Detail   string
	Episode  *Rebalance // ObsSettle
}

// Cause names why an eviction, leave, fence or dead mark happened, in the
// vocabulary of INTERFACE.md's triggers ("session-expired", "poll-timeout",
// "rebalance-timeout", "sync-timeout", "new-member-timeout", "max-size",
// "fenced", "leave"; dead marks: "session-timeout", "request-timeout",
// "disconnect", or the error code).
func (o *Observation) Cause() string {
	switch o.Kind {
	case ObsEviction, ObsLeave, ObsFence:
		if o.Removal == protocol.RemovalLeave && o.Leave == protocol.LeavePollTimeout {
			return "poll-timeout"
		}
		return o.Removal.String()
	case ObsDeadMark:
		return protocol.DeadReasonText(o.Dead, o.DeadErr)
	case ObsFault:
		return o.Fault
	}
	return ""
}

// Counts tallies observations per kind; the consistency tests compare the
// counts every view gives against it.
type Counts struct {
	Evictions, FalseEvictions int
	Leaves, Fences            int
	DeadMarks, FalseDeadMarks int
	Generations               int
	SettleEpisodes            int
}

// CountObservations tallies obs of one group ("" for all groups).
func CountObservations(obs []Observation, group string) Counts {
	var c Counts
	for i := range obs {
		o := &obs[i]
		if group != "" && o.Group != group {
			continue
		}
		switch o.Kind {
		case ObsEviction:
			c.Evictions++
			if o.False {
				c.FalseEvictions++
			}
		case ObsLeave:
			c.Leaves++
		case ObsFence:
			c.Fences++
		case ObsDeadMark:
			c.DeadMarks++
			if o.False {
				c.FalseDeadMarks++
			}
		case ObsGeneration:
			c.Generations++
		case ObsSettle:
			c.SettleEpisodes++
		}
	}
	return c
}

// Rebalance is one settle episode as DESIGN.md defines it: from the
// coordinator leaving Stable to every live member Stable in one generation
// holding its assignment. One episode can span many generations.
type Rebalance struct {
	// Generation is the generation the episode settled in (the last one).
	Generation int32  `json:"generation"`
	StartMs    int64  `json:"start_ms"`
	EndMs      int64  `json:"end_ms"`
	DurationMs int64  `json:"duration_ms"`
	Trigger    string `json:"trigger"`
	Members    int    `json:"members"`
	// Incomplete marks a rebalance still open when the run ended: EndMs is
	// the end of the run, and it is left out of rebalance_duration_ms.
	Incomplete bool `json:"incomplete,omitempty"`
	// FirstGeneration is the first generation the coordinator completed in
	// the episode (Generation when it completed none, e.g. a failover that
	// reloaded a Stable group); Generations the number it completed.
	FirstGeneration int32 `json:"first_generation"`
	Generations     int   `json:"generations"`
}
