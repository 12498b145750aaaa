package client

import "github.com/rebalsim/rebalsim/model/assign"

// defaultAssignorLookup resolves partition.assignment.strategy names.
func defaultAssignorLookup(name string) (assign.Assignor, bool) { return assign.ByName(name) }
