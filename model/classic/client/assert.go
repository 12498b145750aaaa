package client

import "github.com/rebalsim/rebalsim/model/protocol"

// assertFailed is the invariant check every part of the client shares (part
// names it: "join", "net", ...). A condition that does not hold (callers test
// it first, so a passing check builds no message) is reported as an
// EvAssertFailed event, which the harness's model-assertion checker turns
// into an invariant violation of the run (with its seed, like any other),
// and the member stops as on a fatal error, so a broken state is never
// carried on silently (nor does one model bug panic a whole sweep).
func (m *Member) assertFailed(out *Output, part, what string) {
	m.emit(out, protocol.Event{Kind: protocol.EvAssertFailed, Detail: part + ": " + what, Gen: m.gen.id()})
	m.fatal(out, protocol.UnknownServerError, "assert")
}

// assertInvariants checks every part's invariant at the end of each entry
// point that changes the member (Start, Step and the other network events,
// TickApp, TickHeartbeat, SlowPoll, Close), through assertFailed: the first
// part whose invariant does not hold stops the member. A stopped member is
// not checked: it is done, and its parts are left as they were when it
// stopped. Each invariant returns "" when it holds (no message is built,
// nothing allocated: TestHeartbeatPathAllocations).
func (m *Member) assertInvariants(out *Output) {
	if m.stopped || !m.started {
		return
	}
	var part, what string
	switch {
	case m.invariant() != "":
		part, what = "member", m.invariant()
	case m.gen.invariant() != "":
		part, what = "generation", m.gen.invariant()
	case m.coord.invariant(m.cfg.behaviour) != "":
		part, what = "lookup", m.coord.invariant(m.cfg.behaviour)
	case m.join.invariant(m.state) != "":
		part, what = "join", m.join.invariant(m.state)
	case m.app.invariant() != "":
		part, what = "app", m.app.invariant()
	case m.hb.invariant() != "":
		part, what = "heartbeat", m.hb.invariant()
	case m.autoCommit.invariant(m.cfg) != "":
		part, what = "commit", m.autoCommit.invariant(m.cfg)
	case m.meta.invariant() != "":
		part, what = "metadata", m.meta.invariant()
	default:
		return
	}
	m.assertFailed(out, part, what)
}
