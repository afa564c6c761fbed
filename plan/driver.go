package plan

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// Case is what one set of searches plans for: a combination of candidate
// settings at one traffic scale, the base run it makes, and the directory
// its runs go to (their points, as a sweep's).
type Case struct {
	// Settings are the candidate settings' values by flag name (empty:
	// the base run's own).
	Settings     map[string]string
	TrafficScale float64
	// Spec is the base run with the settings and the traffic scale
	// applied; its policy is the first planned one.
	Spec scenario.Spec
	Dir  string
	// Digest identifies what the case's points depend on (Driver.Digest).
	Digest string
}

// Driver runs a plan's searches: for every case and policy, the smallest
// cluster size in Ns that meets SLO in at least Confidence of its runs
// (Seeds seeds from BaseSeed, each with Draws coefficient draws). Each
// size a search evaluates is a one-point sweep (sweep.Runner) in the
// case's directory, so a rerun resumes and a shard's runs are reused.
type Driver struct {
	// Ns are the sizes to search (ascending), Policies the policies to
	// plan for.
	Ns       []int
	Policies []string
	// Seeds runs per size, from BaseSeed; Draws coefficient draws per
	// run (0 = none), each counting towards Confidence.
	Seeds    int
	BaseSeed uint64
	Draws    int
	// Confidence is the share of runs that must meet every objective of
	// SLO.
	Confidence float64
	SLO        SLO
	// Jobs is the runs in parallel; Shard picks the searches (case ×
	// policy, in order) this process runs.
	Jobs  int
	Shard sweep.Shard
	// Scan runs every size instead of bisecting (Scan, not Search).
	Scan bool
	// GPUHourCost, if > 0, prices an entry's runs (Entry.CostPerMillion).
	GPUHourCost float64
	// Version is the routesim version the digests name.
	Version string
	// Progress, if set, is told each size a search evaluates: the policy,
	// the case's label (SettingLabel), the size, and the runs that met
	// every objective of all runs.
	Progress func(policy, label string, n, met, runs int)
}

// MaxSteps is the most sizes one search runs.
func (d *Driver) MaxSteps() int {
	if d.Scan {
		return len(d.Ns)
	}
	return MaxSteps(len(d.Ns))
}

