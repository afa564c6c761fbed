package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/plan"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// planFlags are plan's own settings beside the base run's.
type planFlags struct {
	ns         []int
	policies   []string
	seeds      int
	baseSeed   uint64
	confidence float64
	slo        plan.SLO
	scales     []float64
	settings   []planSetting
	gpuHour    float64
	draws      int
	jobs       int
	out        string
	shard      sweep.Shard
	quiet      bool
	scan       bool
}

// maxSteps is the most sizes one search runs.
func (pf planFlags) maxSteps() int {
	if pf.scan {
		return len(pf.ns)
	}
	return plan.MaxSteps(len(pf.ns))
}

// planSetting is one candidate engine or router setting: a run flag and
// the values to try.
type planSetting struct {
	Flag   string   `json:"flag"`
	Values []string `json:"values"`
}

func planCmd(args []string, stdout, stderr io.Writer) error {
	return planWithContext(context.Background(), args, stdout, stderr)
}

func planWithContext(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := pflag.NewFlagSet("routesim plan", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	base, src, err := scenarioBase(args, sweepDefaults())
	if err != nil {
		return err
	}
	defer func() { err = located(err, fs, src, planOwnFlags(fs)...) }()
	addRunFlags(fs, &base, "n", "policy", "seed")
	fs.String("scenario", "", "scenario file (JSON with the base run's settings; flags override it)")
	nFlag := fs.String("n", "1..16", "cluster sizes to search: 1..16, 2..32:2 or 2,4,8 (a larger cluster is assumed never worse)")
	pols := fs.StringSlice("policy", []string{"round-robin", "kv"}, "policies to plan for ("+joinNames(policy.Names())+")")
	seeds := fs.Int("seeds", 5, "seeds per cluster size")
	baseSeed := fs.Uint64("seed", 0, "first seed")
	conf := fs.Float64("confidence", 0.9, "share of runs (seeds × coefficient draws) that must meet every objective")
	var slo plan.SLO
	fs.Float64Var(&slo.TTFTP95Ms, "slo-ttft-p95", 0, "TTFT p95 over offered requests, ms (a rejection counts as a violation; 0 = none)")
	fs.Float64Var(&slo.ITLP95Ms, "slo-itl-p95", 0, "inter-token latency p95 over offered requests, ms (0 = none)")
	fs.Float64Var(&slo.E2EP95Ms, "slo-e2e-p95", 0, "end-to-end latency p95 over offered requests, ms (0 = none)")
	fs.Float64Var(&slo.MinCompleteness, "min-completeness", 0, "least share of offered requests completed (0 = none)")
	fs.Float64Var(&slo.MinGoodput, "min-goodput", 0, "least share of offered requests completed within every latency objective (0 = none)")
	scales := fs.Float64Slice("traffic-scale", []float64{1}, "traffic multipliers `x[,x…]`: arrival rate (trace, synthetic) or users (sessions) × x; one plan per value")
	settingFlags := fs.StringArray("setting", nil, "candidate setting `FLAG=v1,v2`: a run flag and values to try (repeatable; every combination is planned), e.g. max-num-seqs=128,256")
	gpuHour := fs.Float64("gpu-hour-cost", 0, "price of one GPU-hour: adds the cost per million requests at the plan's N (0 = off)")
	draws := fs.Int("uncertainty", 0, "per run, also K coefficient sets drawn from the profile's posterior; each counts towards --confidence (0 = off)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs in parallel")
	out := fs.String("out", "routesim-plan", "output directory (re-running resumes: finished runs are kept)")
	shardFlag := fs.String("shard", "0/1", "search only every k-th (policy, setting, traffic) of shard i/k; a final unsharded run over the same --out reuses their runs")
	quiet := fs.Bool("quiet", false, "no progress output")
	scan := fs.Bool("scan", false, "run every size of --n instead of bisecting (for policies that can do worse with more workers)")
	dry := fs.Bool("dry-run", false, "check every flag and build every configuration, list the searches, write nothing")
	showAliases(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim plan --slo-ttft-p95 MS [--min-completeness F …] [flags]\n\nFind, per policy (and setting, and traffic level), the smallest cluster that meets every objective over the offered requests with the given confidence: the largest N is checked first, then bisection.\n%s", groupedUsage(fs, "Plan flags", simHelpGroups))
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("plan: unexpected arguments %q", fs.Args())}
	}
	if err := applyClientFlags(fs, &base); err != nil {
		return err
	}
	applyWindowDefaults(fs, &base, new([]float64))
	applyEngineDefaults(fs, src, &base)
	pf := planFlags{policies: *pols, seeds: *seeds, baseSeed: *baseSeed, confidence: *conf, slo: slo, scales: *scales,
		gpuHour: *gpuHour, draws: *draws, jobs: *jobs, out: *out, quiet: *quiet, scan: *scan}
	var errs []error
	if pf.ns, err = sweep.ParseRange(*nFlag, sim.MaxWorkers); err != nil {
		errs = append(errs, fmt.Errorf("--n: %w", err))
	}
	if len(pf.policies) == 0 {
		errs = append(errs, errors.New("--policy: give at least one policy"))
	}
	firstPolicy, perrs := checkPolicyList(pf.policies)
	errs = append(errs, perrs...)
	if err := checkSeeds(*seeds, *baseSeed); err != nil {
		errs = append(errs, err)
	}
	if !(*conf > 0 && *conf <= 1) {
		errs = append(errs, fmt.Errorf("--confidence %g must be in (0, 1]", *conf))
	}
	if err := slo.Validate(); err != nil {
		errs = append(errs, err)
	}
	for i, x := range pf.scales {
		if err := checkTrafficScale(base, x); err != nil {
			errs = append(errs, err)
		} else if slices.Contains(pf.scales[:i], x) {
			errs = append(errs, fmt.Errorf("--traffic-scale %g is listed twice", x))
		}
	}
	if !(*gpuHour >= 0 && *gpuHour <= maxGPUHourCost) {
		errs = append(errs, fmt.Errorf("--gpu-hour-cost %g must be in [0, %g]", *gpuHour, maxGPUHourCost))
	}
	if err := checkJobs(*jobs); err != nil {
		errs = append(errs, err)
	}
	if pf.shard, err = sweep.ParseShard(*shardFlag); err != nil {
		errs = append(errs, err)
	}
	if pf.settings, err = parseSettings(*settingFlags); err != nil {
		errs = append(errs, err)
	} else if err := checkPlanSearches(len(pf.policies), pf.settings, len(pf.scales)); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, workloadFlagErrors(fs, base.Workload)...)
	errs = append(errs, engineFlagErrors(fs, &base)...)
	// A policy flag no planned policy reads is an error, given directly
	// or as a --setting candidate.
	setting := func(flag string) bool {
		return fs.Changed(flag) || slices.ContainsFunc(pf.settings, func(s planSetting) bool { return s.Flag == flag })
	}
	errs = append(errs, policiesFlagErrors(setting, &base, pf.policies)...)
	base.Policy = firstPolicy // (an unknown one is reported above)
	if base.Policy == "" {
		base.Policy = "round-robin"
	}
	if err := base.Validate(); err != nil {
		errs = append(errs, err)
	} else if _, perrs := loadProfile(fs, &base); len(perrs) > 0 {
		errs = append(errs, perrs...)
	}
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	if err := checkDraws(*draws); err != nil {
		return err
	}
	combos, err := settingCombos(base, pf.settings, fs.Changed("block-size") || src.Line("block_size") > 0)
	if err != nil {
		return usageError{err}
	}
	// Build every configuration before anything is written.
	type job struct {
		setting map[string]string
		scale   float64
		spec    scenario.Spec
		dir     string
		runner  func(n int, pol string) *sweep.Runner
	}
	var work []job
	for ci, c := range combos {
		for si, x := range pf.scales {
			spec := scaleTraffic(c.spec, x)
			spec.Policy = pf.policies[0]
			dir := filepath.Join(pf.out, "runs", fmt.Sprintf("setting-%d.traffic-%d", ci, si))
			digest, err := planDigest(spec, pf)
			if err != nil {
				return err
			}
			probe := &sweep.Runner{Base: spec, Grid: sweep.Grid{Ns: pf.ns[len(pf.ns)-1:], Policies: pf.policies, Seeds: pf.seeds,
				BaseSeed: pf.baseSeed, RateScales: []float64{spec.RateScale}}, Dir: dir, Jobs: pf.jobs, Uncertainty: pf.draws}
			if err := probe.Prepare(); err != nil {
				if x != 1 { // the scaled rate is --traffic-scale's doing
					err = fmt.Errorf("--traffic-scale %g: %w", x, err)
				}
				return usageError{err}
			}
			if pf.draws > 0 {
				b, err := spec.Build(nil)
				if err != nil {
					return usageError{err}
				}
				if _, err := b.Posterior(); err != nil {
					return usageError{fmt.Errorf("--uncertainty: %w", err)}
				}
			}
			slo := pf.slo
			work = append(work, job{setting: c.values, scale: x, spec: spec, dir: dir, runner: func(n int, pol string) *sweep.Runner {
				return &sweep.Runner{Base: spec, Grid: sweep.Grid{Ns: []int{n}, Policies: []string{pol}, Seeds: pf.seeds,
					BaseSeed: pf.baseSeed, RateScales: []float64{spec.RateScale}}, Dir: dir, Jobs: pf.jobs, Uncertainty: pf.draws, Digest: digest,
					Evaluate: func(res *sim.Result) (json.RawMessage, error) { return json.Marshal(plan.Evaluate(res, slo)) }}
			}})
		}
	}
	if *dry {
		var labels []string
		for _, j := range work {
			labels = append(labels, settingLabel(j.setting, j.scale))
		}
		return printPlanDryRun(stdout, pf, labels)
	}
	lock, err := claimPlanDir(pf.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	search := plan.Search
	if pf.scan {
		search = plan.Scan
	}
	var entries []planEntry
	idx := 0
	for _, j := range work {
		for _, pol := range pf.policies {
			mine := pf.shard.Has(idx)
			idx++
			if !mine {
				continue
			}
			statsAt := map[int][]plan.Stats{}
			minN, steps, err := search(pf.ns, pf.confidence, func(n int) (float64, error) {
				results, err := j.runner(n, pol).Run(ctx)
				if err != nil {
					return 0, err
				}
				st, err := runStats(results)
				if err != nil {
					return 0, err
				}
				statsAt[n] = st
				met := 0
				for _, s := range st {
					if s.Met {
						met++
					}
				}
				a := float64(met) / float64(len(st))
				if !pf.quiet {
					fmt.Fprintf(stderr, "plan: %s%s: N = %d meets the objectives in %d of %d runs\n", pol, settingLabel(j.setting, j.scale), n, met, len(st))
				}
				return a, nil
			})
			if err != nil {
				return err
			}
			e := planEntry{Policy: pol, Settings: j.setting, TrafficScale: j.scale, MinN: minN, Met: minN > 0,
				Evaluated: steps, Evaluations: len(steps), MaxEvaluations: pf.maxSteps()}
			if minN > 0 {
				e.GPUs = minN * j.spec.TP
				med := medianStats(statsAt[minN])
				e.Stats = &med
				for _, s := range steps {
					if s.N == minN {
						e.Attainment = s.Attainment
					}
				}
				if m := pf.slo.Margin(med); !math.IsInf(m, 0) {
					e.Margin = &m
				}
				if pf.gpuHour > 0 && med.Completed > 0 {
					c := pf.gpuHour * float64(e.GPUs) * med.DurationS / 3600 / float64(med.Completed) * 1e6
					e.CostPerMillion = &c
				}
			}
			entries = append(entries, e)
		}
	}
	if pf.shard.K > 1 {
		fmt.Fprintf(stdout, "shard %d/%d: %d searches done, their runs are in %s/runs; run plan again without --shard on the same --out for the whole plan\n",
			pf.shard.I, pf.shard.K, len(entries), pf.out)
		return nil
	}
	o := planOutput{Tool: "routesim", Version: Version, SLO: pf.slo, Confidence: pf.confidence, Seeds: pf.seeds, BaseSeed: pf.baseSeed,
		Draws: pf.draws, Ns: pf.ns, Plans: entries}
	if err := writePlanOutputs(pf, o, base); err != nil {
		return err
	}
	return printPlan(stdout, pf, o, specTrustLine(&base))
}

