package durfmt

import (
	"testing"
	"time"
)

func TestHuman(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{17914595966 * time.Nanosecond, "17.9 s"},
		{10400 * time.Millisecond, "10.4 s"},
		{45 * time.Second, "45 s"},
		{999 * time.Millisecond, "999 ms"},
		{250 * time.Millisecond, "250 ms"},
		{0, "0 s"},
		{-1500 * time.Millisecond, "-1.5 s"},
		{12 * time.Microsecond, "12 µs"},
	} {
		if got := Human(tc.d); got != tc.want {
			t.Errorf("Human(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
