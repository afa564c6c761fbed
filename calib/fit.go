package calib

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

// Options tune a fit. The zero value is sensible.
type Options struct {
	// MaxEvals bounds the loss evaluations of the search (default 1500).
	MaxEvals int
	// Params names the profile coefficients to fit (JSON names); default
	// DefaultParams for a linear profile, KernelParams for a kernel one.
	Params []string
	// Regularization scales the prior's weight in the loss (default 1: the
	// MAP estimate; negative: no prior, a plain least-squares fit).
	Regularization float64
	// ModelError is the relative error (log units) the loss allows each
	// headline statistic: measurement noise plus what the step model cannot
	// express (default 0.1).
	ModelError float64
	// NoiseSigmas is the grid σ is chosen from (default 0 … 0.3).
	NoiseSigmas []float64
	// Seeds is the number of seeds per σ when matching run-to-run spread
	// (default 8).
	Seeds int
	// NoPosterior skips the Laplace approximation (faster; no bands).
	NoPosterior bool
	// Progress, if set, is called after every simulation-backed loss
	// evaluation with the count so far and the fit's stage ("search",
	// "polish", "posterior").
	Progress func(evals int, stage string)
}

// DefaultParams are the coefficients fitted for a linear (BLIS-style)
// profile unless Options.Params says otherwise (model.Coefficients' Fit).
var DefaultParams = model.Fitted(&model.Profile{})

// KernelParams are the coefficients fitted for a kernel profile unless
// Options.Params says otherwise; the rest keep their prior.
var KernelParams = model.Fitted(&model.Profile{LinearCurve: &model.LinearCurve{}})

// coef is one fitted coefficient: its field, its physical floor, and a
// scale for coefficients whose floor is 0.
type coef struct {
	name  string
	field func(*model.Profile) *float64
	floor float64
	ref   float64
}

// coefs lists the step and frontend coefficients with their physical
// floors (model.Floor) for deployment d and a profile of base's form.
func coefs(d model.Deployment, base *model.Profile) map[string]coef {
	out := map[string]coef{}
	for _, c := range model.Coefficients {
		if c.Has(base) {
			out[c.Name] = coef{name: c.Name, field: c.Field, floor: model.Floor(d, base, c.Name), ref: c.Ref}
		}
	}
	return out
}

// arm is one setup and its measured statistics (repetitions averaged).
type arm struct {
	name     string
	spec     scenario.Spec
	built    *scenario.Built
	measured Stats
	spread   Stats
	reps     int // repetitions measured (spread needs two or more)
	windowS  float64
	records  []Record // one repetition's per-request records, if any
	// bench is the benchmark client's load point the arm re-simulates
	// (nil: the setup's own workload).
	bench *BenchPoint
}

// run simulates the arm's workload (a fresh population for sessions)
// as run r, whose profile and seed the caller chose, through the one run
// path (so the spec's warm-up applies as in run and sweep). A benchmark
// client's load point replaces the workload's clients: r's seeded
// configuration and policy run under them.
func (a *arm) run(r *scenario.Run) (*sim.Result, error) {
	if a.bench != nil && (a.bench.Users != nil || a.bench.MaxConcurrency > 0) {
		pol, err := r.Policy()
		if err != nil {
			return nil, err
		}
		cfg := r.Config
		if a.bench.Users != nil {
			loop, wl := newUserLoop(a.built.Work, a.bench.Users, a.bench.UserGapS)
			cfg.FollowUp = loop
			return sim.Run(cfg, wl, pol)
		}
		lim, wl := newClientLimit(a.built.Work, a.bench.MaxConcurrency)
		if lim != nil {
			cfg.FollowUp = lim
		}
		return sim.Run(cfg, wl, pol)
	}
	res, _, err := r.Exec()
	return res, err
}

// stats are the arm's statistics from a simulated run, computed as its
// measurements were.
func (a *arm) stats(res *sim.Result) Stats {
	if a.bench != nil && a.bench.Format == "vllm-bench" {
		return benchStats(res)
	}
	return simulatedStats(res)
}

// Result is a fitted profile and how well it fits.
type Result struct {
	Profile *model.Profile
	Report  *Report
}

