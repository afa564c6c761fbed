package sweep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Metric is a per-point quantity that ranks policies.
type Metric struct {
	Name         string
	Label        string // axis label, with unit
	HigherBetter bool
	Value        func(*Result) float64 // +Inf where undefined and lower is better
}

// MetricNames lists the metrics crossover detection understands.
var MetricNames = []string{"ttft-p50", "ttft-p90", "ttft-p95", "ttft-offered-p50", "completeness", "goodput"}

// MetricByName returns a metric; sloMs is the TTFT SLO for goodput.
func MetricByName(name string, sloMs float64) (Metric, error) {
	switch name {
	case "ttft-p50":
		return Metric{name, "TTFT p50 over completed (ms)", false, func(r *Result) float64 { return orInf(r.Summary.TTFTMs.Pct("p50")) }}, nil
	case "ttft-p90":
		return Metric{name, "TTFT p90 over completed (ms)", false, func(r *Result) float64 { return orInf(r.Summary.TTFTMs.Pct("p90")) }}, nil
	case "ttft-p95":
		return Metric{name, "TTFT p95 over completed (ms)", false, func(r *Result) float64 { return orInf(r.Summary.TTFTMs.Pct("p95")) }}, nil
	case "ttft-offered-p50":
		return Metric{name, "TTFT p50 over offered, rejections = ∞ (ms)", false, func(r *Result) float64 {
			if p := r.Summary.TTFTOfferedMs["p50"]; p != nil {
				return *p
			}
			return math.Inf(1)
		}}, nil
	case "completeness":
		return Metric{name, "completeness (completed / offered)", true, func(r *Result) float64 { return r.Summary.Completeness }}, nil
	case "goodput":
		if sloMs <= 0 {
			return Metric{}, fmt.Errorf("--metric goodput needs --slo-ttft > 0")
		}
		return Metric{name, fmt.Sprintf("goodput: share of offered with TTFT ≤ %g ms", sloMs), true, func(r *Result) float64 {
			ok := 0
			for _, t := range r.TTFTMs {
				if t >= 0 && t <= sloMs {
					ok++
				}
			}
			if len(r.TTFTMs) == 0 {
				return 0
			}
			return float64(ok) / float64(len(r.TTFTMs))
		}}, nil
	}
	return Metric{}, fmt.Errorf("unknown metric %q (known: %v)", name, MetricNames)
}

