package calib

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/routesim/routesim/model"
)

// MLEnergyParams are the coefficients an ML.ENERGY fit moves: the decode
// step's terms and the layer curve's scale. The prompts' mean length is
// fitted beside them as a nuisance parameter ("isl_mean") unless the bench
// says it is known.
var MLEnergyParams = []string{"step_base_ns", "linear_scale", "decode_ns_per_seq", "decode_ns_per_ctx_token"}

// ISLPrior is the prior of the nuisance prompt length: ML.ENERGY publishes
// no input lengths for its LMArena prompts. Single-turn chat prompts run to
// a few hundred tokens; the spread covers 150–1,100.
var ISLPrior = model.Prior{Name: "isl_mean", Centre: 400, LogSD: 1.0,
	Source: "LMArena chat prompts: no lengths published; a few hundred tokens, wide"}

// MLEnergyFit is a profile fitted to ML.ENERGY rows.
type MLEnergyFit struct {
	Profile *model.Profile
	ISLMean float64
	// SD are the posterior log-sds (Laplace) of MLEnergyParams and, when
	// it was fitted, the ISL mean, in that order.
	SD []float64
	// Rows are the fitted rows, measured and simulated.
	Rows []MLEnergyRowFit
	// Sims counts the simulations of every row the fit ran.
	Sims int
}

// MLEnergyRowFit is one row, measured and as the fitted profile simulates it.
type MLEnergyRowFit struct {
	Row MLEnergyRow
	Sim SteadyState
}

// mlenergyFitter holds what a fit's residuals need.
type mlenergyFitter struct {
	bench  *MLEnergyBench
	rows   []MLEnergyRow
	base   *model.Profile
	priors []model.Prior // MLEnergyParams' then ISLPrior
	sigma  float64
	sims   int
	err    error
}

// profileAt is base with the coefficients exp(u[:k]).
func (f *mlenergyFitter) profileAt(u []float64) *model.Profile {
	q := clone(f.base)
	for i, name := range MLEnergyParams {
		c, _ := model.CoefficientByName(name)
		*c.Field(q) = math.Exp(u[i])
	}
	return q
}

// simulate runs every row at u.
func (f *mlenergyFitter) simulate(u []float64) ([]SteadyState, *model.Profile, error) {
	p := f.profileAt(u)
	b := *f.bench
	if !b.ISLKnown {
		b.ISLMean = math.Exp(u[len(MLEnergyParams)])
	}
	out := make([]SteadyState, len(f.rows))
	for i, r := range f.rows {
		st, err := b.Simulate(r, p)
		if err != nil {
			return nil, nil, err
		}
		out[i] = st
	}
	f.sims += len(f.rows)
	return out, p, nil
}

// residuals are the data residuals (log ratios over σ) of every row's
// median ITL, throughput and mean batch, then the priors'.
func (f *mlenergyFitter) residuals(u []float64) []float64 {
	sts, _, err := f.simulate(u)
	if err != nil {
		f.err = err
		return nil
	}
	var r []float64
	for i, st := range sts {
		m := f.rows[i]
		r = append(r, math.Log(st.MedianITLMs/m.MedianITLMs)/f.sigma,
			math.Log(st.TokensPerS/m.TokensPerS)/f.sigma,
			math.Log(st.AvgBatch/m.AvgBatch)/f.sigma)
	}
	for i, pr := range f.priors {
		r = append(r, (u[i]-math.Log(pr.Centre))/pr.LogSD)
	}
	return r
}

// FitMLEnergy fits base's decode coefficients and the prompts' mean
// length to rows (MAP with base's kernel priors, Levenberg–Marquardt over
// the logarithms), then the power line to the rows' measured power.
// priors are base's coefficient priors (model.KernelPrior).
func FitMLEnergy(bench *MLEnergyBench, rows []MLEnergyRow, base *model.Profile, priors []model.Prior, iters int) (*MLEnergyFit, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("calib: no ML.ENERGY rows to fit")
	}
	f := &mlenergyFitter{bench: bench, rows: rows, base: clone(base), sigma: model.DefaultModelErrorLog}
	for _, name := range MLEnergyParams {
		pr, ok := findPrior(priors, name)
		if !ok {
			return nil, fmt.Errorf("calib: no prior for %s", name)
		}
		f.priors = append(f.priors, pr)
	}
	if !bench.ISLKnown {
		f.priors = append(f.priors, ISLPrior)
	}
	u := make([]float64, len(f.priors))
	for i, name := range MLEnergyParams {
		c, _ := model.CoefficientByName(name)
		u[i] = math.Log(*c.Field(base))
	}
	if !bench.ISLKnown {
		u[len(u)-1] = math.Log(bench.ISLMean)
	}
	u, _, jtj := lmMinimize(u, f.residuals, iters, 6, nil)
	if f.err != nil {
		return nil, fmt.Errorf("calib: a simulation failed during the fit: %w", f.err)
	}
	sts, p, err := f.simulate(u)
	if err != nil {
		return nil, err
	}
	cov := inverse(jtj)
	fit := &MLEnergyFit{Profile: p, ISLMean: bench.ISLMean, SD: laplaceSD(cov)}
	if !bench.ISLKnown {
		fit.ISLMean = math.Exp(u[len(u)-1])
	}
	p.Posterior = mlenergyPosterior(p, priors, cov, f.sigma)
	for i, r := range rows {
		fit.Rows = append(fit.Rows, MLEnergyRowFit{Row: r, Sim: sts[i]})
	}
	fitMLEnergyPower(p, fit.Rows)
	for i := range fit.Rows {
		fit.Rows[i].Sim.PowerW = fit.Rows[i].Sim.powerWith(p)
	}
	fit.Sims = f.sims
	return fit, nil
}