// Digest identifies what a case's points depend on: the base run, the
// seeds, the draws and the objectives (not the sizes or policies, which
// each point's key names).
func (d *Driver) Digest(spec scenario.Spec) (string, error) {
	var b bytes.Buffer
	err := report.WriteJSON(&b, struct {
		Tool, Version string
		Base          scenario.Spec
		Seeds, Draws  int
		BaseSeed      uint64
		SLO           SLO
	}{"routesim plan", d.Version, spec, d.Seeds, d.Draws, d.BaseSeed, d.SLO})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// Probe is the runner of case c's every policy at the largest size: what
// a plan prepares (sweep.Runner.Prepare) for every case before it writes
// anything, so a configuration that cannot run fails first.
func (d *Driver) Probe(c *Case) *sweep.Runner {
	return &sweep.Runner{Base: c.Spec, Grid: sweep.Grid{Ns: d.Ns[len(d.Ns)-1:], Policies: d.Policies, Seeds: d.Seeds,
		BaseSeed: d.BaseSeed, RateScales: []float64{c.Spec.RateScale}}, Dir: c.Dir, Jobs: d.Jobs, Uncertainty: d.Draws}
}

// runner is the one-point sweep of policy pol at size n in case c, whose
// every run is evaluated against the objectives.
func (d *Driver) runner(c *Case, n int, pol string) *sweep.Runner {
	slo := d.SLO
	return &sweep.Runner{Base: c.Spec, Grid: sweep.Grid{Ns: []int{n}, Policies: []string{pol}, Seeds: d.Seeds,
		BaseSeed: d.BaseSeed, RateScales: []float64{c.Spec.RateScale}}, Dir: c.Dir, Jobs: d.Jobs, Uncertainty: d.Draws, Digest: c.Digest,
		Evaluate: func(res *sim.Result) (json.RawMessage, error) { return json.Marshal(Evaluate(res, slo)) }}
}

// Run runs this shard's searches, every case's every policy in order, and
// returns their entries. On cancellation it stops and returns ctx's
// error; every finished run is kept in its case's directory.
func (d *Driver) Run(ctx context.Context, cases []Case) ([]Entry, error) {
	search := Search
	if d.Scan {
		search = Scan
	}
	var entries []Entry
	idx := 0
	for i := range cases {
		c := &cases[i]
		for _, pol := range d.Policies {
			mine := d.Shard.Has(idx)
			idx++
			if !mine {
				continue
			}
			statsAt := map[int][]Stats{}
			minN, steps, err := search(d.Ns, d.Confidence, func(n int) (float64, error) {
				results, err := d.runner(c, n, pol).Run(ctx)
				if err != nil {
					return 0, err
				}
				st, err := RunStats(results)
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
				if d.Progress != nil {
					d.Progress(pol, SettingLabel(c.Settings, c.TrafficScale), n, met, len(st))
				}
				return float64(met) / float64(len(st)), nil
			})
			if err != nil {
				return nil, err
			}
			entries = append(entries, d.entry(c, pol, minN, steps, statsAt[minN]))
		}
	}
	return entries, nil
}

// entry is one search's row: its answer minN (0 = none in range), the
// sizes it evaluated and the runs' figures at minN.
func (d *Driver) entry(c *Case, pol string, minN int, steps []Step, atMin []Stats) Entry {
	e := Entry{Policy: pol, Settings: c.Settings, TrafficScale: c.TrafficScale, MinN: minN, Met: minN > 0,
		Evaluated: steps, Evaluations: len(steps), MaxEvaluations: d.MaxSteps()}
	if minN == 0 {
		return e
	}
	e.GPUs = minN * c.Spec.TP
	med := MedianStats(atMin)
	e.Stats = &med
	for _, s := range steps {
		if s.N == minN {
			e.Attainment = s.Attainment
		}
	}
	if m := d.SLO.Margin(med); !math.IsInf(m, 0) {
		e.Margin = &m
	}
	if d.GPUHourCost > 0 && med.Completed > 0 {
		cost := d.GPUHourCost * float64(e.GPUs) * med.DurationS / 3600 / float64(med.Completed) * 1e6
		e.CostPerMillion = &cost
	}
	return e
}

// Output is the plan's plan.json.
func (d *Driver) Output(entries []Entry) Output {
	return Output{Tool: "routesim", Version: d.Version, SLO: d.SLO, Confidence: d.Confidence, Seeds: d.Seeds, BaseSeed: d.BaseSeed,
		Draws: d.Draws, Ns: d.Ns, Plans: entries}
}

// RunStats decodes every run's objective figures (the point's and its
// draws') from a step's results.
func RunStats(results []sweep.Result) ([]Stats, error) {
	var out []Stats
	for _, r := range results {
		for _, raw := range append([]json.RawMessage{r.Eval}, r.DrawEvals...) {
			var s Stats
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("point %s: no objective figures (%v): run with a fresh --out", r.Key, err)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// MedianStats is the per-figure median over runs (an infinite percentile
// sorts last); Met says whether most runs met every objective.
func MedianStats(st []Stats) Stats {
	med := func(get func(Stats) float64) float64 {
		xs := make([]float64, len(st))
		for i, s := range st {
			xs[i] = get(s)
		}
		sort.Float64s(xs)
		return sim.Quantile7(xs, 0.5)
	}
	ptr := func(get func(Stats) *float64) *float64 {
		v := med(func(s Stats) float64 {
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
	m := Stats{
		Offered:      int(med(func(s Stats) float64 { return float64(s.Offered) })),
		TTFTP95Ms:    ptr(func(s Stats) *float64 { return s.TTFTP95Ms }),
		ITLP95Ms:     ptr(func(s Stats) *float64 { return s.ITLP95Ms }),
		E2EP95Ms:     ptr(func(s Stats) *float64 { return s.E2EP95Ms }),
		Completeness: med(func(s Stats) float64 { return s.Completeness }),
		Goodput:      med(func(s Stats) float64 { return s.Goodput }),
		DurationS:    med(func(s Stats) float64 { return s.DurationS }),
		Completed:    int(med(func(s Stats) float64 { return float64(s.Completed) })),
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

// ScaleTraffic multiplies the offered traffic by x: the arrival rate of a
// trace or synthetic stream, the users of a sessions workload (rounded,
// at least one).
func ScaleTraffic(s scenario.Spec, x float64) scenario.Spec {
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

// SettingLabel names a case for people: " (--flag=v, …, traffic ×x)",
// the flags sorted, or "" for the base run at its own traffic.
func SettingLabel(vals map[string]string, scale float64) string {
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