// runStats decodes every run's objective figures (the point's and its
// draws') from a step's results.
func runStats(results []sweep.Result) ([]plan.Stats, error) {
	var out []plan.Stats
	for _, r := range results {
		for _, raw := range append([]json.RawMessage{r.Eval}, r.DrawEvals...) {
			var s plan.Stats
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("point %s: no objective figures (%v): run with a fresh --out", r.Key, err)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// medianStats is the per-figure median over runs (an infinite percentile
// sorts last).
func medianStats(st []plan.Stats) plan.Stats {
	med := func(get func(plan.Stats) float64) float64 {
		xs := make([]float64, len(st))
		for i, s := range st {
			xs[i] = get(s)
		}
		sort.Float64s(xs)
		return sim.Quantile7(xs, 0.5)
	}
	ptr := func(get func(plan.Stats) *float64) *float64 {
		v := med(func(s plan.Stats) float64 {
			if p := get(s); p != nil {
				return *p
			}
			return math.Inf(1)
		})
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	m := plan.Stats{
		Offered:      int(med(func(s plan.Stats) float64 { return float64(s.Offered) })),
		TTFTP95Ms:    ptr(func(s plan.Stats) *float64 { return s.TTFTP95Ms }),
		ITLP95Ms:     ptr(func(s plan.Stats) *float64 { return s.ITLP95Ms }),
		E2EP95Ms:     ptr(func(s plan.Stats) *float64 { return s.E2EP95Ms }),
		Completeness: med(func(s plan.Stats) float64 { return s.Completeness }),
		Goodput:      med(func(s plan.Stats) float64 { return s.Goodput }),
		DurationS:    med(func(s plan.Stats) float64 { return s.DurationS }),
		Completed:    int(med(func(s plan.Stats) float64 { return float64(s.Completed) })),
	}
	met := 0
	for _, s := range st {
		if s.Met {
			met++
		}
	}
	m.Met = 2*met > len(st)
	return m
}

// parseSettings reads --setting FLAG=v1,v2 values.
func parseSettings(raw []string) ([]planSetting, error) {
	var out []planSetting
	known := pflag.NewFlagSet("", pflag.ContinueOnError)
	var dummy scenario.Spec
	registerSim(known, &dummy)
	var errs []error
	for _, r := range raw {
		flag, vals, ok := strings.Cut(r, "=")
		flag = strings.TrimPrefix(flag, "--")
		switch {
		case !ok || vals == "":
			errs = append(errs, fmt.Errorf("--setting %q: want FLAG=v1,v2", r))
			continue
		case known.Lookup(flag) == nil || slices.Contains([]string{"n", "policy", "seed", "scenario", "trace", "workload", "out"}, flag):
			errs = append(errs, fmt.Errorf("--setting %q: %s is not an engine, router or policy flag of routesim run", r, flag))
			continue
		case slices.ContainsFunc(out, func(s planSetting) bool { return s.Flag == flag }):
			errs = append(errs, fmt.Errorf("--setting %s is given twice", flag))
			continue
		}
		out = append(out, planSetting{Flag: flag, Values: strings.Split(vals, ",")})
	}
	return out, errors.Join(errs...)
}

type settingCombo struct {
	values map[string]string
	spec   scenario.Spec
}

// settingCombos applies every combination of the candidate settings to
// base, each through the run flags' own parsing and validation. An engine
// candidate brings its KV block size unless the user set one (blockSet,
// or a block-size candidate).
func settingCombos(base scenario.Spec, settings []planSetting, blockSet bool) ([]settingCombo, error) {
	blockSet = blockSet || slices.ContainsFunc(settings, func(s planSetting) bool { return s.Flag == "block-size" })
	combos := []settingCombo{{values: map[string]string{}, spec: base}}
	for _, s := range settings {
		var next []settingCombo
		for _, c := range combos {
			for _, v := range s.Values {
				spec := c.spec
				fs := pflag.NewFlagSet("", pflag.ContinueOnError)
				fs.SetOutput(io.Discard)
				registerSim(fs, &spec)
				if err := fs.Parse([]string{"--" + s.Flag + "=" + v}); err != nil {
					return nil, fmt.Errorf("--setting %s=%s: %w", s.Flag, v, err)
				}
				if s.Flag == "engine" && !blockSet {
					spec.BlockSize = sim.DefaultBlockSize(spec.EngineKind())
				}
				if err := spec.Validate(); err != nil {
					return nil, fmt.Errorf("--setting %s=%s: %w", s.Flag, v, err)
				}
				vals := map[string]string{}
				for k, x := range c.values {
					vals[k] = x
				}
				vals[s.Flag] = v
				next = append(next, settingCombo{values: vals, spec: spec})
			}
		}
		combos = next
	}
	return combos, nil
}

// planOwnFlags are the run flags whose fields plan sets its own way: the
// search's axes, the --setting candidates and, with --traffic-scale, the
// load it scales.
func planOwnFlags(fs *pflag.FlagSet) []string {
	own := []string{"n", "policy", "seed"}
	if fs.Changed("traffic-scale") {
		own = append(own, "rate-scale", "concurrency")
	}
	if v, err := fs.GetStringArray("setting"); err == nil {
		for _, s := range v {
			flag, _, _ := strings.Cut(s, "=")
			own = append(own, strings.TrimPrefix(flag, "--"))
		}
	}
	return own
}

// scaleTraffic multiplies the offered traffic: the arrival rate of a trace
// or synthetic stream, the users of a sessions workload.
func scaleTraffic(s scenario.Spec, x float64) scenario.Spec {
	if x == 1 {
		return s
	}
	if s.Workload == "sessions" {
		s.Sessions.Concurrency = max(1, int(math.Round(float64(s.Sessions.Concurrency)*x)))
		return s
	}
	s.RateScale *= x
	return s
}

func settingLabel(vals map[string]string, scale float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		parts = append(parts, "--"+k+"="+vals[k])
	}
	if scale != 1 {
		parts = append(parts, fmt.Sprintf("traffic ×%g", scale))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// planDigest identifies what a run directory's points depend on.
func planDigest(spec scenario.Spec, pf planFlags) (string, error) {
	j, err := jsonString(struct {
		Tool, Version string
		Base          scenario.Spec
		Seeds, Draws  int
		BaseSeed      uint64
		SLO           plan.SLO
	}{"routesim plan", Version, spec, pf.seeds, pf.draws, pf.baseSeed, pf.slo})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(j))
	return hex.EncodeToString(sum[:]), nil
}
