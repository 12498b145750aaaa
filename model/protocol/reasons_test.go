package protocol

import "testing"

// TestReasonText: every typed reason's String() is the exact text traces
// carried before the types existed (so golden traces and trace hashes did
// not change), and consumers can switch on the type instead of the text
// (matching on reason text breaks silently when a text changes).
func TestReasonText(t *testing.T) {
	for r, want := range map[RemovalReason]string{
		RemovalSessionExpired: "session-expired", RemovalNewMemberTimeout: "new-member-timeout", RemovalLeave: "leave",
		RemovalRebalanceTimeout: "rebalance-timeout", RemovalSyncTimeout: "sync-timeout", RemovalMaxSize: "max-size", RemovalFenced: "fenced",
	} {
		if r.String() != want {
			t.Errorf("%d: %q, want %q", r, r.String(), want)
		}
	}
	for r, want := range map[LeaveReason]string{
		LeavePollTimeout: "consumer poll timeout has expired", LeaveClose: "the consumer is being closed",
	} {
		if r.String() != want {
			t.Errorf("%d: %q, want %q", r, r.String(), want)
		}
	}
	for r, want := range map[DeadReason]string{
		DeadSessionTimeout: "session-timeout", DeadRequestTimeout: "request-timeout", DeadDisconnect: "disconnect",
		DeadCoordinatorUnavailable: "coordinator-unavailable",
	} {
		if got := DeadReasonText(r, None); got != want {
			t.Errorf("%d: %q, want %q", r, got, want)
		}
	}
	if got := DeadReasonText(DeadErrorResponse, NotCoordinator); got != NotCoordinator.String() {
		t.Errorf("error response: %q", got)
	}
}
