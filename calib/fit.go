package calib

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"github.com/routesim/routesim/model"
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

// linearFit iterates the per-request regression (linear.go) from base
// until the coefficients settle, then sets the host overhead from the
// measured utilization. It returns nil when no arm has per-request records.
func (f *fitter) linearFit(base *model.Profile, all map[string]coef, params []string) (*model.Profile, string, error) {
	// The regression is exact at the truth but biased on a wrong schedule,
	// and most in queue-dominated runs; so iterate on each arm alone and on
	// all together, and keep whichever start explains every arm best.
	var best *model.Profile
	bestLoss, bestNote := math.Inf(1), ""
	subsets := [][]*arm{f.arms}
	if len(f.arms) > 1 {
		for _, a := range f.arms {
			subsets = append(subsets, []*arm{a})
		}
	}
	allArms := f.arms
	defer func() { f.arms = allArms }()
	for _, sub := range subsets {
		f.arms = sub
		p, note, err := f.linearFitArms(base, all, params)
		f.arms = allArms
		if err != nil {
			return nil, "", err
		}
		if p == nil {
			continue
		}
		if l := f.lossOf(p); l < bestLoss {
			names := make([]string, len(sub))
			for i, a := range sub {
				names[i] = a.name
			}
			best, bestLoss, bestNote = p, l, fmt.Sprintf("%s on arm(s) %s (loss %.3g)", note, strings.Join(names, ", "), l)
		}
	}
	if best != nil && hasParam(params, "host_overhead_ns") {
		best.HostOverheadNs = f.hostFromUtil(best)
	}
	return best, bestNote, nil
}

func hasParam(params []string, name string) bool {
	for _, p := range params {
		if p == name {
			return true
		}
	}
	return false
}

func (f *fitter) linearFitArms(base *model.Profile, all map[string]coef, params []string) (*model.Profile, string, error) {
	fitted := map[string]bool{}
	for _, p := range params {
		fitted[p] = true
	}
	floors := map[string]float64{}
	for _, name := range append([]string{"frontend_ns"}, stepCoefs...) {
		if fitted[name] {
			floors[name] = all[name].floor
		} else { // not fitted: pin it at its current value
			floors[name] = *all[name].field(base)
		}
	}
	// Damped fixed-point iteration: move a quarter of the way (geometrically)
	// toward the regression's answer and keep the iterate with the lowest
	// full loss; full steps oscillate once queues make the schedule sensitive.
	p, best := base, f.lossOf(base)
	cur := base
	rounds := 0
	names := append([]string{"frontend_ns"}, stepCoefs...)
	for ; rounds < 60; rounds++ {
		q, ok, err := f.linearRound(cur, floors)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			if rounds == 0 {
				return nil, "", nil
			}
			break
		}
		next := *cur
		change := 0.0
		for _, name := range names {
			a, b := *all[name].field(cur), *all[name].field(q)
			v := b
			if !fitted[name] {
				v = *all[name].field(base)
			} else if a > 0 && b > 0 {
				v = a * math.Pow(b/a, linearStep)
			}
			if a > 0 {
				change = math.Max(change, math.Abs(v/a-1))
			}
			*all[name].field(&next) = v
		}
		cur = &next
		if l := f.lossOf(cur); l < best {
			p, best = cur, l
		}
		if change < 0.002 {
			rounds++
			break
		}
	}
	p = clone(p)
	return p, fmt.Sprintf("per-request regression: %d rounds of simulate → least squares on step features", rounds), nil
}

// hostOverheadFromUtil solves utilization = (busy − steps·host)/(window·N)
// for host, over every arm with a GPU measurement.
func (f *fitter) hostFromUtil(p *model.Profile) float64 {
	var excess, steps float64
	for _, a := range f.arms {
		u, ok := a.measured["gpu_util_mean"]
		if !ok {
			continue
		}
		cfg := a.built.Config
		cfg.Profile = p
		pol, err := a.spec.NewPolicy()
		if err != nil {
			continue
		}
		res, err := sim.Run(cfg, a.built.Work, pol)
		if err != nil {
			continue
		}
		window := a.windowS * 1e9
		if window == 0 {
			window = float64(res.Makespan)
		}
		for _, w := range res.Workers {
			excess += float64(w.BusyNs)
			steps += float64(w.Steps)
		}
		excess -= u * window * float64(cfg.Workers)
	}
	if steps == 0 {
		return p.HostOverheadNs
	}
	return math.Min(math.Max(excess/steps, 0), 0.95*p.StepBaseNs)
}

// linearStep is the damping of the per-request iteration.
const linearStep = 0.25

func clone(p *model.Profile) *model.Profile { q := *p; return &q }

