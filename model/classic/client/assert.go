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
