package client

// Profile selects the behaviour of one Kafka client era (see ParseProfile).
type Profile string
