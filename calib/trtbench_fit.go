package calib

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

// TRTBenchParams are the efficiency terms a trtllm-bench fit moves
// (model.TRTLLMKernelPrior): the step base, the linear layers' scale, the
// context-attention cost per pair and the decode KV-read cost per token.
// Total output throughput over ISL/OSL rows pins what the rows tell apart:
// decode-heavy rows the step base, the layer curve and the KV reads,
// prefill-heavy ones the layer curve's compute and attention.
var TRTBenchParams = []string{"step_base_ns", "linear_scale", "prefill_attn_ns_per_pair", "decode_ns_per_ctx_token"}

// TRTBenchFit is a profile fitted to trtllm-bench rows.
type TRTBenchFit struct {
	Profile *model.Profile
	// Params are the fitted coefficients; SD their posterior log-sds
	// (Laplace) and PriorSD their priors', in that order.
	Params      []string
	SD, PriorSD []float64
	// Rows are the fitted rows, measured and simulated.
	Rows []TRTBenchRowFit
	// Sims counts the row simulations the fit ran.
	Sims int
}

// TRTBenchRowFit is one row, measured and as a profile simulates it.
type TRTBenchRowFit struct {
	Row TRTBenchRow
	Sim TRTBenchSim
}

// TRTBenchProblem is the calibration of params of base (default
// TRTBenchParams) on rows' total output throughput: each row's log ratio
// over σ = model.DefaultModelErrorLog, the priors (model.TRTLLMKernelPrior's)
// on the coefficients' logarithms from base's values, each coefficient at
// or above its physical floor. last, if not nil, receives each evaluation's
// simulated rows.
func TRTBenchProblem(bench *TRTBench, rows []TRTBenchRow, base *model.Profile, priors []model.Prior, params []string, last *[]TRTBenchSim) (*Problem, error) {
	if len(params) == 0 {
		params = TRTBenchParams
	}
	base = clone(base)
	pr := &Problem{Base: base, Priors: priors, ModelError: model.DefaultModelErrorLog,
		Method: "Laplace approximation at the MAP estimate of a trtllm-bench fit: Gauss–Newton curvature of the rows' log throughput residuals plus log-normal priors; unfitted coefficients at their prior spread"}
	for _, name := range params {
		prior, ok := findPrior(priors, name)
		if !ok {
			return nil, fmt.Errorf("calib: no prior for %s", name)
		}
		v := *mustCoef(name).Field(base)
		if !(v > 0) {
			return nil, fmt.Errorf("calib: %s is %g in the starting profile: a fit needs it > 0", name, v)
		}
		pr.Coefficients = append(pr.Coefficients, Param{Name: name, Start: v, Floor: model.Floor(bench.Deploy, base, name), Prior: &prior})
	}
	sigma := pr.ModelError
	pr.Residuals = func(c Candidate) ([]Residual, error) {
		out := make([]Residual, len(rows))
		sims := make([]TRTBenchSim, len(rows))
		for i, r := range rows {
			s, err := bench.Simulate(r, c.Profile)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Arm(), err)
			}
			sims[i] = s
			out[i] = logRatio(r.Arm(), "output_tok_s", s.TokensPerS, r.TokensPerS, sigma)
		}
		if last != nil {
			*last = sims
		}
		return out, nil
	}
	return pr, nil
}

// FitTRTBench fits params of base (default TRTBenchParams) to rows' total
// output throughput (TRTBenchProblem): MAP with priors
// (model.TRTLLMKernelPrior's), by Levenberg–Marquardt over the
// logarithms from base's values; then the Laplace posterior (the unfitted
// coefficients at their prior spread).
func FitTRTBench(bench *TRTBench, rows []TRTBenchRow, base *model.Profile, priors []model.Prior, params []string, iters int) (*TRTBenchFit, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("calib: no trtllm-bench rows to fit")
	}
	var sims []TRTBenchSim
	pr, err := TRTBenchProblem(bench, rows, base, priors, params, &sims)
	if err != nil {
		return nil, err
	}
	sol, err := pr.Fit(MAPOptions{Iters: iters, Tries: 6})
	if err != nil {
		return nil, err
	}
	fit := &TRTBenchFit{Profile: sol.Profile, SD: sol.SD, PriorSD: sol.PriorSD, Sims: sol.Evals * len(rows)}
	for _, c := range pr.Coefficients {
		fit.Params = append(fit.Params, c.Name)
	}
	for i, r := range rows {
		fit.Rows = append(fit.Rows, TRTBenchRowFit{Row: r, Sim: sims[i]})
	}
	return fit, nil
}

