package protocol

import (
	"math"
	"math/rand/v2"
	"time"
)

// ExponentialBackoff is org.apache.kafka.common.utils.ExponentialBackoff
// (initial, 2, max, 0.2).backoff(attempts), in whole milliseconds as in
// Java: initial·2^min(attempts, log2(max/initial)), times a jitter factor
// drawn in [0.8, 1.2) from rng, truncated. When max <= initial it returns
// initial without a draw (the class before 3.7). capped=false leaves the
// jittered value uncapped, as the class did before 3.7 (2.8.0: `return
// (long) (randomFactor * term)`), so a reconnect backoff could reach 1.2·max.
//
// Kafka: ExponentialBackoff.backoff @3.7.0
func ExponentialBackoff(initial, maxD time.Duration, attempts int32, rng *rand.Rand, capped bool) time.Duration {
	b, mx := float64(initial.Milliseconds()), float64(maxD.Milliseconds())
	if mx <= b {
		return initial
	}
	exp := math.Min(float64(attempts), math.Log(mx/math.Max(b, 1))/math.Log(2))
	v := (0.8 + 0.4*rng.Float64()) * b * math.Pow(2, exp)
	if capped {
		v = math.Min(v, mx)
	}
	return time.Duration(int64(v)) * time.Millisecond
}

// RetryBackoff is the consumer's retry.backoff.ms / retry.backoff.max.ms
// backoff (KIP-580, 3.7+): the 3.7 class, whose constructor takes
// min(initial, max) as the initial interval and caps the jittered value, so
// when retry.backoff.max.ms is not above retry.backoff.ms the maximum is a
// constant backoff.
func RetryBackoff(retry, retryMax time.Duration, attempts int32, rng *rand.Rand) time.Duration {
	if retryMax <= retry {
		return retryMax
	}
	return ExponentialBackoff(retry, retryMax, attempts, rng, true)
}
