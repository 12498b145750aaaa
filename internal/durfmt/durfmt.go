// Package durfmt writes durations the way every view of rebalsim does:
// "10.4 s", "45 s", "250 ms" — never Go's "17.914595966s".
package durfmt

import (
	"strconv"
	"time"
)

// Human writes d in seconds to one decimal from one second on ("10.4 s",
// "45 s"), in whole milliseconds below ("250 ms"), in microseconds below a
// millisecond ("12 µs").
func Human(d time.Duration) string {
	neg := ""
	if d < 0 {
		neg, d = "-", -d
	}
	switch {
	case d >= time.Second:
		s := strconv.FormatFloat(float64(d.Round(100*time.Millisecond))/1e9, 'f', -1, 64)
		return neg + s + " s"
	case d >= time.Millisecond:
		return neg + strconv.FormatInt(int64(d.Round(time.Millisecond)/time.Millisecond), 10) + " ms"
	case d == 0:
		return "0 s"
	default:
		return neg + strconv.FormatInt(int64(d.Round(time.Microsecond)/time.Microsecond), 10) + " µs"
	}
}
