package calib

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/routesim/routesim/model"
)

// NoiseTolerance is how much worse than the best σ's spread mismatch a
// smaller σ may be and still be chosen.
const NoiseTolerance = 1.5

// fitNoise picks σ whose seed-to-seed spread of the headline statistics
// matches the measured spread between repetitions.
func (f *fitter) fitNoise(p *model.Profile, opt Options) (float64, string) {
	// Every latency statistic: the spread of any one over three
	// repetitions is itself noisy; their average is steadier.
	var keys []string
	for _, k := range statOrder {
		if k != "requests_per_s" && k != "gpu_util_mean" {
			keys = append(keys, k)
		}
	}
	haveSpread := false
	for _, a := range f.arms {
		for _, k := range keys {
			if a.spread[k] > 0 {
				haveSpread = true
			}
		}
	}
	if !haveSpread {
		return p.NoiseSigma, "noise σ: not identifiable (no repeated runs); kept the starting profile's value"
	}
	best, bestErr := 0.0, math.Inf(1)
	var lines []string
	var errs []float64
	for _, sigma := range opt.NoiseSigmas {
		q := *p
		q.NoiseSigma = sigma
		per := make([][]Stats, len(f.arms))
		for s := 1; s <= opt.Seeds; s++ {
			stats, _, err := f.simulate(&q, uint64(s))
			if err != nil {
				return p.NoiseSigma, "noise σ: simulation failed: " + err.Error()
			}
			for i := range f.arms {
				per[i] = append(per[i], stats[i])
			}
		}
		e, n := 0.0, 0
		for i, a := range f.arms {
			_, spread := meanStats(per[i])
			for _, k := range keys {
				if m, ok := a.spread[k]; ok {
					d := spread[k] - m
					e += d * d
					n++
				}
			}
		}
		if n > 0 {
			e /= float64(n)
		}
		lines = append(lines, fmt.Sprintf("σ=%g: %.2g", sigma, e))
		errs = append(errs, e)
		if e < bestErr {
			bestErr = e
		}
	}
	// Three repetitions pin a spread only roughly: take the smallest σ
	// whose mismatch is within NoiseTolerance of the best, not the
	// noisiest minimum.
	for i, sigma := range opt.NoiseSigmas {
		if errs[i] <= NoiseTolerance*bestErr {
			best = sigma
			break
		}
	}
	return best, fmt.Sprintf("noise σ = %g: the smallest σ whose seed-to-seed relative spread of the %d latency statistics matches the repetitions' within %g× the best mismatch, over %d seeds (mean squared error by σ: %s)",
		best, len(keys), NoiseTolerance, opt.Seeds, strings.Join(lines, "; "))
}

// fitPower fits power = idle + (busy − idle)·util by least squares over
// every device of every run with GPU samples.
func fitPower(p *model.Profile, obs []Observed) string {
	var xs, ys []float64
	for _, o := range obs {
		if o.GPU == nil {
			continue
		}
		for _, d := range o.GPU.Devices {
			xs = append(xs, d.UtilMean)
			ys = append(ys, d.PowerMeanW)
		}
	}
	if len(xs) < 2 || stat.Variance(xs, nil) == 0 {
		return "power: not fitted (needs GPU samples at two or more utilizations); kept the starting profile's line"
	}
	idle, slope := stat.LinearRegression(xs, ys, nil, false)
	r2 := stat.RSquared(xs, ys, nil, idle, slope)
	if idle < 0 || slope < 0 {
		return fmt.Sprintf("power: least squares gave idle %.0f W, slope %.0f W (unphysical); kept the starting profile's line", idle, slope)
	}
	p.PowerIdleW, p.PowerBusyW = idle, idle+slope
	return fmt.Sprintf("power = %.1f W + %.1f W × utilization (least squares over %d devices, R² = %.2f)", idle, slope, len(xs), r2)
}
