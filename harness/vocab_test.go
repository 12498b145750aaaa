package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// typedText is e with its typed state or trigger set from its text, as the
// engine sets it: for a test that writes events by hand in the trace's
// words.
func typedText(e protocol.Event) protocol.Event {
	protocol.TypeText(&e)
	switch e.Kind {
	case tracing.EvProcess, tracing.EvBrokerProcess:
		e.Process = valueOf[protocol.ProcessState](e.State)
	case tracing.EvGroupType:
		e.Conversion = valueOf[protocol.Conversion](e.Reason)
	}
	return e
}

// valueOf is the value of T whose String() is s (zero: none).
func valueOf[T interface {
	~uint8
	String() string
}](s string) T {
	for v := T(1); v != 0; v++ {
		if v.String() == s {
			return v
		}
	}
	return 0
}

// TestTypedFieldsAgreeWithText: over whole runs of built-in scenarios
// (the classic protocol with faults, the consumer protocol, an online
// migration, a pause), every event's typed fields and its text are one
// fact: the typed state, process step, trigger, conversion, revocation,
// leave request and message fate print exactly the trace's text, a member's event carries its slot, whose name
// is the event's Node, and a fault event its typed scope. The text is what
// is hashed; the typed fields are what the metrics, checkers, oracles and
// explain read, so a disagreement would move a figure without moving the
// hash.
func TestTypedFieldsAgreeWithText(t *testing.T) {
	names := []string{"coordinator-failover", "consumer-crash-one-member", "gc-pause", "rolling-restart-static", "lossy-network",
		"bug-kafka-13419", "migration-timeline.yaml", "migration-swarm.yaml"}
	kinds := map[protocol.EventKind]int{}
	for _, name := range names {
		var src []byte
		if strings.HasSuffix(name, ".yaml") {
			src = []byte(testdataText(t, name))
		} else {
			b, ok := scenario.Builtin(name)
			require.True(t, ok, name)
			src = b
		}
		res := run(t, simtest.Parse(t, string(src)), 1, Options{KeepTrace: true})
		require.NotEmpty(t, res.Trace, name)
		slots := map[int32]string{}
		for i := range res.Trace {
			e := &res.Trace[i]
			switch e.Kind {
			case protocol.EvGroupState:
				assert.Equal(t, e.State, e.GroupState.String(), "%s: %+v", name, e)
				assert.NotEqual(t, protocol.GroupStateNone, e.GroupState, "%s: a state without a name: %+v", name, e)
			case protocol.EvMemberState:
				assert.Equal(t, e.State, e.MemberState.String(), "%s: %+v", name, e)
				assert.NotEqual(t, protocol.MemberStateNone, e.MemberState, "%s: %+v", name, e)
			case tracing.EvProcess, tracing.EvBrokerProcess:
				assert.Equal(t, e.State, e.Process.String(), "%s: %+v", name, e)
				assert.NotEqual(t, protocol.ProcessNone, e.Process, "%s: %+v", name, e)
			case protocol.EvRebalanceStart:
				assert.Equal(t, e.Reason, e.Trigger.String(), "%s: %+v", name, e)
				assert.NotEqual(t, protocol.RebalanceUnknown, e.Trigger, "%s: %+v", name, e)
			case tracing.EvGroupType, protocol.EvMemberAdded:
				assert.Equal(t, e.Reason, e.Conversion.String(), "%s: %+v", name, e)
			case protocol.EvRevoked:
				assert.Equal(t, e.Detail, e.Revocation.String(), "%s: %+v", name, e)
				assert.Equal(t, e.Reason == "fatal", e.Revocation == protocol.LostOnFatal, "%s: %+v", name, e)
				assert.NotEqual(t, protocol.RevocationNone, e.Revocation, "%s: %+v", name, e)
			case protocol.EvLeave:
				assert.Equal(t, e.Detail, e.LeaveRequest.String(), "%s: %+v", name, e)
				assert.NotEqual(t, protocol.LeaveRequestNone, e.LeaveRequest, "%s: %+v", name, e)
			case tracing.EvLost, tracing.EvDrop:
				assert.Equal(t, e.Reason, e.Fate.String(), "%s: %+v", name, e)
				assert.NotEqual(t, tracing.FateNone, e.Fate, "%s: %+v", name, e)
				kinds[e.Kind]++
			case tracing.EvFault, tracing.EvFaultEnd:
				assert.NotNil(t, e.Scope, "%s: %+v", name, e)
			}
			if i, ok := e.Member(); ok {
				kinds[e.Kind]++
				if prev, seen := slots[i]; seen {
					assert.Equal(t, prev, e.Node, "%s: slot %d emits under two names", name, i)
				}
				slots[i] = e.Node
				assert.False(t, strings.HasPrefix(e.Node, scenario.BrokerPrefix), "%s: a broker's event with a slot: %+v", name, e)
			} else {
				assert.NotEqual(t, tracing.EvProcess, e.Kind, "%s: a process event without its slot: %+v", name, e)
			}
		}
	}
	for _, k := range []protocol.EventKind{tracing.EvProcess, protocol.EvMemberState, protocol.EvAssigned, protocol.EvJoined, tracing.EvLost, tracing.EvDrop} {
		assert.Positive(t, kinds[k], "no %s event checked", k)
	}
}