// Fit calibrates a profile to the spec's runs: a bounded Nelder–Mead
// search over the step-time coefficients (σ = 0), then σ from the
// run-to-run spread of repetitions, then the power line from the GPU
// samples by least squares.
func Fit(spec *Spec, opt Options) (*Result, error) {
	if opt.MaxEvals == 0 {
		opt.MaxEvals = 1500
	}
	if opt.Regularization == 0 {
		opt.Regularization = 1
	}
	if opt.ModelError <= 0 {
		opt.ModelError = model.DefaultModelErrorLog
	}
	if opt.NoiseSigmas == nil {
		opt.NoiseSigmas = []float64{0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3}
	}
	if opt.Seeds == 0 {
		opt.Seeds = 8
	}
	obs, err := spec.Load()
	if err != nil {
		return nil, err
	}
	first := spec.Runs[0].Setup
	first.Profile = spec.path(spec.Base)
	base, err := first.LoadProfile()
	if err != nil {
		return nil, err
	}
	// Coefficients are fitted noise-free; σ is chosen afterwards.
	startSigma := base.NoiseSigma
	base = clone(base)
	base.NoiseSigma = 0
	arms, err := buildArms(spec, obs, base)
	if err != nil {
		return nil, err
	}
	dep := arms[0].built.Deploy
	if opt.Params == nil {
		opt.Params = DefaultParams
		if base.IsKernel() {
			opt.Params = KernelParams
		}
	}
	all := coefs(dep, base)
	var fit []coef
	for _, name := range opt.Params {
		c, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("calib: unknown coefficient %q (known: %s)", name, strings.Join(sortedKeys(all), ", "))
		}
		fit = append(fit, c)
	}
	priors, err := priorsFor(dep, base, opt.Regularization)
	if err != nil {
		return nil, err
	}
	f := &fitter{arms: arms, base: base, coefs: fit, priors: priors, dataScale: likelihoodScale(arms, opt.ModelError), modelErr: opt.ModelError,
		progress: opt.Progress, stage: "search"}
	start := base
	var linNote string
	if lin, note, err := f.linearFit(base, all, opt.Params); err != nil {
		return nil, err
	} else if lin != nil {
		start, linNote = lin, note
	}
	// With per-request records the regression is the estimator; with
	// summaries only, a bounded Nelder–Mead search on the statistics is.
	x := f.encode(start)
	loss := f.lossOf(start)
	if linNote == "" {
		if x, loss, err = f.search(x, opt.MaxEvals, 0.5); err != nil {
			return nil, err
		}
	}
	prof := f.decode(x)
	prof.NoiseSigma = startSigma
	sigma, noiseNote := f.fitNoise(prof, opt)
	if sigma > 0 && linNote == "" {
		// Refit under the noise the profile will run with: the same
		// RefitSeeds seeds for every candidate (common random numbers),
		// averaged.
		f.sigma, f.seeds = sigma, RefitSeeds
		x, loss, err = f.search(x, f.evals+opt.MaxEvals/4, 0.1)
		if err != nil {
			return nil, err
		}
		prof = f.decode(x)
		noiseNote += fmt.Sprintf("; coefficients then refitted at σ = %g over seeds 1–%d", sigma, RefitSeeds)
	}
	var polishNote string
	if len(f.priors) > 0 {
		// Neither the regression's fixed point (it weighs requests) nor the
		// simplex's end is exactly the posterior's peak: polish on the MAP
		// objective with Levenberg–Marquardt so the Laplace approximation
		// is centred where it should be.
		before := f.evals
		f.stage = "polish"
		prev := f.scale()*f.lossOf(prof) + f.priorLoss(prof)
		q, l := f.levenbergMarquardt(prof, 25)
		if l < prev {
			prof = q
			x = f.encode(prof)
			loss = f.lossOf(prof)
		}
		polishNote = fmt.Sprintf("MAP objective %.4g → %.4g by Levenberg–Marquardt (%d simulations)", prev, math.Min(l, prev), f.evals-before)
	}
	prof.NoiseSigma = sigma
	var post *model.Posterior
	if !opt.NoPosterior {
		f.stage = "posterior"
		post = f.laplace(prof)
	}
	powerNote := fitPower(prof, obs)
	prof.Kind = "measured"
	prof.Name = fmt.Sprintf("%s.%s.tp%d.calibrated", strings.ToLower(dep.GPU.Name), strings.ToLower(dep.Model.Name), dep.TP)
	prof.Source = fmt.Sprintf("routesim calibrate %q: %d runs (%s), starting from %s", spec.Name, len(spec.Runs), runNames(spec), base.Name)
	prof.Note = spec.Note
	prof.Posterior = post
	rep := f.report(prof, base, x, post, opt)
	rep.Loss, rep.Evals = loss, f.evals
	for _, n := range []string{linNote, polishNote, noiseNote, powerNote} {
		if n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	worst := rep.Worst()
	prof.FitError = fmt.Sprintf("max |error| %.1f%% (%s %s), mean |error| %.1f%% over %d statistics", rep.MaxAbsErrPct(), worst.Arm, worst.Stat, rep.MeanAbsErrPct(), len(rep.Rows))
	if f.simErr != nil {
		return nil, fmt.Errorf("calib: a simulation failed during the fit: %w", f.simErr)
	}
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("calib: fitted profile invalid: %w", err)
	}
	return &Result{Profile: prof, Report: rep}, nil
}

// RefitSeeds is how many seeds (1…RefitSeeds, the same for every
// candidate) average each statistic when the coefficients are refitted
// under noise: with three, the search fitted those seeds' draws (the 8×A100
// fit's loss was 0.22 on its own seeds, 0.31–0.37 on three other triples).
const RefitSeeds = 6

// EffectiveObservations is how many independent observations one arm's
// statistics are worth in the likelihood: the percentiles and mean of one
// distribution move together, so an arm says about three things — the
// TTFT level, the ITL level and GPU utilization — each with relative error
// Options.ModelError.
const EffectiveObservations = 3

// likelihoodScale turns lossOf's Σ w·log(sim/meas)² into a negative log
// likelihood: the arms' weights are normalised so that each arm counts as
// EffectiveObservations observations of log-error sd s.
func likelihoodScale(arms []*arm, s float64) float64 {
	w := 0.0
	for k := range arms[0].measured {
		w += statWeights[k]
	}
	if w == 0 {
		return 1
	}
	return EffectiveObservations / w / (2 * s * s)
}

func runNames(s *Spec) string {
	names := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loadArms reads the spec's measurements and builds its arms on profile p.
func loadArms(spec *Spec, p *model.Profile) ([]*arm, error) {
	obs, err := spec.Load()
	if err != nil {
		return nil, err
	}
	return buildArms(spec, obs, p)
}

// Evaluate re-simulates the spec's runs with profile p (with its noise σ,
// averaged over seeds) and reports every statistic against the
// measurements, without fitting anything.
func Evaluate(spec *Spec, p *model.Profile, seeds int) (*Report, error) {
	if p == nil {
		return nil, errors.New("calib: Evaluate needs a profile")
	}
	arms, err := loadArms(spec, p)
	if err != nil {
		return nil, err
	}
	if seeds < 1 {
		seeds = 1
	}
	f := &fitter{arms: arms, base: p}
	return f.report(p, p, nil, nil, Options{Seeds: seeds}), nil
}
