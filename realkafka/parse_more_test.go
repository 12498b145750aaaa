package realkafka

// Lines captured from runs added as they are made (3.9.1 broker; dead
// marks and LeaveGroup of each client version).
var want391 = []wantBroker{}

var clientCases = map[string][]wantClient{}
