// Package vtime is the one vocabulary of virtual time and random durations
// shared by the kernel (sim), the models (model/...) and the harness: one
// Instant, one Never, one Dist. It knows nothing of Kafka and imports
// nothing of the module, so every package may use it without bending
// DESIGN.md's arrows. sim and model/protocol re-export Instant and Never
// under their own names (type aliases: the same type, no conversions).
package vtime

import (
	"math/rand/v2"
	"time"
)

// Instant is virtual time: nanoseconds since the start of a run. Models
// receive it as an argument and never read a clock.
type Instant int64

// Never is the instant of a deadline that is not armed.
const Never Instant = 1<<63 - 1

// Add returns i+d.
func (i Instant) Add(d time.Duration) Instant { return i + Instant(d) }

// Sub returns the duration i-j.
func (i Instant) Sub(j Instant) time.Duration { return time.Duration(i - j) }

// Ms returns the instant in whole milliseconds.
func (i Instant) Ms() int64 { return int64(i) / int64(time.Millisecond) }

// Duration returns i as a duration since the start.
func (i Instant) Duration() time.Duration { return time.Duration(i) }

// String is the instant as a duration since the start, or "never".
func (i Instant) String() string {
	if i == Never {
		return "never"
	}
	return time.Duration(i).String()
}

// Dist is a distribution of durations. Every draw takes its random stream
// explicitly, so which subsystem consumed randomness is always visible.
// sim's distributions (Uniform, Exponential, Lognormal, ...) implement it.
type Dist interface {
	Draw(r *rand.Rand) time.Duration
	String() string
}

// Const is a Dist that always returns its value (it needs no random stream).
type Const time.Duration

// Draw returns the constant.
func (c Const) Draw(*rand.Rand) time.Duration { return time.Duration(c) }

// String is the constant as a duration.
func (c Const) String() string { return time.Duration(c).String() }

// Fixed is the constant: every draw returns it and takes nothing from the
// random stream (a model may then skip the draws, which a large run
// feels: a draw per poll per member).
func (c Const) Fixed() time.Duration { return time.Duration(c) }
