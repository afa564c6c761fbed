package calib

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

// search runs Nelder–Mead, restarting with a fresh simplex around the best
// point while evaluations remain and restarts still improve the loss.
func (f *fitter) search(x0 []float64, maxEvals int, size float64) ([]float64, float64, error) {
	x, best := x0, f.loss(x0)

	for f.evals < maxEvals {
		budget := maxEvals - f.evals
		res, err := optimize.Minimize(optimize.Problem{Func: f.loss}, x,
			&optimize.Settings{FuncEvaluations: budget, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Relative: 1e-4, Iterations: 40}},
			&optimize.NelderMead{SimplexSize: size})
		if res == nil {
			return nil, 0, fmt.Errorf("calib: search failed: %w", err)
		}
		improved := res.F < best-1e-6
		if res.F < best {
			x, best = res.X, res.F
		}
		if !improved && size < 0.1 {
			break
		}
		size = math.Max(size/2, 0.05)
	}
	return x, best, nil
}

type fitter struct {
	arms   []*arm
	base   *model.Profile
	coefs  []coef
	priors map[string]model.Prior // log-normal priors; nil = none
	// dataScale turns lossOf's Σ w·log(sim/meas)² into a negative log
	// likelihood (likelihoodScale).
	dataScale float64
	// modelErr is Options.ModelError, kept in the posterior for bands.
	modelErr float64
	evals    int
	// sigma and seeds: candidates run with noise σ over seeds 1..seeds and
	// their statistics are averaged (0 = noise-free, one run).
	sigma float64
	seeds int
	// progress and stage report the fit's advance (Options.Progress).
	progress func(int, string)
	stage    string
	// simErr is the first simulation that failed: a fit that met one
	// reports it instead of treating the candidate as merely bad.
	simErr error
}

// tick counts one loss evaluation and reports progress.
func (f *fitter) tick() {
	f.evals++
	if f.progress != nil {
		f.progress(f.evals, f.stage)
	}
}

// failed notes a failed simulation and returns its error.
func (f *fitter) failed(err error) error {
	if f.simErr == nil {
		f.simErr = err
	}
	return err
}

// encode maps a profile to search space: v = floor·(1+eˣ) where a physical
// floor exists, v = ref·eˣ otherwise, and host overhead = c0·logistic(x).
func (f *fitter) encode(p *model.Profile) []float64 {
	x := make([]float64, len(f.coefs))
	for i, c := range f.coefs {
		v := *c.field(p)
		switch {
		case c.name == "host_overhead_ns":
			frac := math.Min(math.Max(v/math.Max(p.StepBaseNs, 1), 0.05), 0.95)
			x[i] = math.Log(frac / (1 - frac))
		case c.floor > 0:
			x[i] = math.Log(math.Max(v/c.floor-1, 0.01))
		default:
			ref := c.ref
			if v > 0 {
				ref = v
			}
			x[i] = math.Log(ref / c.ref)
		}
	}
	return x
}

func (f *fitter) decode(x []float64) *model.Profile {
	p := *f.base
	p.NoiseSigma = 0
	host := math.NaN()
	for i, c := range f.coefs {
		switch {
		case c.name == "host_overhead_ns":
			host = 1 / (1 + math.Exp(-x[i]))
		case c.floor > 0:
			*c.field(&p) = c.floor * (1 + math.Exp(x[i]))
		default:
			*c.field(&p) = c.ref * math.Exp(x[i])
		}
	}
	if !math.IsNaN(host) {
		p.HostOverheadNs = host * p.StepBaseNs
	}
	return &p
}

// simulate runs every arm with profile p and seed, returning stats per arm.
func (f *fitter) simulate(p *model.Profile, seed uint64) ([]Stats, []*sim.Result, error) {
	var out []Stats
	var results []*sim.Result
	for _, a := range f.arms {
		r := a.built.Run(seed)
		r.Config = r.Config.WithProfile(p)
		res, err := a.run(r)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, a.stats(res))
		results = append(results, res)
	}
	return out, results, nil
}

