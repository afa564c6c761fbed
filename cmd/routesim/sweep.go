package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/internal/progress"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
	"github.com/routesim/routesim/workload/session"
)

// sweepDefaults is the study's question: the arXiv-trace window on the
// calibrated A100 + Qwen3-8B profile. The window's own settings
// (windowDefaults) apply only to that trace.
func sweepDefaults() scenario.Spec {
	s := scenario.Defaults()
	s.Trace = "arxiv-window"
	return s
}

// windowDefaults are the settings that match the embedded arXiv-trace
// window to the 8×A100 runs: input ≤ 16,384 tokens, skip 60, the next 1,000
// requests at ×0.7365 their rate, max-model-len 16,384. A sweep of that
// trace (from flags, not a scenario file) takes each one the user did not
// set; any other workload or trace takes none of them.
// Each carries its value as the flag would spell it (for the explorer's
// run command lines; TestWindowDefaultsSpellTheirValues holds the two
// together).
var windowDefaults = []struct {
	flag, value string
	set         func(s *scenario.Spec)
}{
	{"max-isl", "16384", func(s *scenario.Spec) { s.MaxISL = 16384 }},
	{"skip", "60", func(s *scenario.Spec) { s.Skip = 60 }},
	{"first", "1000", func(s *scenario.Spec) { s.First = 1000 }},
	{"rate-scale", "0.7365", func(s *scenario.Spec) { s.RateScale = windowRateScale }},
	{"max-model-len", "16384", func(s *scenario.Spec) { s.MaxModelLen = 16384 }},
}

const windowRateScale = 0.7365

// applyWindowDefaults fills the window settings the user left unset, when
// the sweep replays the default window.
func applyWindowDefaults(fs *pflag.FlagSet, s *scenario.Spec, rates *[]float64) {
	if s.Description != "" || (s.Workload != "trace" && s.Workload != "") || s.Trace != "arxiv-window" {
		return
	}
	for _, d := range windowDefaults {
		if !fs.Changed(d.flag) {
			d.set(s)
		}
	}
	if !fs.Changed("rate-scale") {
		*rates = []float64{windowRateScale}
	}
}

func sweepCmd(args []string, stdout, stderr io.Writer) error {
	return sweepWithContext(context.Background(), args, stdout, stderr)
}

