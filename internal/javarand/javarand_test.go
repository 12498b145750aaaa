package javarand

import (
	"math"
	"testing"
)

// The expected values below were printed by OpenJDK 17.0.15 (java.util.Random
// and a copy of realkafka/java/Driver.java's Dist.draw), not by this package.

// TestNextInt: nextInt() is next(32); seeds that differ only above bit 48,
// or by the scrambling constant's complement, give the same stream (the
// seed is masked to 48 bits: 0 and Long.MIN_VALUE, -1 and Long.MAX_VALUE).
func TestNextInt(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		want []int32
	}{
		{0, []int32{-1155484576, -723955400, 1033096058}},
		{1, []int32{-1155869325, 431529176, 1761283695}},
		{-1, []int32{1155099827, 1887904451, 52699159}},
		{42, []int32{-1170105035, 234785527, -1360544799}},
		{2157490994059664310, []int32{-1534052704, 1284745268, 1172725898}},
		{8359315389184005889, []int32{-1510733804, 575542808, 1014021063}},
		{math.MinInt64, []int32{-1155484576, -723955400, 1033096058}},
		{9223372036854775807, []int32{1155099827, 1887904451, 52699159}},
	} {
		r := New(tc.seed)
		for i, w := range tc.want {
			if got := r.Next(32); got != w {
				t.Errorf("seed %d: nextInt #%d = %d, Java %d", tc.seed, i+1, got, w)
			}
		}
	}
}

func TestNextDouble(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		want []float64
	}{
		{0, []float64{0.730967787376657, 0.24053641567148587, 0.6374174253501083}},
		{1, []float64{0.7308781907032909, 0.41008081149220166, 0.20771484130971707}},
		{-1, []float64{0.26894263088050496, 0.012269981921235296, 0.6620844841121951}},
		{42, []float64{0.7275636800328681, 0.6832234717598454, 0.30871945533265976}},
		{2157490994059664310, []float64{0.6428255185354957, 0.2730465358220283, 0.17892551808020674}},
		{8359315389184005889, []float64{0.6482548733652234, 0.23609518174596844, 0.3091577523621143}},
		{math.MinInt64, []float64{0.730967787376657, 0.24053641567148587, 0.6374174253501083}},
		{9223372036854775807, []float64{0.26894263088050496, 0.012269981921235296, 0.6620844841121951}},
	} {
		r := New(tc.seed)
		for i, w := range tc.want {
			if got := r.NextDouble(); got != w {
				t.Errorf("seed %d: nextDouble #%d = %v, Java %v", tc.seed, i+1, got, w)
			}
		}
	}
}

// TestNextGaussian: five calls, so the cached second value is returned
// (calls 2 and 4) and the cache is emptied by returning it.
func TestNextGaussian(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		want []float64
	}{
		{0, []float64{0.8025330637390305, -0.9015460884175122, 2.080920790428163, 0.7637707684364894, 0.9845745328825128}},
		{1, []float64{1.561581040188955, -0.6081826070068602, -1.0912278829447088, -0.6245401364066232, -1.1182832102556484}},
		{-1, []float64{1.7853314409882288, -0.9204169061847902, 0.4869392448030407, 0.4568888042977182, 1.6999200838250526}},
		{42, []float64{1.1419053154730547, 0.9194079489827879, -0.9498666368908959, -1.1069902863993377, 0.2809776380727795}},
		{2157490994059664310, []float64{0.840832398481987, -1.33610455320093, -1.2998302582516903, 0.1945758670363764, -0.48903723431522644}},
		{8359315389184005889, []float64{0.693952892774437, -1.2352883105119998, -0.5639979090715689, -0.9385359822588772, 0.13928421495824822}},
		{math.MinInt64, []float64{0.8025330637390305, -0.9015460884175122, 2.080920790428163, 0.7637707684364894, 0.9845745328825128}},
		{9223372036854775807, []float64{1.7853314409882288, -0.9204169061847902, 0.4869392448030407, 0.4568888042977182, 1.6999200838250526}},
	} {
		r := New(tc.seed)
		for i, w := range tc.want {
			if got := r.NextGaussian(); got != w {
				t.Errorf("seed %d: nextGaussian #%d = %v, Java %v", tc.seed, i+1, got, w)
			}
		}
	}
}