// fittedPosterior is a Laplace posterior over p's coefficients that have
// a prior: the fitted ones (params, in cov's order) jointly as cov says,
// the others at their prior spread around p's values. nil without cov.
func fittedPosterior(method string, p *model.Profile, params []string, priors []model.Prior, cov *mat.SymDense, modelErr float64) *model.Posterior {
	if cov == nil {
		return nil
	}
	at := map[string]int{}
	for i, name := range params {
		at[name] = i
	}
	var names []string
	var sd []float64
	fitted := map[string]bool{}
	for _, name := range model.CoefficientNames() {
		pr, ok := findPrior(priors, name)
		if !ok || *mustCoef(name).Field(p) <= 0 {
			continue
		}
		_, fitted[name] = at[name]
		names = append(names, name)
		sd = append(sd, pr.LogSD)
	}
	return newPosterior(method, p, names, func(i, j int) float64 {
		a, aok := at[names[i]]
		b, bok := at[names[j]]
		switch {
		case aok && bok:
			return cov.At(a, b)
		case i == j:
			return sd[i] * sd[i]
		}
		return 0
	}, sd, fitted, modelErr)
}

// TRTBenchPrediction is a row predicted by a profile it was not fitted
// on, with the posterior predictive band.
type TRTBenchPrediction struct {
	Row TRTBenchRow
	Sim TRTBenchSim
	// BandLo and BandHi are the 10th and 90th percentiles of the output
	// throughput over coefficient draws, each with the model error.
	BandLo, BandHi float64
}

// PredictTRTBench simulates rows with p and, with draws > 0, with that
// many coefficient sets drawn from post (stream "uncertainty" of seed),
// each throughput also multiplied by the model error the fit assumed
// (log sd post.ModelErrorLog, stream "model-error"): the posterior
// predictive the fit's likelihood implies.
func PredictTRTBench(bench *TRTBench, rows []TRTBenchRow, p *model.Profile, post *model.Posterior, draws int, seed uint64) ([]TRTBenchPrediction, error) {
	var ds []*model.Profile
	if draws > 0 {
		if post == nil {
			return nil, fmt.Errorf("calib: predicting with bands needs a posterior")
		}
		var err error
		if ds, err = post.Draws(p, bench.Deploy, draws, sim.Stream(seed, "uncertainty")); err != nil {
			return nil, err
		}
	}
	errRng := sim.Stream(seed, "model-error")
	noise := make([]float64, len(ds)*len(rows))
	for i := range noise {
		noise[i] = math.Exp(post.ModelErrorLog * errRng.NormFloat64())
	}
	var out []TRTBenchPrediction
	for i, r := range rows {
		s, err := bench.Simulate(r, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Arm(), err)
		}
		pr := TRTBenchPrediction{Row: r, Sim: s}
		if len(ds) > 0 {
			xs := make([]float64, len(ds))
			for k, q := range ds {
				sk, err := bench.Simulate(r, q)
				if err != nil {
					return nil, fmt.Errorf("%s, draw %d: %w", r.Arm(), k+1, err)
				}
				xs[k] = sk.TokensPerS * noise[k*len(rows)+i]
			}
			sort.Float64s(xs)
			pr.BandLo, pr.BandHi = sim.Quantile7(xs, sim.BandLo), sim.Quantile7(xs, sim.BandHi)
		}
		out = append(out, pr)
	}
	return out, nil
}

// SplitTRTBench divides rows into those whose ISL/OSL (Arm) is in fit and
// the rest, each in the rows' order; it names any of fit no row has.
func SplitTRTBench(rows []TRTBenchRow, fit []string) (in, out []TRTBenchRow, err error) {
	seen := map[string]bool{}
	for _, r := range rows {
		if slices.Contains(fit, r.Arm()) {
			in = append(in, r)
			seen[r.Arm()] = true
		} else {
			out = append(out, r)
		}
	}
	var missing []string
	for _, a := range fit {
		if !seen[a] {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("calib: no row for ISL/OSL %s", strings.Join(missing, ", "))
	}
	return in, out, nil
}
