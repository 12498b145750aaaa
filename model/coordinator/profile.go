package coordinator

// Profile selects the behaviour of one Kafka broker era.
type Profile string
