package client

import "github.com/rebalsim/rebalsim/model/protocol"

// This file dispatches responses and request failures to the parts that
// handle them (CoordinatorResponseHandler.onFailure is here; the handlers
// themselves are FindCoordinatorResponseHandler in lookup.go,
// JoinGroupResponseHandler and SyncGroupResponseHandler in join.go,
// HeartbeatResponseHandler in hbthread.go and hbtask.go,
// OffsetCommitResponseHandler in commit.go). Every handler lists every
// ErrorCode explicitly; codes outside protocol.AllErrorCodes fall through to
// the "unexpected" branch after the switch.

// handleResponse dispatches one response on the current thread. Responses
// whose correlation id is no longer in flight (timed out, disconnected) are
// ignored, as NetworkClient drops them with the connection.
func (m *Member) handleResponse(now protocol.Instant, out *Output, corr uint64, resp protocol.Response) {
	e, ok := m.net.Complete(corr)
	if !ok {
		return
	}
	if resp.API() != e.API {
		m.assertFailed(out, "net", "response "+resp.API().String()+" for a "+e.API.String()+" request")
		return
	}
	switch r := resp.(type) {
	case *protocol.FindCoordinatorResponse:
		m.handleFindCoordinator(now, out, e, r)
	case *protocol.JoinGroupResponse:
		m.handleJoinGroup(now, out, e, r)
	case *protocol.SyncGroupResponse:
		m.handleSyncGroup(now, out, e, r)
	case *protocol.HeartbeatResponse:
		m.hbt.handleResponse(now, out, e, r.Error)
	case *protocol.LeaveGroupResponse:
		// LeaveGroupResponseHandler only logs: leaving is fire-and-forget.
	case *protocol.OffsetCommitResponse:
		m.commitCompleted(now, out, e, m.handleOffsetCommit(now, out, e, r.Error))
	default:
		m.assertFailed(out, "net", "unknown response type for "+resp.API().String())
	}
}

// onRequestFailure is CoordinatorResponseHandler.onFailure: for a
// DisconnectException (disconnect, request timeout) the coordinator is
// marked unknown (AbstractCoordinator 3.7.0 ~1286-1291), then the request's
// future fails (retriable). An unsent request that expired fails with a
// TimeoutException, which marks nothing (disconnect false).
func (m *Member) onRequestFailure(now protocol.Instant, out *Output, e inflight, disconnect bool) {
	err := protocol.NetworkException
	if !disconnect {
		err = protocol.RequestTimedOut
	}
	if disconnect && e.API != protocol.APIFindCoordinator && e.API != protocol.APILeaveGroup {
		m.markCoordinatorDisconnected(out, deadDisconnect)
	}
	switch e.API {
	case protocol.APIFindCoordinator:
		current := m.coord.findDone(e.Corr, true, m.onApp, m.cfg.behaviour)
		m.coord.findCoordinatorFailed(now, current, m.onApp, m.cfg, m.rng)
	case protocol.APIJoinGroup:
		if e.Corr == m.join.joinCorr {
			m.failJoin(out, err, failRetriable)
		}
	case protocol.APISyncGroup:
		if e.Corr == m.join.syncCorr {
			m.failJoin(out, err, failRetriable)
		}
	case protocol.APIHeartbeat:
		m.hbt.requestFailed(now)
	case protocol.APIOffsetCommit:
		m.commitCompleted(now, out, e, commitRetriable)
	case protocol.APILeaveGroup:
	case protocol.APIConsumerGroupHeartbeat: // a classic member never sends one
	}
}

func rejoinReasonFor(err protocol.ErrorCode) RejoinReason {
	if err == protocol.IllegalGeneration {
		return RejoinIllegalGeneration
	}
	return RejoinRebalanceInProgress
}
