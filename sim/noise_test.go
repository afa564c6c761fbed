package sim

import (
	"math"
	"testing"
)

// TestNoiseFactorDistribution: the step factor is lognormal with mean 1 and
// log-sd σ, the same for the same (seed, worker, step), and unrelated
// across workers and seeds.
func TestNoiseFactorDistribution(t *testing.T) {
	const n, sigma = 200000, 0.1
	key := newStepNoise(7, 3)
	var sum, sumLog, sumLog2 float64
	for k := 0; k < n; k++ {
		f := key.factor(k, sigma)
		if f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			t.Fatalf("step %d: factor %g", k, f)
		}
		sum += f
		l := math.Log(f)
		sumLog += l
		sumLog2 += l * l
	}
	mean := sum / n
	ml := sumLog / n
	sd := math.Sqrt(sumLog2/n - ml*ml)
	// Standard errors: mean ≈ σ/√n = 2.2e-4, sd ≈ σ/√(2n) = 1.6e-4.
	if math.Abs(mean-1) > 1e-3 || math.Abs(sd-sigma) > 1e-3 || math.Abs(ml+sigma*sigma/2) > 1e-3 {
		t.Errorf("mean %.5f (want 1), log mean %.5f (want %.5f), log sd %.5f (want %g)", mean, ml, -sigma*sigma/2, sd, sigma)
	}
	if key.factor(42, sigma) != newStepNoise(7, 3).factor(42, sigma) {
		t.Error("the same step's factor differs between calls")
	}
	// Paired factors of two workers, and of two seeds, are uncorrelated.
	for _, other := range []*stepNoise{newStepNoise(7, 4), newStepNoise(8, 3)} {
		var sxy, sx, sy, sxx, syy float64
		for k := 0; k < n; k++ {
			x, y := math.Log(key.factor(k, 1)), math.Log(other.factor(k, 1))
			sx, sy, sxy, sxx, syy = sx+x, sy+y, sxy+x*y, sxx+x*x, syy+y*y
		}
		r := (sxy/n - sx/n*sy/n) / math.Sqrt((sxx/n-sx/n*sx/n)*(syy/n-sy/n*sy/n))
		if math.Abs(r) > 0.01 { // 4.5 standard errors
			t.Errorf("correlation %.4f between two streams' factors", r)
		}
	}
	if key.factor(5, 0) != 1 {
		t.Error("σ = 0 is not a factor of 1")
	}
}

func BenchmarkNoiseFactor(b *testing.B) {
	key := newStepNoise(1, 0)
	s := 0.0
	for i := 0; b.Loop(); i++ {
		s += key.factor(i, 0.1)
	}
	_ = s
}
