package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDurationOfRounds checks durationOf against its definition,
// max(Time(math.Round(ns)), 1) below maxDuration, on halves, the largest
// double below a half, binade edges, huge, negative and non-finite values,
// and random step times (bit for bit: outputs depend on it).
func TestDurationOfRounds(t *testing.T) {
	want := func(ns float64) Time { return max(Time(math.Round(ns)), 1) }
	cases := []float64{0, 0.5, 1, 1.5, 2.5, 0.49999999999999994, 1.4999999999999998,
		math.Nextafter(0.5, 0), math.Nextafter(2.5, 3), 1 << 23, 1<<23 - 0.5, 1<<52 - 0.5,
		1 << 52, 1<<53 + 2, 1e18, -0.4, -0.5, -1.5, -1e300, 48_213_917.5, 48_213_917.499999996}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		x := rng.Float64() * math.Pow(10, float64(rng.IntN(12)))
		cases = append(cases, x, math.Floor(x)+0.5, math.Nextafter(math.Floor(x)+0.5, 0))
	}
	for _, x := range cases {
		if got, w := durationOf(x), want(x); got != w {
			t.Fatalf("durationOf(%v) = %d, want %d", x, got, w)
		}
	}
	// From maxDuration on, and for NaN and +Inf, the answer is
	// maxDuration: never a wrapped negative or a 1 ns step (the
	// conversion of a double past the clock's range is undefined; on amd64
	// it gave math.MinInt64, so 1e19 ns became a 1 ns step).
	for _, tc := range []struct {
		ns   float64
		want Time
	}{
		{math.NaN(), maxDuration}, {math.Inf(1), maxDuration}, {1e19, maxDuration}, {9.3e18, maxDuration},
		{math.MaxFloat64, maxDuration}, {float64(maxDuration), maxDuration}, {math.Nextafter(float64(maxDuration), 0), want(math.Nextafter(float64(maxDuration), 0))},
		{math.Inf(-1), 1}, {1 << 53, 1 << 53},
	} {
		if got := durationOf(tc.ns); got != tc.want {
			t.Errorf("durationOf(%v) = %d, want %d", tc.ns, got, tc.want)
		}
	}
	// A time within the horizon plus any duration stays on the clock.
	if Horizon+maxDuration < Horizon {
		t.Errorf("Horizon + maxDuration overflows")
	}
}
