// Package nonexhaustive is TestExhaustiveFiresOnDefault's specimen: a
// switch over an error-code enum whose default: absorbs a code it never
// names, the mistake the exhaustive check exists to catch.
package nonexhaustive

// Code is a stand-in for protocol.ErrorCode.
type Code int

const (
	None Code = iota
	UnknownMemberID
	IllegalGeneration
	RebalanceInProgress
)

// Rejoins reports whether the member rejoins after c. It forgets
// RebalanceInProgress, which the default: silently treats as "no".
func Rejoins(c Code) bool {
	// This switch is exhaustive only if a default: counts (-d); the test
	// runs with -d=false, so the analyzer reports RebalanceInProgress
	// missing.
	switch c {
	case None:
		return false
	case UnknownMemberID, IllegalGeneration:
		return true
	default:
		return false
	}
}
