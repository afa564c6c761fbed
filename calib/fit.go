package calib

import (
	"fmt"
	"sort"
	"strings"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sim/scenario"
)

// Options tune a fit. The zero value is sensible.
type Options struct {
	// MaxEvals bounds the loss evaluations of the search (default 1500).
	MaxEvals int
	// Params names the profile coefficients to fit (JSON names); default
	// DefaultParams.
	Params []string
	// Regularization weighs log(θ/θ_prior)² per coefficient (default 0.01;
	// negative disables it).
	Regularization float64
	// NoiseSigmas is the grid σ is chosen from (default 0 … 0.3).
	NoiseSigmas []float64
	// Seeds is the number of seeds per σ when matching run-to-run spread
	// (default 8).
	Seeds int
}

// DefaultParams are the coefficients fitted unless Options.Params says
// otherwise.
var DefaultParams = []string{"step_base_ns", "prefill_ns_per_token", "prefill_attn_ns_per_token_ctx",
	"decode_ns_per_seq", "decode_ns_per_ctx_token", "frontend_ns", "host_overhead_ns"}

// coef is one fitted coefficient: its field, its physical floor, and a
// scale for coefficients whose floor is 0.
type coef struct {
	name  string
	field func(*model.Profile) *float64
	floor float64
	ref   float64
}

func coefs(d model.Deployment) map[string]coef {
	tp := float64(max(d.TP, 1))
	peak := d.GPU.BF16FLOPS
	if d.Quant == model.FP8 && d.GPU.FP8FLOPS > 0 {
		peak = d.GPU.FP8FLOPS
	}
	bw := d.GPU.HBMBytesPerSec
	m := d.Model
	kv := d.KVDtypeBytes
	if kv == 0 {
		kv = 2
	}
	return map[string]coef{
		// A decode step reads every weight at least once; prefill needs
		// 2·params FLOPs per token; attention 2·layers·heads·head_dim per
		// token·context; decode reads each context token's KV.
		"step_base_ns":                  {"step_base_ns", func(p *model.Profile) *float64 { return &p.StepBaseNs }, float64(m.WeightBytes(d.Quant)) / tp / bw * 1e9, 0},
		"prefill_ns_per_token":          {"prefill_ns_per_token", func(p *model.Profile) *float64 { return &p.PrefillNsPerToken }, m.FLOPsPerToken() / tp / peak * 1e9, 0},
		"prefill_attn_ns_per_token_ctx": {"prefill_attn_ns_per_token_ctx", func(p *model.Profile) *float64 { return &p.PrefillAttnNsPerTokenCtx }, 2 * float64(m.Layers*m.Heads*m.HeadDim) / tp / peak * 1e9, 0},
		"decode_ns_per_ctx_token":       {"decode_ns_per_ctx_token", func(p *model.Profile) *float64 { return &p.DecodeNsPerCtxToken }, float64(m.KVBytesPerToken(kv)) / tp / bw * 1e9, 0},
		"decode_ns_per_seq":             {"decode_ns_per_seq", func(p *model.Profile) *float64 { return &p.DecodeNsPerSeq }, 0, 20e3},
		"frontend_ns":                   {"frontend_ns", func(p *model.Profile) *float64 { return &p.FrontendNs }, 0, 5e6},
		"frontend_ns_per_input_token":   {"frontend_ns_per_input_token", func(p *model.Profile) *float64 { return &p.FrontendNsPerInputToken }, 0, 1e3},
		"host_overhead_ns":              {"host_overhead_ns", func(p *model.Profile) *float64 { return &p.HostOverheadNs }, 0, 0},
	}
}

// arm is one setup and its measured statistics (repetitions averaged).
type arm struct {
	name     string
	spec     scenario.Spec
	built    *scenario.Built
	measured Stats
	spread   Stats
	windowS  float64
	records  []Record // one repetition's per-request records, if any
}

// run simulates the arm's workload (a fresh population for sessions)
// with cfg, whose profile and seed the caller chose.
func (a *arm) run(cfg sim.Config, pol policy.Policy) (*sim.Result, error) {
	wl, pop := a.built.ForSeed(cfg.Seed, 0)
	if pop != nil {
		cfg.FollowUp = pop
	}
	return sim.Run(cfg, wl, pol)
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
	if opt.Params == nil {
		opt.Params = DefaultParams
	}
	if opt.Regularization == 0 {
		opt.Regularization = 0.01
	}
	if opt.NoiseSigmas == nil {
		opt.NoiseSigmas = []float64{0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3}
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
	all := coefs(dep)
	var fit []coef
	for _, name := range opt.Params {
		c, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("calib: unknown coefficient %q (known: %s)", name, strings.Join(sortedKeys(all), ", "))
		}
		fit = append(fit, c)
	}
	f := &fitter{arms: arms, base: base, coefs: fit, reg: opt.Regularization}
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
		// Refit under the noise the profile will run with: the same three
		// seeds for every candidate (common random numbers), averaged.
		f.sigma, f.seeds = sigma, 3
		x, loss, err = f.search(x, f.evals+opt.MaxEvals/4, 0.1)
		if err != nil {
			return nil, err
		}
		prof = f.decode(x)
		noiseNote += fmt.Sprintf("; coefficients then refitted at σ = %g over seeds 1–3", sigma)
	}
	prof.NoiseSigma = sigma
	unc := f.uncertainty(x, loss)
	powerNote := fitPower(prof, obs)
	prof.Kind = "measured"
	prof.Name = fmt.Sprintf("%s.%s.tp%d.calibrated", strings.ToLower(dep.GPU.Name), strings.ToLower(dep.Model.Name), dep.TP)
	prof.Source = fmt.Sprintf("routesim calibrate %q: %d runs (%s), starting from %s", spec.Name, len(spec.Runs), runNames(spec), base.Name)
	prof.Note = ""
	rep := f.report(prof, base, x, unc, opt)
	rep.Loss, rep.Evals = loss, f.evals
	if linNote != "" {
		rep.Notes = append(rep.Notes, linNote)
	}
	rep.Notes = append(rep.Notes, noiseNote, powerNote)
	prof.FitError = fmt.Sprintf("max |error| %.1f%%, mean |error| %.1f%% over %d statistics", rep.MaxAbsErrPct(), rep.MeanAbsErrPct(), len(rep.Rows))
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("calib: fitted profile invalid: %w", err)
	}
	return &Result{Profile: prof, Report: rep}, nil
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

// Evaluate re-simulates the spec's runs with profile p (with its noise σ,
// averaged over seeds) and reports every statistic against the
// measurements, without fitting anything.
func Evaluate(spec *Spec, p *model.Profile, seeds int) (*Report, error) {
	obs, err := spec.Load()
	if err != nil {
		return nil, err
	}
	arms, err := buildArms(spec, obs, p)
	if err != nil {
		return nil, err
	}
	if seeds < 1 {
		seeds = 1
	}
	f := &fitter{arms: arms, base: p}
	return f.report(p, p, nil, nil, Options{Seeds: seeds}), nil
}