// loss is Σ over arms and statistics of w·log(sim/measured)², the
// per-request TTFT and ITL log errors where records exist, and the
// regularisation toward the starting profile.
func (f *fitter) loss(x []float64) float64 {
	f.tick()
	p := f.decode(x)
	return f.scale()*f.lossOf(p) + f.priorLoss(p)
}

// scale is the data term's factor (1 when no likelihood scale is set).
func (f *fitter) scale() float64 {
	if f.dataScale > 0 {
		return f.dataScale
	}
	return 1
}

func sumSquares(r []float64) float64 {
	t := 0.0
	for _, v := range r {
		t += v * v
	}
	return t
}

// statResiduals are √w·log(simulated/measured) per compared statistic, in
// statOrder (so a Jacobian's rows line up across candidates).
func statResiduals(measured, simulated Stats) []float64 {
	var out []float64
	for _, k := range statOrder {
		m, ok := measured[k]
		if !ok || m <= 0 {
			continue
		}
		s, ok := simulated[k]
		if !ok || s <= 0 {
			s = 1e-9
		}
		out = append(out, math.Sqrt(statWeights[k])*math.Log(s/m))
	}
	return out
}

// recordResiduals compare requests one by one, in arrival order: the
// per-request TTFT and ITL log errors, scaled so
// that together they weigh 4 (one headline statistic): the requests of a
// run share its queues, so they are far from independent. nil when the
// runs completed different sets of requests.
func recordResiduals(meas []Record, simRecs []sim.Record) []float64 {
	var done []*sim.Record
	for i := range simRecs {
		if simRecs[i].Status == sim.StatusOK {
			done = append(done, &simRecs[i])
		}
	}
	var ok []*Record
	for i := range meas {
		if meas[i].Error == "" {
			ok = append(ok, &meas[i])
		}
	}
	if len(done) != len(ok) || len(ok) == 0 {
		return nil
	}
	var out []float64
	for i, m := range ok {
		s := done[i]
		if m.TTFTMs > 0 {
			out = append(out, math.Log(math.Max(s.TTFT().Ms(), 1e-6)/m.TTFTMs))
		}
		if m.OSL >= 2 && m.ITLMs > 0 && s.ITL() > 0 {
			out = append(out, math.Log(s.ITL()/1e6/m.ITLMs))
		}
	}
	if len(out) == 0 {
		return nil
	}
	w := math.Sqrt(4 / float64(len(out)))
	for i := range out {
		out[i] *= w
	}
	return out
}

// lossOf is the data term of the loss for profile p (no prior): Σ of the
// squared residuals.
func (f *fitter) lossOf(p *model.Profile) float64 {
	r, err := f.residuals(p, true)
	if err != nil {
		return 1e6
	}
	return sumSquares(r)
}

// residuals are the weighted log errors of every arm's statistics (and,
// with records, of its per-request records) for profile p: with noise σ,
// statistics averaged over seeds 1..seeds (common random numbers).
// Per-request residuals jump whenever a request lands in another step, so
// derivative-based steps (Levenberg–Marquardt, the Laplace curvature) use
// the statistics alone, which average those jumps away.
func (f *fitter) residuals(p *model.Profile, records bool) ([]float64, error) {
	var out []float64
	if f.sigma > 0 {
		q := *p
		q.NoiseSigma = f.sigma
		per := make([][]Stats, len(f.arms))
		for s := 1; s <= f.seeds; s++ {
			stats, _, err := f.simulate(&q, uint64(s))
			if err != nil {
				return nil, f.failed(err)
			}
			for i := range f.arms {
				per[i] = append(per[i], stats[i])
			}
		}
		for i, a := range f.arms {
			m, _ := meanStats(per[i])
			out = append(out, statResiduals(a.measured, m)...)
		}
		return out, nil
	}
	stats, results, err := f.simulate(p, 0)
	if err != nil {
		return nil, f.failed(err)
	}
	for i, a := range f.arms {
		out = append(out, statResiduals(a.measured, stats[i])...)
		if records && a.records != nil {
			out = append(out, recordResiduals(a.records, results[i].Records)...)
		}
	}
	return out, nil
}
