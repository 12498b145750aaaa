package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/vtime"
)

// TestDrawResidual: the mean time left of a step at a random instant is
// E[X²]/2E[X] (the length-biased residual life of renewal theory), for
// every distribution the scenario language has, over many draws from one
// seeded stream; and it is not the E[X]/2 of a uniform fraction of one
// fresh draw, except for a constant.
func TestDrawResidual(t *testing.T) {
	ms := func(v float64) float64 { return v * float64(time.Millisecond) }
	sigma := math.Log(10) / z99 // lognormal median 200 ms, p99 2 s
	for _, c := range []struct {
		d      vtime.Dist
		ex, e2 float64 // E[X], E[X²]
	}{
		{vtime.Const(100 * time.Millisecond), ms(100), ms(100) * ms(100)},
		{Uniform{Min: 50 * time.Millisecond, Max: 450 * time.Millisecond}, ms(250), (ms(50)*ms(50) + ms(50)*ms(450) + ms(450)*ms(450)) / 3},
		{Uniform{Min: 0, Max: time.Second}, ms(500), ms(1000) * ms(1000) / 3},
		{Exponential{Min: 10 * time.Millisecond, Mean: 200 * time.Millisecond}, ms(200), ms(190)*ms(190) + ms(200)*ms(200)},
		{Exponential{Min: 0, Mean: 300 * time.Millisecond}, ms(300), 2 * ms(300) * ms(300)},
		{Lognormal{Median: 200 * time.Millisecond, P99: 2 * time.Second}, ms(200) * math.Exp(sigma*sigma/2), ms(200) * ms(200) * math.Exp(2*sigma*sigma)},
		{Lognormal{Median: 50 * time.Millisecond, P99: 100 * time.Millisecond}, 0, 0}, // moments below
	} {
		if l, ok := c.d.(Lognormal); ok && c.ex == 0 {
			s := math.Log(float64(l.P99)/float64(l.Median)) / z99
			c.ex = float64(l.Median) * math.Exp(s*s/2)
			c.e2 = float64(l.Median) * float64(l.Median) * math.Exp(2*s*s)
		}
		want := c.e2 / (2 * c.ex)
		r := NewStreams(7).Stream("residual/" + c.d.String())
		const n = 400000
		sum := 0.0
		for range n {
			v := vtime.DrawResidual(c.d, r)
			if v < 0 {
				t.Fatalf("%v: negative residual %v", c.d, v)
			}
			sum += float64(v)
		}
		got := sum / n
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("%v: mean residual %.2f ms, want E[X²]/2E[X] = %.2f ms (±1%%)", c.d, got/1e6, want/1e6)
		}
		if _, constant := c.d.(vtime.Const); !constant && math.Abs(got-c.ex/2) < 0.05*want {
			t.Errorf("%v: mean residual %.2f ms is the uniform fraction's E[X]/2", c.d, got/1e6)
		}
	}
}

// TestDrawResidualFallback: a distribution without its own DrawResidual is
// resampled by length; the approximation's mean is within a few per cent
// of E[X²]/2E[X] (uniform on [0, 1 s] behind an opaque wrapper: 333 ms).
func TestDrawResidualFallback(t *testing.T) {
	d := opaque{Uniform{Min: 0, Max: time.Second}}
	r := NewStreams(7).Stream("residual/fallback")
	const n = 100000
	sum := 0.0
	for range n {
		sum += float64(vtime.DrawResidual(d, r))
	}
	want := float64(time.Second) / 3
	if got := sum / n; math.Abs(got-want) > 0.03*want {
		t.Errorf("fallback mean residual %.2f ms, want %.2f ms (±3%%)", got/1e6, want/1e6)
	}
}

type opaque struct{ d vtime.Dist }

func (o opaque) Draw(r *rand.Rand) time.Duration { return o.d.Draw(r) }
func (o opaque) String() string                  { return "opaque " + o.d.String() }
