package protocol

// SelectProtocol is the classic group's protocol vote, shared by the classic
// coordinator and the consumer-group coordinator's downgrade to a classic
// group: GroupMetadata.selectProtocol (Scala, ≤3.9) and
// ClassicGroup.selectProtocol (4.x). Candidates are the protocols every
// member supports; each member votes for its most preferred candidate
// (MemberMetadata.vote); most votes wins.
//
// n is the number of members and protocols(i) member i's preference list
// (member 0 joined first); supportedByAll(name) reports whether every member
// lists name. It returns "" for no member or no common protocol.
//
// Deviation: Kafka breaks a tie by hash-map order (maxBy over a groupBy);
// here the tie goes to the candidate that comes first in the preference list
// of the earliest-joined member (deterministic, and what a single-member
// group would choose). Each member votes once (O(members × protocols), as
// Kafka's allMemberMetadata.map(_.vote(candidates))); every vote is a
// candidate and every candidate is in member 0's list, so the tally is kept
// by position in that list.
func SelectProtocol(n int, protocols func(i int) []GroupProtocol, supportedByAll func(name string) bool) string {
	if n == 0 {
		return ""
	}
	first := protocols(0)
	var small [4]int
	tally := small[:0]
	if len(first) <= len(small) {
		tally = small[:len(first)]
	} else {
		tally = make([]int, len(first))
	}
	for i := range n {
		v := Vote(protocols(i), supportedByAll)
		for j := range first {
			if first[j].Name == v {
				tally[j]++
				break
			}
		}
	}
	best, bestVotes := "", -1
	for j := range first {
		if cand := first[j].Name; supportedByAll(cand) && tally[j] > bestVotes {
			best, bestVotes = cand, tally[j]
		}
	}
	return best
}

// Vote is MemberMetadata.vote: the member's first protocol that every
// member supports, or "" when none is.
func Vote(protocols []GroupProtocol, supportedByAll func(name string) bool) string {
	for i := range protocols {
		if supportedByAll(protocols[i].Name) {
			return protocols[i].Name
		}
	}
	return ""
}