func sweepWithContext(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := pflag.NewFlagSet("routesim sweep", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	base, src, err := scenarioBase(args, sweepDefaults())
	if err != nil {
		return err
	}
	// The grid's axes take their values from the sweep's own flags.
	defer func() { err = located(err, fs, src, "n", "policy", "seed") }()
	addRunFlags(fs, &base, "n", "policy", "rate-scale", "seed", "concurrency", "rate")
	fs.String("scenario", "", "scenario file (JSON with the base run's settings; flags override it)")
	nDefault := "2..16"
	if base.Description != "" { // a scenario file: its N unless --n says otherwise
		nDefault = fmt.Sprint(base.N)
	}
	nFlag := fs.String("n", nDefault, "cluster sizes: 2..16, 2..16:2 or 2,4,8")
	rateFlag := fs.String("rate", "", "with --workload synthetic: arrivals per second, one value or a range (2..10:2) to sweep load at a single --n")
	concFlag := fs.String("concurrency", "", "with --workload sessions: users, one value or a range (20..180:20) to sweep load at a single --n")
	pols := fs.StringSlice("policy", []string{"round-robin", "kv"}, "policies to compare ("+joinNames(policy.Names())+")")
	seeds := fs.Int("seeds", 5, "seeds per point (they vary service noise and router tie-breaks)")
	baseSeed := fs.Uint64("seed", 0, "first seed")
	rates := fs.Float64Slice("rate-scale", []float64{base.RateScale}, "arrival-rate multipliers `x[,x…]` (a list sweeps them too)")
	fs.Lookup("rate-scale").DefValue = "1; 0.7365 for the arxiv-window trace"
	jobs := fs.Int("jobs", runtime.NumCPU(), "points run in parallel")
	out := fs.String("out", "routesim-out", "output directory (re-running resumes: finished points are kept)")
	metric := fs.String("metric", "ttft-p50", "crossover metric: "+strings.Join(sweep.MetricNames, ", "))
	slo := fs.Float64("slo-ttft", 0, "TTFT SLO in ms for --metric goodput")
	boot := fs.Int("bootstrap", 1000, "bootstrap replicates for the crossover confidence interval")
	perReq := fs.Bool("per-request", false, "also write requests.parquet (every request of every point)")
	draws := fs.Int("uncertainty", 0, "per point, also run K coefficient sets drawn from the profile's posterior (the point's seed): summaries carry 10–90 % bands, plots shade them, crossover intervals include them (0 = off)")
	shardFlag := fs.String("shard", "0/1", "run only shard i of k (0-based), e.g. 2/3; join shards with routesim merge")
	quiet := fs.Bool("quiet", false, "no progress output")
	dry := fs.Bool("dry-run", false, "check every flag and build every configuration, list this shard's points, write nothing")
	force := fs.Bool("force", false, "--out holds a different sweep: discard its points and manifest and start this one")
	recompute := fs.Bool("recompute-bad", false, "rerun point files that do not belong to this sweep (wrong point or sweep, unreadable) instead of failing")
	sliceSeeds := fs.Bool("slices", false, "seed k also replays its own --first window of the trace, spread evenly over it (--skip is ignored)")
	showAliases(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim sweep [flags]\n\nRun a grid of N × policy × seed (× rate scale) in parallel, detect crossovers, write tables and plots.\n%s", groupedUsage(fs, "Sweep flags", simHelpGroups))
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("sweep: unexpected arguments %q", fs.Args())}
	}
	if err := applyClientFlags(fs, &base); err != nil {
		return err
	}
	applyWindowDefaults(fs, &base, rates)
	applyEngineDefaults(fs, src, &base)
	var errs []error
	// A load axis (--concurrency or --rate over a range) sweeps load at
	// one cluster size: without --n, that is the base's N, not 2..16.
	if !fs.Changed("n") && (strings.Contains(*concFlag, "..") || strings.Contains(*concFlag, ",") ||
		strings.Contains(*rateFlag, "..") || strings.Contains(*rateFlag, ",")) {
		*nFlag = fmt.Sprint(base.N)
	}
	ns, err := sweep.ParseRange(*nFlag, sim.MaxWorkers)
	if err != nil {
		errs = append(errs, fmt.Errorf("--n: %w", err))
	}
	validPolicy, perrs := checkPolicyList(*pols)
	errs = append(errs, perrs...)
	if err := checkSeeds(*seeds, *baseSeed); err != nil {
		errs = append(errs, err)
	}
	var concs []int
	if *concFlag != "" {
		if concs, err = sweep.ParseRange(*concFlag, session.MaxConcurrency); err != nil {
			errs = append(errs, fmt.Errorf("--concurrency: %w", err))
		} else {
			base.Sessions.Concurrency = concs[0]
		}
		if base.Workload != "sessions" {
			errs = append(errs, fmt.Errorf("--concurrency needs --workload sessions"))
		}
		if len(concs) > 1 && len(ns) > 1 {
			errs = append(errs, fmt.Errorf("sweep either --n or --concurrency, not both (got %d and %d values)", len(ns), len(concs)))
		}
	}
	if err := checkJobs(*jobs); err != nil {
		errs = append(errs, err)
	}
	if err := checkBootstrap(*boot); err != nil {
		errs = append(errs, err)
	}
	if err := checkSLOTTFT(fs, *metric, *slo); err != nil {
		errs = append(errs, err)
	}
	if len(*pols) == 0 {
		errs = append(errs, errors.New("--policy: give at least one policy"))
	}
	for i, r := range *rates {
		if !(r > 0) {
			errs = append(errs, fmt.Errorf("--rate-scale %g must be > 0", r))
		}
		if slices.Contains((*rates)[:i], r) {
			errs = append(errs, fmt.Errorf("--rate-scale %g is listed twice", r))
		}
	}
	if _, err := sweep.MetricByName(*metric, *slo); err != nil {
		errs = append(errs, fmt.Errorf("--metric: %w", err))
	}
	var arrivals []int
	if *rateFlag != "" {
		if arrivals, err = sweep.ParseRange(*rateFlag, maxSweepRate); err != nil {
			errs = append(errs, fmt.Errorf("--rate: %w", err))
		} else {
			base.Synthetic.RatePerS = float64(arrivals[0])
		}
		if base.Workload != "synthetic" {
			errs = append(errs, fmt.Errorf("--rate needs --workload synthetic (for traces use --rate-scale)"))
		}
		if len(arrivals) > 1 && (len(ns) > 1 || len(concs) > 1) {
			errs = append(errs, fmt.Errorf("sweep one of --n, --concurrency or --rate at a time"))
		}
	}
	shard, err := sweep.ParseShard(*shardFlag)
	if err != nil {
		errs = append(errs, err)
	}
	base.Policy = validPolicy // (an unknown one is reported above, once)
	if base.Policy == "" {
		base.Policy = "round-robin"
	}
	// --concurrency and --rate are the sweep's own load axes, checked above.
	errs = append(errs, workloadFlagErrors(fs, base.Workload, "concurrency", "rate")...)
	errs = append(errs, engineFlagErrors(fs, &base)...)
	errs = append(errs, policiesFlagErrors(fs.Changed, &base, *pols)...)
	if err := checkSweepRuns([]int{len(ns), len(*pols), *seeds, len(*rates), len(concs), len(arrivals)}, *draws); err != nil && checkSeeds(*seeds, 0) == nil {
		errs = append(errs, err)
	}
	var prof *model.Profile
	if err := base.Validate(); err != nil {
		errs = append(errs, err)
	} else {
		var perrs []error
		prof, perrs = loadProfile(fs, &base)
		errs = append(errs, perrs...)
	}
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	if err := checkDraws(*draws); err != nil {
		return err
	}
	if *draws > 0 {
		b, err := base.Build(prof)
		if err != nil {
			return usageError{err}
		}
		if _, err := b.Posterior(); err != nil {
			return usageError{fmt.Errorf("--uncertainty: %w", err)}
		}
	}
	grid := sweep.Grid{Ns: ns, Policies: *pols, Seeds: *seeds, BaseSeed: *baseSeed, RateScales: *rates, Slices: *sliceSeeds}
	if len(arrivals) > 1 {
		grid.Rates = arrivals
	}
	if len(concs) > 1 {
		grid.Concurrencies = concs
	}
	if *sliceSeeds {
		if _, err := sweep.SliceSkips(base, *seeds); err != nil {
			return usageError{err}
		}
	}
	m := &sweep.Manifest{Tool: "routesim", Version: Version, Command: "sweep", Base: base, Grid: grid, Metric: *metric,
		SLOTTFTMs: *slo, Bootstrap: *boot, PerRequest: *perReq, Uncertainty: *draws, Profile: prof.Name,
		Meta: sweep.Meta{Trace: base.Trace, GPU: prof.GPU, Model: prof.Model + engineTag(&base), ProfileKind: prof.Kind}}
	switch base.Workload {
	case "sessions":
		m.Meta.Trace = "closed-loop sessions"
	case "synthetic":
		m.Meta.Trace = "synthetic open loop (" + base.Synthetic.Arrival + ")"
	}
	prog, line := sweepProgress(stderr, *quiet)
	defer line.Done()
	r := &sweep.Runner{Base: base, Grid: grid, Dir: *out, Jobs: *jobs, Shard: shard, PerRequest: *perReq, Uncertainty: *draws,
		Progress: prog, Digest: m.Digest(), RecomputeBad: *recompute}
	// Everything that can be checked is checked before anything is
	// written: the grid's every configuration is built first.
	if err := r.Prepare(); err != nil {
		return usageError{err}
	}
	if *dry {
		return printDryRun(stdout, grid, shard, *out)
	}
	lock, err := claimSweepDir(*out, m, shard, *force)
	if err != nil {
		return err
	}
	defer lock.Release()
	r.Notice = func(s string) { line.Done(); fmt.Fprintln(stderr, "sweep:", s) }
	r.BadPointHint = "rerun with --recompute-bad to recompute such points"
	results, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if shard.K > 1 {
		fmt.Fprintf(stdout, "shard %d/%d: %d points in %s/points; join the shards with routesim merge OUT DIR...\n", shard.I, shard.K, len(results), *out)
		return nil
	}
	cross, comp, err := writeSweepOutputs(*out, m, results)
	if err != nil {
		return err
	}
	return printCrossovers(stdout, m, results, cross, comp, *out)
}

