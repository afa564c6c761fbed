package calib

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/routesim/routesim/model"
)

// noiseKeys are the statistics whose run-to-run spread σ must reproduce:
// the TTFT, ITL and TTST levels. Not E2E: a real run's answers end at a
// sampled end-of-sequence, so output lengths differ between repetitions
// (the 8×A100 study's OSL means 148.0, 149.8 and 149.5 tokens over one
// trace) while a replay holds them fixed, and that spread is no step
// noise. Not throughput, utilisation or completeness, which the arrival
// schedule fixes.
func noiseKeys() []string {
	var keys []string
	for _, k := range statOrder {
		if strings.HasPrefix(k, "ttft_") || strings.HasPrefix(k, "itl_") || strings.HasPrefix(k, "ttst_") {
			keys = append(keys, k)
		}
	}
	return keys
}

// NoiseSupport is the drop in log-likelihood, from its best grid point,
// within which σ is reported as supported by the repetitions: half the
// 95 % quantile of χ²(1), a likelihood-ratio interval for one parameter.
const NoiseSupport = 1.92

// fitNoise picks σ, the step-time noise, by the likelihood of the measured
// spread between repetitions. For arm a and statistic k, n repetitions give
// a sample variance v of the statistic relative to its mean; S seeds of the
// simulation at σ give w. If the repetitions and the seeds spread alike,
// v/w follows Fisher's F(n−1, S−1), so the density of v is f(v/w)/w. The
// log-likelihoods add over statistics and arms, each arm's scaled to
// EffectiveObservations (its statistics move together). A σ whose seeds
// never differ while the repetitions do is impossible (−∞): a noiseless
// replay cannot explain runs that differ. The σ within NoiseSupport of the
// best grid point are what the data leave open, and σ is the smallest of
// them: three repetitions and a few seeds make the likelihood flat and
// noisy across that set (the 8×A100 fit's best point moved from 0.1 to 0.3
// with the seeds' draws, its smallest supported one stayed at 0.075), and
// the least noise the repetitions allow disturbs the within-run
// distributions the coefficients were fitted to least.
func (f *fitter) fitNoise(p *model.Profile, opt Options) (float64, string) {
	keys := noiseKeys()
	haveSpread := false
	for _, a := range f.arms {
		for _, k := range keys {
			if a.reps > 1 && a.spread[k] > 0 {
				haveSpread = true
			}
		}
	}
	if !haveSpread || opt.Seeds < 2 {
		return p.NoiseSigma, "noise σ: not identifiable (no repeated runs); kept the starting profile's value"
	}
	logL := make([]float64, len(opt.NoiseSigmas))
	for j, sigma := range opt.NoiseSigmas {
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
		for i, a := range f.arms {
			_, spread := meanStats(per[i])
			logL[j] += spreadLogLikelihood(a, spread, keys, opt.Seeds)
		}
	}
	best := -1
	for j := range logL {
		if !math.IsInf(logL[j], -1) && (best < 0 || logL[j] > logL[best]) {
			best = j
		}
	}
	if best < 0 {
		return p.NoiseSigma, "noise σ: no σ on the grid explains the repetitions' spread; kept the starting profile's value"
	}
	var lines, within []string
	chosen := -1
	for j, sigma := range opt.NoiseSigmas {
		lines = append(lines, fmt.Sprintf("σ=%g: %.1f", sigma, logL[j]))
		if logL[best]-logL[j] <= NoiseSupport {
			within = append(within, fmt.Sprint(sigma))
			if chosen < 0 || sigma < opt.NoiseSigmas[chosen] {
				chosen = j
			}
		}
	}
	sigma := opt.NoiseSigmas[chosen]
	return sigma, fmt.Sprintf("noise σ = %g: the smallest σ the repetitions' spread of the %d TTFT/ITL/TTST statistics supports (log-likelihood within %.2f of the best, σ = %g; F-distribution of the repetitions' variance against %d seeds', each arm counted as %d observations): σ ∈ {%s} (log-likelihood by σ: %s)",
		sigma, len(keys), NoiseSupport, opt.NoiseSigmas[best], opt.Seeds, EffectiveObservations, strings.Join(within, ", "), strings.Join(lines, "; "))
}

// minRelSpread is the smallest relative spread a measured statistic is
// taken to have: 0.01 %, the resolution of a summary printed to four
// significant digits.
const minRelSpread = 1e-4

// spreadLogLikelihood is the log-likelihood of arm a's measured spread
// given the simulated spread over seeds (both relative standard
// deviations with divisor n, as meanStats gives them), scaled so the arm
// counts as EffectiveObservations observations.
func spreadLogLikelihood(a *arm, sim Stats, keys []string, seeds int) float64 {
	if a.reps < 2 {
		return 0
	}
	n, s := float64(a.reps), float64(seeds)
	fd := distuv.F{D1: n - 1, D2: s - 1}
	total, used := 0.0, 0
	for _, k := range keys {
		m, ok := a.spread[k]
		if !ok {
			continue
		}
		// A summary statistic has a resolution: repetitions that agree
		// to it still differ below it (and F's density at 0 is 0·log 0).
		v := math.Max(m*m, minRelSpread*minRelSpread) * n / (n - 1)
		w := sim[k] * sim[k] * s / (s - 1)
		switch {
		case w == 0 && v == 0:
			continue // neither varies: no information
		case w == 0:
			return math.Inf(-1)
		}
		total += fd.LogProb(v/w) - math.Log(w)
		used++
	}
	if used == 0 {
		return 0
	}
	return total * EffectiveObservations / float64(used)
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
