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

// MLEnergyProblem is the calibration of base's MLEnergyParams and, unless
// the bench knows it, the prompts' mean length (a nuisance parameter,
// prior ISLPrior) on rows: each row's median ITL, throughput and mean
// batch as log ratios over σ = model.DefaultModelErrorLog, the priors
// (base's kernel priors, model.KernelPrior) on the logarithms. last, if
// not nil, receives each evaluation's simulated rows.
func MLEnergyProblem(bench *MLEnergyBench, rows []MLEnergyRow, base *model.Profile, priors []model.Prior, last *[]SteadyState) (*Problem, error) {
	base = clone(base)
	pr := &Problem{Base: base, Priors: priors, ModelError: model.DefaultModelErrorLog,
		Method: "Laplace approximation at the MAP estimate of an ML.ENERGY fit: Gauss–Newton curvature of the steady-state residuals plus log-normal priors, the prompt length marginalised; unfitted coefficients at their prior spread"}
	for _, name := range MLEnergyParams {
		prior, ok := findPrior(priors, name)
		if !ok {
			return nil, fmt.Errorf("calib: no prior for %s", name)
		}
		pr.Coefficients = append(pr.Coefficients, Param{Name: name, Start: *mustCoef(name).Field(base), Prior: &prior})
	}
	if !bench.ISLKnown {
		prior := ISLPrior
		pr.Nuisance = []Param{{Name: prior.Name, Start: bench.ISLMean, Prior: &prior}}
	}
	sigma := pr.ModelError
	pr.Residuals = func(c Candidate) ([]Residual, error) {
		b := *bench
		if len(c.Nuisance) > 0 {
			b.ISLMean = c.Nuisance[0]
		}
		sts := make([]SteadyState, len(rows))
		var out []Residual
		for i, r := range rows {
			st, err := b.Simulate(r, c.Profile)
			if err != nil {
				return nil, err
			}
			sts[i] = st
		}
		for i, st := range sts {
			m, arm := rows[i], fmt.Sprintf("max_num_seqs %d", rows[i].MaxNumSeqs)
			out = append(out, logRatio(arm, "median_itl_ms", st.MedianITLMs, m.MedianITLMs, sigma),
				logRatio(arm, "output_tokens_per_s", st.TokensPerS, m.TokensPerS, sigma),
				logRatio(arm, "avg_batch", st.AvgBatch, m.AvgBatch, sigma))
		}
		if last != nil {
			*last = sts
		}
		return out, nil
	}
	return pr, nil
}

// FitMLEnergy fits base's decode coefficients and the prompts' mean
// length to rows (MLEnergyProblem: MAP with base's kernel priors,
// Levenberg–Marquardt over the logarithms), then the power line to the
// rows' measured power. priors are base's coefficient priors
// (model.KernelPrior).
func FitMLEnergy(bench *MLEnergyBench, rows []MLEnergyRow, base *model.Profile, priors []model.Prior, iters int) (*MLEnergyFit, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("calib: no ML.ENERGY rows to fit")
	}
	var sts []SteadyState
	pr, err := MLEnergyProblem(bench, rows, base, priors, &sts)
	if err != nil {
		return nil, err
	}
	sol, err := pr.Fit(MAPOptions{Iters: iters, Tries: 6})
	if err != nil {
		return nil, err
	}
	p := sol.Profile
	fit := &MLEnergyFit{Profile: p, ISLMean: bench.ISLMean, SD: sol.SD}
	if len(sol.Nuisance) > 0 {
		fit.ISLMean = sol.Nuisance[0]
	}
	for i, r := range rows {
		fit.Rows = append(fit.Rows, MLEnergyRowFit{Row: r, Sim: sts[i]})
	}
	fitMLEnergyPower(p, fit.Rows)
	for i := range fit.Rows {
		fit.Rows[i].Sim.PowerW = fit.Rows[i].Sim.powerWith(p)
	}
	fit.Sims = sol.Evals * len(rows)
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
