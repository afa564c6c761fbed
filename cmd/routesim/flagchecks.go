package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/workload"
	"github.com/routesim/routesim/workload/session"
)

// Parse-time bounds of the commands' own numeric flags (run's flags are
// scenario.Spec fields, checked by its Validate). Each is checked before
// anything is written, and refused naming the flag: a value past it is a
// typo or asks for work no machine finishes, and clamping it silently
// would run something else than what was asked.
const (
	// minMaxJobs is the least upper bound of --jobs (the bound is the
	// machine's CPU count when larger): parallel runs past the cores add
	// goroutines and memory — each run holds its own cluster — not speed.
	minMaxJobs = 1024
	// maxBootstrap bounds sweep --bootstrap: SciPy's default is 9,999
	// replicates; 100,000 pin a 95 % interval's ends far below the spread
	// of the seeds they resample.
	maxBootstrap = 100_000
	// maxSweepRuns bounds a sweep's simulations: points (rate scales ×
	// load axis × N × policies × seeds) times 1 + --uncertainty draws. A
	// million runs of even a small trace take days; the grid is listed in
	// memory before the first run.
	maxSweepRuns = 1_000_000
	// maxPlanSearches bounds plan's searches: policies × --setting
	// combinations × --traffic-scale values, each a bisection of runs.
	maxPlanSearches = 10_000
	// maxGPUHourCost bounds plan --gpu-hour-cost (any currency): the cost
	// per million requests it yields stays finite.
	maxGPUHourCost = 1e9
)

// maxJobs is the most parallel runs --jobs may ask for: minMaxJobs, or the
// machine's CPU count if larger (so the default is always valid).
func maxJobs() int { return max(minMaxJobs, runtime.NumCPU()) }

// checkJobs validates a worker-count flag (--jobs of sweep, plan, validate
// and calibrate).
func checkJobs(n int) error {
	if n < 1 || n > maxJobs() {
		return fmt.Errorf("--jobs %d must be in [1, %d]", n, maxJobs())
	}
	return nil
}

// checkBootstrap validates sweep --bootstrap.
func checkBootstrap(n int) error {
	if n < 0 || n > maxBootstrap {
		return fmt.Errorf("--bootstrap %d must be in [0, %d]", n, maxBootstrap)
	}
	return nil
}

// checkSLOTTFT validates sweep --slo-ttft: a finite number ≥ 0 of
// milliseconds, read by --metric goodput only (as run refuses a policy
// flag its policy does not read).
func checkSLOTTFT(fs *pflag.FlagSet, metric string, slo float64) error {
	switch {
	case math.IsNaN(slo) || math.IsInf(slo, 0) || slo < 0:
		return fmt.Errorf("--slo-ttft %g must be a finite number of milliseconds ≥ 0", slo)
	case fs.Changed("slo-ttft") && metric != "goodput":
		return fmt.Errorf("--slo-ttft has no effect with --metric %s (it is goodput's SLO)", metric)
	}
	return nil
}

// checkSweepRuns bounds a sweep's simulations (maxSweepRuns) before its
// grid is listed; the product is taken in floating point, so it cannot
// wrap.
func checkSweepRuns(axes []int, draws int) error {
	runs := float64(1 + draws)
	for _, n := range axes {
		runs *= float64(max(n, 1))
	}
	if runs > maxSweepRuns {
		return fmt.Errorf("--n × --policy × --seeds × --rate-scale (× --rate or --concurrency values, × 1 + --uncertainty) = %.4g runs: more than %d; sweep fewer values at a time", runs, maxSweepRuns)
	}
	return nil
}

// policiesFlagErrors reports the policy and router flags the user set
// (changed) that none of the named policies reads (run: one policy; sweep
// and plan: the list compared).
func policiesFlagErrors(changed func(flag string) bool, s *scenario.Spec, names []string) []error {
	if len(names) == 0 {
		return nil // reported elsewhere
	}
	var reads []string
	for _, name := range names {
		e, err := policy.Lookup(name)
		if err != nil {
			return nil // reported elsewhere
		}
		r := e.Reads()
		p := s.Policies
		p.DynamoVersion = s.DynamoVersion
		if !e.Needs(p).EngineMetrics {
			// The published-usage lag matters only to policies that read
			// the engine's published metrics with these parameters.
			r = slices.DeleteFunc(r, func(f string) bool { return f == "metrics-lag" })
		}
		reads = append(reads, r...)
	}
	var errs []error
	check := func(flag string) {
		if changed(flag) && !slices.Contains(reads, flag) {
			if len(names) == 1 {
				errs = append(errs, fmt.Errorf("--%s has no effect with --policy %s", flag, names[0]))
			} else {
				errs = append(errs, fmt.Errorf("--%s has no effect with --policy %s: none of them reads it", flag, strings.Join(names, ",")))
			}
		}
	}
	for _, d := range policy.ParamList {
		check(d.Flag)
	}
	for _, flag := range policy.RouterFlags {
		check(flag)
	}
	return errs
}

// checkTrafficScale validates one plan --traffic-scale value against the
// base run it multiplies, before any scaled setting exists: an error names
// --traffic-scale, the flag the user typed, not the rate scale or user
// count it would produce.
func checkTrafficScale(base scenario.Spec, x float64) error {
	if !(x > 0) || math.IsInf(x, 0) {
		return fmt.Errorf("--traffic-scale %g must be a finite number > 0", x)
	}
	if base.Workload == "sessions" {
		if users := float64(base.Sessions.Concurrency) * x; users > session.MaxConcurrency {
			return fmt.Errorf("--traffic-scale %g makes %.4g users of --concurrency %d: more than %d", x, users, base.Sessions.Concurrency, session.MaxConcurrency)
		}
		return nil
	}
	rate := base.RateScale
	if rate == 0 {
		rate = 1
	}
	f := workload.Filter{RateScale: rate * x}
	if f.Validate() != nil {
		return fmt.Errorf("--traffic-scale %g would make the arrival rate %.4g × the workload's own: outside [1e-6, 1e6]", x, rate*x)
	}
	return nil
}

// checkPlanSearches bounds plan's searches (maxPlanSearches) before the
// --setting combinations are built; the product is taken in floating
// point, so it cannot wrap.
func checkPlanSearches(policies int, settings []planSetting, scales int) error {
	n := float64(max(policies, 1) * max(scales, 1))
	for _, s := range settings {
		n *= float64(len(s.Values))
	}
	if n > maxPlanSearches {
		return fmt.Errorf("--policy × --setting values × --traffic-scale = %.4g searches: more than %d; plan fewer combinations at a time", n, maxPlanSearches)
	}
	return nil
}
