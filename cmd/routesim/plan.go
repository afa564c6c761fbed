package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
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

// driver is the plan's searches as pf sets them.
func (pf planFlags) driver() *plan.Driver {
	return &plan.Driver{Ns: pf.ns, Policies: pf.policies, Seeds: pf.seeds, BaseSeed: pf.baseSeed, Confidence: pf.confidence,
		SLO: pf.slo, Draws: pf.draws, Jobs: pf.jobs, Shard: pf.shard, Scan: pf.scan, GPUHourCost: pf.gpuHour, Version: Version}
}

// maxSteps is the most sizes one search runs.
func (pf planFlags) maxSteps() int { return pf.driver().MaxSteps() }

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
	d := pf.driver()
	var cases []plan.Case
	for ci, c := range combos {
		for si, x := range pf.scales {
			spec := plan.ScaleTraffic(c.spec, x)
			spec.Policy = pf.policies[0]
			pc := plan.Case{Settings: c.values, TrafficScale: x, Spec: spec,
				Dir: filepath.Join(pf.out, "runs", fmt.Sprintf("setting-%d.traffic-%d", ci, si))}
			if pc.Digest, err = d.Digest(spec); err != nil {
				return err
			}
			if err := d.Probe(&pc).Prepare(); err != nil {
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
			cases = append(cases, pc)
		}
	}
	if *dry {
		var labels []string
		for _, c := range cases {
			labels = append(labels, plan.SettingLabel(c.Settings, c.TrafficScale))
		}
		return printPlanDryRun(stdout, pf, labels)
	}
	lock, err := claimPlanDir(pf.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	if !pf.quiet {
		d.Progress = func(pol, label string, n, met, runs int) {
			fmt.Fprintf(stderr, "plan: %s%s: N = %d meets the objectives in %d of %d runs\n", pol, label, n, met, runs)
		}
	}
	entries, err := d.Run(ctx, cases)
	if err != nil {
		return err
	}
	if pf.shard.K > 1 {
		fmt.Fprintf(stdout, "shard %d/%d: %d searches done, their runs are in %s/runs; run plan again without --shard on the same --out for the whole plan\n",
			pf.shard.I, pf.shard.K, len(entries), pf.out)
		return nil
	}
	o := d.Output(entries)
	if err := writePlanOutputs(pf, o, base); err != nil {
		return err
	}
	return printPlan(stdout, pf, o, specTrustLine(&base))
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
