package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseRange parses a list of integers in [1, max]: "2..16", "2..16:2"
// (step) or "2,4,8" (and mixtures such as "1,2..8:2"). The bound is checked
// before a range is expanded, so an absurd one is refused at once instead
// of filling memory.
func ParseRange(s string, max int) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty range")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, step := 0, 0, 1
		var err error
		if a, b, ok := strings.Cut(part, ".."); ok {
			if b, st, ok := strings.Cut(b, ":"); ok {
				if step, err = strconv.Atoi(st); err != nil || step < 1 {
					return nil, fmt.Errorf("%q: step %q must be a positive integer", part, st)
				}
				part = a + ".." + b
			}
			a, b, _ = strings.Cut(part, "..")
			if lo, err = strconv.Atoi(a); err != nil {
				return nil, fmt.Errorf("%q: %q is not an integer", part, a)
			}
			if hi, err = strconv.Atoi(b); err != nil {
				return nil, fmt.Errorf("%q: %q is not an integer", part, b)
			}
			if hi < lo {
				return nil, fmt.Errorf("%q: the range runs backwards (%d > %d)", part, lo, hi)
			}
		} else {
			if lo, err = strconv.Atoi(part); err != nil {
				return nil, fmt.Errorf("%q is not an integer", part)
			}
			hi = lo
		}
		if lo < 1 || hi > max {
			return nil, fmt.Errorf("%q: values must be in [1, %d]", part, max)
		}
		for v := lo; ; v += step {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
			if v > hi-step { // the next value would pass hi (or overflow)
				break
			}
		}
	}
	for i := 1; i < len(out); i++ {
		if out[i] <= out[i-1] {
			return nil, fmt.Errorf("%q: values must increase", s)
		}
	}
	return out, nil
}

// Grid is a sweep's parameter space.
type Grid struct {
	Ns         []int     `json:"n"`
	Policies   []string  `json:"policies"`
	Seeds      int       `json:"seeds"` // seeds base, base+1, …, base+Seeds-1
	BaseSeed   uint64    `json:"base_seed"`
	RateScales []float64 `json:"rate_scales"`
	// Concurrencies, for closed-loop sessions, sweeps the number of users
	// (with a single N): the crossover and plots then run along it.
	Concurrencies []int `json:"concurrency,omitempty"`
	// Rates, for the synthetic open-loop workload, sweeps the arrival rate
	// in requests per second (with a single N): the axis of the sweep.
	Rates []int `json:"rate,omitempty"`
	// Slices makes seed k also replay its own window of the trace: the
	// --first-request windows of the seeds are spread evenly over the
	// requests left after --max-isl (--skip is then ignored).
	Slices bool `json:"slices,omitempty"`
}

// Point is one run of a sweep.
type Point struct {
	N           int     `json:"n"`
	Policy      string  `json:"policy"`
	Seed        uint64  `json:"seed"`
	RateScale   float64 `json:"rate_scale"`
	Concurrency int     `json:"concurrency,omitempty"` // closed-loop users; 0 = the base scenario's
	Rate        int     `json:"rate,omitempty"`        // synthetic arrivals per second; 0 = the base scenario's
}

// Key names a point's file.
func (p Point) Key() string {
	c := ""
	if p.Concurrency > 0 {
		c = fmt.Sprintf("c=%05d.", p.Concurrency)
	}
	if p.Rate > 0 {
		c += fmt.Sprintf("r=%05d.", p.Rate)
	}
	return fmt.Sprintf("rate=%s.%sn=%03d.policy=%s.seed=%d", strconv.FormatFloat(p.RateScale, 'g', -1, 64), c, p.N, p.Policy, p.Seed)
}

// Points lists the grid in its fixed order: rate scale, concurrency, rate,
// N, policy, seed.
func (g Grid) Points() []Point {
	orZero := func(xs []int) []int {
		if len(xs) == 0 {
			return []int{0}
		}
		return xs
	}
	var out []Point
	for _, r := range g.RateScales {
		for _, c := range orZero(g.Concurrencies) {
			for _, rate := range orZero(g.Rates) {
				for _, n := range g.Ns {
					for _, p := range g.Policies {
						for s := 0; s < g.Seeds; s++ {
							out = append(out, Point{N: n, Policy: p, Seed: g.BaseSeed + uint64(s), RateScale: r, Concurrency: c, Rate: rate})
						}
					}
				}
			}
		}
	}
	return out
}

// Axis is the swept dimension crossovers and plots run along: the number
// of users or the arrival rate when one of those is swept, else N.
func (g Grid) Axis() (name string, values []int) {
	switch {
	case len(g.Concurrencies) > 1:
		return "concurrency", g.Concurrencies
	case len(g.Rates) > 1:
		return "rate", g.Rates
	}
	return "N", g.Ns
}

// AxisValue is a point's coordinate on the grid's axis.
func (g Grid) AxisValue(p Point) int {
	switch {
	case len(g.Concurrencies) > 1:
		return p.Concurrency
	case len(g.Rates) > 1:
		return p.Rate
	}
	return p.N
}

// Shard selects every k-th point starting at i (0-based): a deterministic
// 1/k of the grid for one machine.
type Shard struct{ I, K int }

// ParseShard parses "i/k" with 0 ≤ i < k.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	k, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || k < 1 || i < 0 || i >= k {
		return Shard{}, fmt.Errorf("--shard %q: want i/k with 0 ≤ i < k", s)
	}
	return Shard{i, k}, nil
}

// Has reports whether point number idx (in grid order) is in the shard.
func (s Shard) Has(idx int) bool { return s.K <= 1 || idx%s.K == s.I }