func findPrior(priors []model.Prior, name string) (model.Prior, bool) {
	for _, p := range priors {
		if p.Name == name {
			return p, true
		}
	}
	return model.Prior{}, false
}

// mlenergyPosterior is the fit's Laplace posterior over p's coefficients
// that have a prior, from cov = (JᵀJ)⁻¹ over MLEnergyParams and the
// prompt length: the fitted ones' joint covariance is their block of it
// (the prompt length marginalised out), the others keep their prior spread
// around p's values. nil without cov.
func mlenergyPosterior(p *model.Profile, priors []model.Prior, cov *mat.SymDense, modelErr float64) *model.Posterior {
	return fittedPosterior("Laplace approximation at the MAP estimate of an ML.ENERGY fit: Gauss–Newton curvature of the steady-state residuals plus log-normal priors, the prompt length marginalised; unfitted coefficients at their prior spread",
		p, MLEnergyParams, priors, cov, modelErr)
}

// laplaceSD is the posterior log-sd of each coordinate: √diag(cov), cov =
// (JᵀJ)⁻¹ (the objective is ½Σr², so JᵀJ approximates its Hessian).
func laplaceSD(cov *mat.SymDense) []float64 {
	if cov == nil {
		return nil
	}
	out := make([]float64, cov.SymmetricDim())
	for i := range out {
		out[i] = math.Sqrt(math.Max(0, cov.At(i, i)))
	}
	return out
}

// fitMLEnergyPower fits the power line (power_busy_w, power_pj_per_flop)
// to the rows' measured power by least squares on log ratios, each row's
// per-window utilisation and FLOP rate as simulated, with the idle draw
// and the power limit from the GPU's catalogue entry (p's).
func fitMLEnergyPower(p *model.Profile, rows []MLEnergyRowFit) {
	loss := func(busy, pj float64) float64 {
		q := *p
		q.PowerBusyW, q.PowerPJPerFLOP = busy, pj
		s := 0.0
		for _, r := range rows {
			d := math.Log(r.Sim.powerWith(&q) / r.Row.PowerW)
			s += d * d
		}
		return s
	}
	// Two coefficients and a cheap loss: a coarse grid, then halving
	// refinements around the best point.
	hi := p.PowerCapW
	if hi <= 0 {
		hi = 2 * p.PowerBusyW
	}
	bestB, bestE, best := p.PowerBusyW, p.PowerPJPerFLOP, math.Inf(1)
	lo := p.PowerIdleW
	bStep, eStep := (hi-lo)/40, 0.1
	for b := lo; b <= hi; b += bStep {
		for e := 0.0; e <= 6; e += eStep {
			if l := loss(b, e); l < best {
				bestB, bestE, best = b, e, l
			}
		}
	}
	for range 30 {
		bStep, eStep = bStep/2, eStep/2
		for _, b := range []float64{bestB - bStep, bestB, bestB + bStep} {
			for _, e := range []float64{bestE - eStep, bestE, bestE + eStep} {
				if b < lo || e < 0 {
					continue
				}
				if l := loss(b, e); l < best {
					bestB, bestE, best = b, e, l
				}
			}
		}
	}
	p.PowerBusyW, p.PowerPJPerFLOP = bestB, bestE
}

// MLEnergyLOO is one left-out row: predicted by a fit on the others.
type MLEnergyLOO struct {
	Row  MLEnergyRow
	Pred SteadyState
}

// PctErr is 100·(sim/meas − 1).
func PctErr(sim, meas float64) float64 { return 100 * (sim/meas - 1) }

// MLEnergyTable renders rows measured against simulated (or predicted).
// The p90 ITL is not fitted: it shows how long the steps that carry a new
// prompt's prefill are, which the median (a decode step) does not.
func MLEnergyTable(rows []MLEnergyRow, sims []SteadyState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %-20s %-20s %-20s %-15s %s\n", "SEQS", "MEDIAN ITL ms", "OUTPUT tok/s", "POWER W/GPU", "BATCH", "P90 ITL ms (not fitted)")
	for i, r := range rows {
		s := sims[i]
		fmt.Fprintf(&b, "%-6d %6.2f %6.2f %+5.1f%%  %6.0f %6.0f %+5.1f%%  %5.0f %5.0f %+5.1f%%  %6.1f %6.1f  %6.1f %6.1f %+5.1f%%\n", r.MaxNumSeqs,
			r.MedianITLMs, s.MedianITLMs, PctErr(s.MedianITLMs, r.MedianITLMs),
			r.TokensPerS, s.TokensPerS, PctErr(s.TokensPerS, r.TokensPerS),
			r.PowerW, s.PowerW, PctErr(s.PowerW, r.PowerW), r.AvgBatch, s.AvgBatch,
			r.P90ITLMs, s.P90ITLMs, PctErr(s.P90ITLMs, r.P90ITLMs))
	}
	return b.String()
}