func buildArms(spec *Spec, obs []Observed, base *model.Profile) ([]*arm, error) {
	byArm := map[string]*arm{}
	var order []string
	reps := map[string][]Stats{}
	for i := range obs {
		o := &obs[i]
		a, ok := byArm[o.Run.Arm]
		if !ok {
			a = &arm{name: o.Run.Arm, spec: o.Run.Setup}
			b, err := a.spec.Build(base)
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", o.Run.Name, err)
			}
			a.built = b
			byArm[o.Run.Arm] = a
			order = append(order, o.Run.Arm)
		}
		if o.GPU != nil {
			a.windowS = o.GPU.WindowS
		}
		if a.records == nil && len(o.Records) > 0 {
			a.records = o.Records
		}
		st := measuredStats(o)
		if len(st) == 0 {
			return nil, fmt.Errorf("run %s: no statistics to fit", o.Run.Name)
		}
		reps[o.Run.Arm] = append(reps[o.Run.Arm], st)
	}
	var arms []*arm
	for _, name := range order {
		a := byArm[name]
		a.measured, a.spread = meanStats(reps[name])
		arms = append(arms, a)
	}
	return arms, nil
}

type fitter struct {
	arms  []*arm
	base  *model.Profile
	coefs []coef
	reg   float64
	evals int
	// sigma and seeds: candidates run with noise σ over seeds 1..seeds and
	// their statistics are averaged (0 = noise-free, one run).
	sigma float64
	seeds int
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
			x[i] = math.Log(math.Max(v/c.floor-1, 0.2))
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
		cfg := a.built.Config
		cfg.Profile = p
		cfg.Seed = seed
		spec := a.spec
		spec.Seed = seed
		pol, err := spec.NewPolicy()
		if err != nil {
			return nil, nil, err
		}
		res, err := sim.Run(cfg, a.built.Work, pol)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, simulatedStats(res, a.windowS))
		results = append(results, res)
	}
	return out, results, nil
}

// loss is Σ over arms and statistics of w·log(sim/measured)², the
// per-request TTFT and ITL log errors where records exist, and the
// regularisation toward the starting profile.
func (f *fitter) loss(x []float64) float64 {
	f.evals++
	p := f.decode(x)
	total := f.lossOf(p)
	if f.reg > 0 {
		for _, c := range f.coefs {
			prior, v := *c.field(f.base), *c.field(p)
			if prior > 0 && v > 0 {
				d := math.Log(v / prior)
				total += f.reg * d * d
			}
		}
	}
	return total
}

func statLoss(measured, simulated Stats) float64 {
	total := 0.0
	for k, m := range measured {
		s, ok := simulated[k]
		if !ok || m <= 0 {
			continue
		}
		if s <= 0 {
			s = 1e-9
		}
		d := math.Log(s / m)
		total += statWeights[k] * d * d
	}
	return total
}

// recordLoss compares requests one by one, in arrival order; it is skipped
// when the runs completed different sets of requests.
func recordLoss(meas []Record, simRecs []sim.Record) float64 {
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
		return 0
	}
	total, n := 0.0, 0
	for i, m := range ok {
		s := done[i]
		if m.TTFTMs > 0 {
			d := math.Log(math.Max(s.TTFT().Ms(), 1e-6) / m.TTFTMs)
			total += d * d
			n++
		}
		if m.OSL >= 2 && m.ITLMs > 0 && s.ITL() > 0 {
			d := math.Log(s.ITL() / 1e6 / m.ITLMs)
			total += d * d
			n++
		}
	}
	return 4 * total / float64(n)
}

// uncertainty finds, per coefficient, the smallest relative change that
// raises the loss by 10 % (at least 0.005): a profile-likelihood width.
func (f *fitter) uncertainty(x []float64, best float64) []float64 {
	out := make([]float64, len(f.coefs))
	target := best + math.Max(0.1*best, 0.005)
	p0 := f.decode(x)
	for i, c := range f.coefs {
		out[i] = math.Inf(1)
		v0 := *c.field(p0)
		if v0 == 0 {
			continue
		}
	steps:
		for _, rel := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5} {
			for _, sign := range []float64{-1, 1} {
				p := *p0
				*c.field(&p) = v0 * (1 + sign*rel)
				if c.floor > 0 && *c.field(&p) <= c.floor {
					continue
				}
				if f.lossOf(&p) > target {
					out[i] = rel
					break steps
				}
			}
		}
	}
	return out
}

// lossOf is the data term of the loss for profile p (no regularisation).
func (f *fitter) lossOf(p *model.Profile) float64 {
	if f.sigma > 0 {
		q := *p
		q.NoiseSigma = f.sigma
		per := make([][]Stats, len(f.arms))
		for s := 1; s <= f.seeds; s++ {
			stats, _, err := f.simulate(&q, uint64(s))
			if err != nil {
				return 1e6
			}
			for i := range f.arms {
				per[i] = append(per[i], stats[i])
			}
		}
		total := 0.0
		for i, a := range f.arms {
			m, _ := meanStats(per[i])
			total += statLoss(a.measured, m)
		}
		return total
	}
	stats, results, err := f.simulate(p, 0)
	if err != nil {
		return 1e6
	}
	total := 0.0
	for i, a := range f.arms {
		total += statLoss(a.measured, stats[i])
		if a.records != nil {
			total += recordLoss(a.records, results[i].Records)
		}
	}
	return total
}

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
		if e < bestErr {
			best, bestErr = sigma, e
		}
	}
	return best, fmt.Sprintf("noise σ = %g: seed-to-seed relative spread of the %d latency statistics matched to the repetitions' over %d seeds (mean squared error by σ: %s)",
		best, len(keys), opt.Seeds, strings.Join(lines, "; "))
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