func orInf(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// Crossover is where policy A stops beating policy B (or the reverse) as N
// grows, for one rate scale.
type Crossover struct {
	Metric    string  `json:"metric"`
	RateScale float64 `json:"rate_scale"`
	A         string  `json:"a"`
	B         string  `json:"b"`
	// BetterFirst is the policy that wins at the smallest N with a ranking.
	BetterFirst string `json:"better_first"`
	// FlipN is the smallest N at which the other policy wins (0 = none in range).
	FlipN int `json:"flip_n"`
	// CILow, CIHigh: 95 % bootstrap interval of FlipN over seeds, over the
	// replicates that flip; NoFlipShare is the share that never flip.
	CILow       int     `json:"ci_low"`
	CIHigh      int     `json:"ci_high"`
	NoFlipShare float64 `json:"no_flip_share"`
	Replicates  int     `json:"replicates"`
	// Seeds is the number of seeds per point the interval resamples; with
	// fewer than MinSeedsForCI it is not reported as an interval.
	Seeds int `json:"seeds"`
	// ModelUncertainty says the replicates also drew the profile's
	// coefficients (sweep --uncertainty), not only the seeds.
	ModelUncertainty bool `json:"model_uncertainty,omitempty"`
	// SeedsIdentical says every seed gave both policies the same value at
	// every point (a noiseless profile and policies that draw nothing):
	// resampling seeds then varies nothing, so there is no interval, and
	// CILow, CIHigh and NoFlipShare are the point estimate's, not a
	// statistic's.
	SeedsIdentical bool `json:"seeds_identical,omitempty"`
	// Axis is what varies ("N" or "concurrency"); Ns its values. Means per
	// value of A and B (same order).
	Axis  string    `json:"axis"`
	Ns    []int     `json:"n"`
	MeanA []float64 `json:"mean_a"`
	MeanB []float64 `json:"mean_b"`
	// Verdicts per value: +1 A better, −1 B better, 0 tied — equal, or a
	// paired difference over seeds within their noise (a two-sided paired
	// t-test at 5 %), or undefined for both.
	Verdicts []int `json:"verdicts"`
}

// samples[policy][n index] = per-seed values.
type samples map[string][][]float64

func collect(results []Result, g Grid, rate float64, m Metric) samples {
	_, axis := g.Axis()
	idx := map[int]int{}
	for i, n := range axis {
		idx[n] = i
	}
	s := samples{}
	for _, p := range g.Policies {
		s[p] = make([][]float64, len(axis))
	}
	for i := range results {
		r := &results[i]
		if r.Point.RateScale != rate {
			continue
		}
		if ni, ok := idx[g.AxisValue(r.Point)]; ok && s[r.Point.Policy] != nil {
			s[r.Point.Policy][ni] = append(s[r.Point.Policy][ni], m.Value(r))
		}
	}
	return s
}

// drawSamples are per-draw metric values, [policy][axis index][seed][draw],
// when every point ran the same number of coefficient draws (else nil).
type drawSamples map[string][][][]float64

func collectDraws(results []Result, g Grid, rate float64, m Metric) (drawSamples, int) {
	k := -1
	for i := range results {
		if results[i].Point.RateScale != rate {
			continue
		}
		if n := len(results[i].Draws); k < 0 {
			k = n
		} else if n != k {
			return nil, 0
		}
	}
	if k <= 0 {
		return nil, 0
	}
	_, axis := g.Axis()
	idx := map[int]int{}
	for i, n := range axis {
		idx[n] = i
	}
	d := drawSamples{}
	for _, p := range g.Policies {
		d[p] = make([][][]float64, len(axis))
	}
	for i := range results {
		r := &results[i]
		ni, ok := idx[g.AxisValue(r.Point)]
		if r.Point.RateScale != rate || !ok || d[r.Point.Policy] == nil {
			continue
		}
		vals := make([]float64, k)
		for j := range r.Draws {
			// A draw is a summary only: a metric that needs per-request
			// TTFTs (goodput) keeps the point's own value.
			dr := Result{Point: r.Point, Summary: r.Draws[j], TTFTMs: r.TTFTMs}
			vals[j] = m.Value(&dr)
		}
		d[r.Point.Policy][ni] = append(d[r.Point.Policy][ni], vals)
	}
	return d, k
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// better reports +1 if a beats b, −1 if b beats a, 0 for a tie or no data.
func better(a, b float64, higher bool) int {
	if math.IsNaN(a) || math.IsNaN(b) || a == b {
		return 0
	}
	if (a > b) == higher {
		return 1
	}
	return -1
}

// verdict ranks a against b at one point from their paired per-seed
// values (seed j is the same workload and noise for both): +1 if a is
// better, −1 if b is, 0 if tied. A mean difference within the seeds' noise
// (|d̄| ≤ t₀.₉₇₅,ₖ₋₁ · s_d/√k) is a tie; with one seed, or where a value is
// infinite, only the means decide.
func verdict(a, b []float64, higher bool) int {
	ma, mb := mean(a), mean(b)
	c := better(ma, mb, higher)
	k := min(len(a), len(b))
	if c == 0 || k < 2 {
		return c
	}
	d := make([]float64, k)
	for j := range d {
		d[j] = a[j] - b[j]
		if math.IsInf(d[j], 0) || math.IsNaN(d[j]) {
			return c
		}
	}
	md, sd := stat.MeanStdDev(d, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(0.975)
	if math.Abs(md) <= t*sd/math.Sqrt(float64(k)) {
		return 0
	}
	return c
}

// ranks compares two series point by point (no tie tolerance: a bootstrap
// replicate's ranking is what its resampled means say).
func ranks(ra, rb []float64, higher bool) []int {
	out := make([]int, len(ra))
	for i := range ra {
		out[i] = better(ra[i], rb[i], higher)
	}
	return out
}

// flip finds the first non-tie verdict and the smallest index where the
// other side wins.
func flip(v []int) (first int, at int) {
	at = -1
	for i, c := range v {
		if c == 0 {
			continue
		}
		if first == 0 {
			first = c
		} else if c != first {
			return first, i
		}
	}
	return first, -1
}

// Crossovers computes, per rate scale and policy pair, the flip point and
// its bootstrap interval (replicates resample each N's seeds, paired
// across the two policies).
func Crossovers(results []Result, g Grid, m Metric, replicates int, seed uint64) []Crossover {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	axisName, axis := g.Axis()
	var out []Crossover
	for _, rate := range g.RateScales {
		s := collect(results, g, rate, m)
		for i, a := range g.Policies {
			for _, b := range g.Policies[i+1:] {
				c := Crossover{Metric: m.Name, RateScale: rate, A: a, B: b, Axis: axisName, Ns: axis, Replicates: replicates, Seeds: g.Seeds}
				for ni := range axis {
					c.MeanA = append(c.MeanA, mean(s[a][ni]))
					c.MeanB = append(c.MeanB, mean(s[b][ni]))
					c.Verdicts = append(c.Verdicts, verdict(s[a][ni], s[b][ni], m.HigherBetter))
				}
				c.SeedsIdentical = k0(results, rate) && identical(s[a]) && identical(s[b])
				first, at := flip(c.Verdicts)
				switch first {
				case 1:
					c.BetterFirst = a
				case -1:
					c.BetterFirst = b
				}
				if at >= 0 {
					c.FlipN = axis[at]
				}
				var flips []int
				ds, k := collectDraws(results, g, rate, m)
				c.ModelUncertainty = k > 0
				for rep := 0; rep < replicates; rep++ {
					sa, sb := s[a], s[b]
					if k > 0 {
						// One coefficient draw per replicate, common to every
						// point: a draw is one hypothesis about the hardware.
						j := rng.IntN(k)
						sa, sb = ds.at(a, j), ds.at(b, j)
					}
					ra, rb := resamplePaired(sa, sb, rng)
					if _, at := flip(ranks(ra, rb, m.HigherBetter)); at >= 0 {
						flips = append(flips, axis[at])
					}
				}
				if replicates > 0 {
					c.NoFlipShare = 1 - float64(len(flips))/float64(replicates)
				}
				if len(flips) > 0 {
					sort.Ints(flips)
					c.CILow = flips[int(0.025*float64(len(flips)-1)+0.5)]
					c.CIHigh = flips[int(0.975*float64(len(flips)-1)+0.5)]
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// resamplePaired draws, per N, one bootstrap sample of seed indices and
// applies it to both policies: a seed is the same workload and noise for
// every policy (common random numbers), so the comparison is paired.
func resamplePaired(a, b [][]float64, rng *rand.Rand) (ra, rb []float64) {
	ra, rb = make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		k := min(len(a[i]), len(b[i]))
		if k == 0 {
			ra[i], rb[i] = math.NaN(), math.NaN()
			continue
		}
		sa, sb := 0.0, 0.0
		for range k {
			j := rng.IntN(k)
			sa += a[i][j]
			sb += b[i][j]
		}
		ra[i], rb[i] = sa/float64(k), sb/float64(k)
	}
	return ra, rb
}

// String renders a crossover as one line of the sweep's table: the
// stretches of the axis where each policy is better or the two are tied,
// then the flip's interval.
func (c Crossover) String() string {
	pair := fmt.Sprintf("%-40s ", fmt.Sprintf("%s vs %s", c.A, c.B))
	if c.BetterFirst == "" {
		return pair + "tied everywhere in range (within the seeds' noise, or undefined for both)"
	}
	ax := c.Axis
	if ax == "" {
		ax = "N"
	}
	runs := c.runs()
	parts := make([]string, len(runs))
	for i, r := range runs {
		who := "tied"
		switch r.v {
		case 1:
			who = c.A + " better"
		case -1:
			who = c.B + " better"
		}
		if i > 0 && r.v != 0 && r.v == -runs[0].v && who != "tied" {
			who = strings.TrimSuffix(who, " better")
		}
		switch {
		case len(runs) == 1:
			parts[i] = who + " everywhere in range"
		case i == 0:
			parts[i] = fmt.Sprintf("%s up to %s=%d", who, ax, c.Ns[r.to])
		case i == len(runs)-1:
			parts[i] = fmt.Sprintf("%s from %s=%d", who, ax, c.Ns[r.from])
		case r.from == r.to:
			parts[i] = fmt.Sprintf("%s at %s=%d", who, ax, c.Ns[r.from])
		default:
			parts[i] = fmt.Sprintf("%s at %s=%d–%d", who, ax, c.Ns[r.from], c.Ns[r.to])
		}
	}
	line := pair + strings.Join(parts, ", ")
	fewSeeds := c.Seeds < MinSeedsForCI && !c.ModelUncertainty
	switch {
	case c.SeedsIdentical && c.Seeds > 1 && c.FlipN == 0:
		return line + fmt.Sprintf(": no crossover (all %d seeds identical: no interval)", c.Seeds)
	case c.SeedsIdentical && c.Seeds > 1:
		return line + fmt.Sprintf(" (all %d seeds identical: no interval)", c.Seeds)
	case c.FlipN == 0 && fewSeeds:
		return line + fmt.Sprintf(": no crossover (too few seeds to say how sure: %d < %d)", c.Seeds, MinSeedsForCI)
	case c.FlipN == 0:
		return line + fmt.Sprintf(": no crossover (%.0f%% of bootstrap replicates never flip)", 100*c.NoFlipShare)
	case fewSeeds:
		return line + fmt.Sprintf(" (too few seeds for an interval: %d < %d)", c.Seeds, MinSeedsForCI)
	}
	return line + fmt.Sprintf(" (crossover 95%% CI %s=%d–%d; %.0f%% of replicates never flip)", ax, c.CILow, c.CIHigh, 100*c.NoFlipShare)
}

type run struct{ v, from, to int }

// runs splits the verdicts into maximal stretches of one verdict.
func (c Crossover) runs() []run {
	var out []run
	for i, v := range c.Verdicts {
		if n := len(out); n > 0 && out[n-1].v == v {
			out[n-1].to = i
			continue
		}
		out = append(out, run{v, i, i})
	}
	return out
}

// identical says every point's values over seeds are one value (NaN and
// ±Inf compare as themselves): nothing for a bootstrap to resample.
func identical(points [][]float64) bool {
	for _, vals := range points {
		for _, v := range vals[min(1, len(vals)):] {
			if !same(v, vals[0]) {
				return false
			}
		}
	}
	return true
}

func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// k0 says no point at rate ran coefficient draws (which would vary even
// where seeds do not).
func k0(results []Result, rate float64) bool {
	for i := range results {
		if results[i].Point.RateScale == rate && len(results[i].Draws) > 0 {
			return false
		}
	}
	return true
}

// SeedsIdentical says every point of the sweep at every rate gave the same
// value of m for every seed, and no point drew coefficients: statistics
// over its seeds are then not statistics (a noiseless profile and
// policies that draw nothing replay the trace identically).
func SeedsIdentical(results []Result, g Grid, m Metric) bool {
	if g.Seeds < 2 {
		return false
	}
	for _, rate := range g.RateScales {
		if !k0(results, rate) {
			return false
		}
		s := collect(results, g, rate, m)
		for _, p := range g.Policies {
			if !identical(s[p]) {
				return false
			}
		}
	}
	return true
}

// MinSeedsForCI is the fewest seeds per point for which a bootstrap
// interval over seeds is reported: resampling fewer yields an interval
// that says little.
const MinSeedsForCI = 5

// at returns policy p's values at draw j, shaped like samples ([axis][seed]).
func (d drawSamples) at(p string, j int) [][]float64 {
	out := make([][]float64, len(d[p]))
	for i, seeds := range d[p] {
		for _, vals := range seeds {
			out[i] = append(out[i], vals[j])
		}
	}
	return out
}

// PointMeans is metric m's mean over seeds at every axis value, per policy
// ([policy index in g.Policies][axis index]), for one rate scale; NaN
// where a point has no results.
func PointMeans(results []Result, g Grid, rate float64, m Metric) [][]float64 {
	s := collect(results, g, rate, m)
	out := make([][]float64, len(g.Policies))
	for i, p := range g.Policies {
		out[i] = make([]float64, len(s[p]))
		for ni, vals := range s[p] {
			out[i][ni] = mean(vals)
		}
	}
	return out
}