// checkPolicyList reports unknown and repeated --policy names (a repeat
// of an unknown one only once) and returns the first valid name.
func checkPolicyList(pols []string) (first string, errs []error) {
	for i, p := range pols {
		_, err := policy.Lookup(p)
		switch {
		case slices.Contains(pols[:i], p):
			if err == nil {
				errs = append(errs, fmt.Errorf("--policy %s is listed twice: a policy compared with itself", p))
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("--policy: %w", err))
		case first == "":
			first = p
		}
	}
	return first, errs
}

// maxSeeds bounds --seeds.
const maxSeeds = 10_000

// maxSweepRate bounds a --rate range (requests per second): a million
// points would be a million runs, and a range past it is a typo.
const maxSweepRate = 1_000_000

// checkSeeds checks --seeds and that --seed leaves room for them.
func checkSeeds(seeds int, base uint64) error {
	if seeds < 1 || seeds > maxSeeds {
		return fmt.Errorf("--seeds %d must be in [1, %d]", seeds, maxSeeds)
	}
	if base > math.MaxUint64-uint64(seeds-1) {
		return fmt.Errorf("--seed %d with --seeds %d runs past the largest seed, 2^64−1", base, seeds)
	}
	return nil
}

// orNone is s, or "unset" if empty.
func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".writable*")
	if err != nil {
		return fmt.Errorf("--out %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// sweepProgress reports points done: on a terminal a progress line (a
// bar, the points done, the ETA) erased when the sweep ends, otherwise a
// log line at most every two seconds and at the end; nothing with --quiet.
// The line (nil off a terminal) is returned for erasing.
func sweepProgress(w io.Writer, quiet bool) (func(done, total int, p sweep.Point), *progress.Line) {
	if quiet {
		return nil, nil
	}
	start, last := time.Now(), time.Time{}
	line := progress.New(w)
	return func(done, total int, p sweep.Point) {
		el := time.Since(start)
		eta := time.Duration(float64(el) / float64(done) * float64(total-done)).Round(time.Second)
		if line != nil {
			if done == total {
				line.Done()
				return
			}
			bar := strings.Repeat("█", 30*done/total) + strings.Repeat("·", 30-30*done/total)
			line.Show("%s %d/%d points, ETA %s", bar, done, total, eta)
			return
		}
		if done < total && time.Since(last) < 2*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "point %d/%d done: %s (ETA %s)\n", done, total, p.Key(), eta)
	}, line
}
