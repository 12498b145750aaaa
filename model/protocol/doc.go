// Package protocol is the vocabulary the models speak, and nothing else: the
// requests and responses of both group protocols as plain values (the
// classic FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup and
// OffsetCommit; KIP-848's ConsumerGroupHeartbeat), Kafka's error codes with
// their real numbers (Errors.java), the typed trace events and reasons the
// models emit, wire-size estimates, and the few pure rules both sides of a
// protocol share (ExponentialBackoff, the classic protocol vote). Instant
// and Never are vtime's (aliases).
//
// A client and a coordinator never import each other: they speak only
// through these values, as etcd raft's nodes speak only through raftpb.
// The package is a leaf of the model: it imports vtime and the standard
// library only (internal/archtest checks it).
package protocol
