package coordinator

import (
	"errors"
	"fmt"
)

// GroupState is the classic group state (GroupMetadata.scala GroupState).
type GroupState uint8

// The group states, with Kafka's names.
const (
	Empty GroupState = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

// String returns Kafka's state name.
func (s GroupState) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	}
	return fmt.Sprintf("GroupState(%d)", uint8(s))
}

// validPreviousState mirrors GroupMetadata.scala's validPreviousStates.
func validPreviousState(from, to GroupState) bool {
	switch to {
	case Empty:
		return from == PreparingRebalance
	case PreparingRebalance:
		return from == Stable || from == CompletingRebalance || from == Empty
	case CompletingRebalance:
		return from == PreparingRebalance
	case Stable:
		return from == CompletingRebalance
	case Dead:
		return true
	}
	return false
}

// Validate checks the configuration against Kafka's rules
// (KafkaConfig validation of the group.* properties).
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("coordinator: Name is empty"))
	}
	if _, ok := c.Profile.features(); !ok {
		errs = append(errs, fmt.Errorf("coordinator: unknown profile %q", c.Profile))
	}
	if c.InitialRebalanceDelay < 0 {
		errs = append(errs, fmt.Errorf("coordinator: group.initial.rebalance.delay.ms %v < 0", c.InitialRebalanceDelay))
	}
	if c.MinSessionTimeout <= 0 {
		errs = append(errs, fmt.Errorf("coordinator: group.min.session.timeout.ms %v <= 0", c.MinSessionTimeout))
	}
	if c.MaxSessionTimeout < c.MinSessionTimeout {
		errs = append(errs, fmt.Errorf("coordinator: group.max.session.timeout.ms %v < group.min.session.timeout.ms %v",
			c.MaxSessionTimeout, c.MinSessionTimeout))
	}
	if c.MaxSize < 1 {
		errs = append(errs, fmt.Errorf("coordinator: group.max.size %d < 1", c.MaxSize))
	}
	if c.NewMemberJoinTimeout <= 0 {
		errs = append(errs, fmt.Errorf("coordinator: NewMemberJoinTimeout %v <= 0", c.NewMemberJoinTimeout))
	}
	if c.AppendBytesPerSecond < 0 {
		errs = append(errs, fmt.Errorf("coordinator: AppendBytesPerSecond %d < 0", c.AppendBytesPerSecond))
	}
	if c.AppendLinger < 0 {
		errs = append(errs, fmt.Errorf("coordinator: group.coordinator.append.linger.ms %v < 0", c.AppendLinger))
	}
	if c.AppendTimeout < 0 {
		errs = append(errs, fmt.Errorf("coordinator: offsets.commit.timeout.ms %v < 0", c.AppendTimeout))
	}
	if !(c.AppendErrorProbability >= 0 && c.AppendErrorProbability <= 1) {
		errs = append(errs, fmt.Errorf("coordinator: AppendErrorProbability %v not in [0, 1]", c.AppendErrorProbability))
	}
	if c.AppendErrorProbability > 0 {
		if c.Rand == nil {
			errs = append(errs, errors.New("coordinator: AppendErrorProbability > 0 needs Rand"))
		}
		if !isLogAppendError(c.AppendError) {
			errs = append(errs, fmt.Errorf("coordinator: AppendError %v is not a log-append error", c.AppendError))
		}
	}
	return errors.Join(errs...)
}