// TestGaussianCacheSurvivesNextDouble: the cached value is not dropped by
// other draws in between (Java's haveNextNextGaussian is only cleared by
// nextGaussian and setSeed).
func TestGaussianCacheSurvivesNextDouble(t *testing.T) {
	r := New(7)
	got := []float64{r.NextGaussian(), r.NextDouble(), r.NextGaussian(), r.NextGaussian()}
	want := []float64{0.8452060657049847, 0.34830970303125697, 0.9128761787534405, 0.5839644686524605}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("draw #%d = %v, Java %v", i+1, got[i], want[i])
		}
	}
}

// TestDistDraw: Driver.Dist.draw for each kind, twelve draws from one
// Random, as the driver's consume loop makes them.
func TestDistDraw(t *testing.T) {
	for _, tc := range []struct {
		spec string
		seed int64
		want []int64
	}{
		{"constant:100:0", 1, []int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
		{"constant:100:0", 2157490994059664310, []int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
		{"uniform:100:4000", 1, []int64{2950, 1699, 910, 1397, 3874, 123, 3858, 3765, 3794, 3754, 1648, 1455}},
		{"uniform:100:4000", 2157490994059664310, []int64{2607, 1164, 797, 2237, 1079, 724, 2053, 1945, 2686, 918, 1412, 550}},
		{"exponential:10:500", 1, []int64{666, 273, 126, 212, 1727, 13, 1668, 1415, 1480, 1392, 263, 223}},
		{"exponential:10:500", 2157490994059664310, []int64{524, 169, 108, 407, 154, 97, 357, 330, 554, 127, 215, 71}},
		{"lognormal:200:2000", 1, []int64{938, 109, 67, 107, 66, 38, 31, 212, 133, 265, 310, 77}},
		{"lognormal:200:2000", 2157490994059664310, []int64{459, 53, 55, 242, 123, 103, 223, 6, 371, 66, 144, 92}},
	} {
		d, err := ParseDist(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := New(tc.seed)
		for i, w := range tc.want {
			if got := d.Draw(r); got != w {
				t.Errorf("%s seed %d: draw #%d = %d, Java %d", tc.spec, tc.seed, i+1, got, w)
			}
		}
	}
}

// TestDistDrawLongRun: 100,000 draws agree in sum with Java's, so a
// one-ulp difference between Go's math.Log/Exp and Java's Math.log/exp
// that crossed a whole millisecond would show.
func TestDistDrawLongRun(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want int64
	}{
		{"lognormal:200:2000", 32670109},
		{"exponential:10:500", 50788680},
	} {
		d, err := ParseDist(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := New(2157490994059664310)
		sum := int64(0)
		for range 100000 {
			sum += d.Draw(r)
		}
		if sum != tc.want {
			t.Errorf("%s: sum of 100,000 draws = %d, Java %d", tc.spec, sum, tc.want)
		}
	}
}

func TestParseDist(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Dist
		err  bool
	}{
		{"constant:100", Dist{Kind: "constant", A: 100}, false},
		{"constant", Dist{Kind: "constant"}, false},
		{"lognormal:200:2000", Dist{Kind: "lognormal", A: 200, B: 2000}, false},
		{"uniform:1.5:3", Dist{Kind: "uniform", A: 1.5, B: 3}, false},
		{"gamma:1:2", Dist{}, true},
		{"uniform:x:3", Dist{}, true},
	} {
		got, err := ParseDist(tc.spec)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseDist(%q) = %+v, %v; want %+v (error %v)", tc.spec, got, err, tc.want, tc.err)
		}
	}
}

// TestJavaLong: Java's (long) cast (JLS §5.1.3).
func TestJavaLong(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want int64
	}{
		{1.9, 1}, {-1.9, -1}, {math.NaN(), 0}, {math.Inf(1), math.MaxInt64}, {math.Inf(-1), math.MinInt64}, {1e300, math.MaxInt64},
	} {
		if got := javaLong(tc.x); got != tc.want {
			t.Errorf("javaLong(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
}
