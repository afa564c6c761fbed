package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/routesim/routesim/internal/inputerr"
)

// Synthetic describes an open-loop request stream: Poisson or gamma
// arrivals at RatePerS, lognormal input and output lengths, and requests
// opening with one of PrefixGroups shared prefixes of PrefixTokens tokens.
type Synthetic struct {
	Requests     int     `json:"requests"`      // how many (required)
	RatePerS     float64 `json:"rate"`          // mean arrivals per second (required)
	Arrival      string  `json:"arrival"`       // poisson (default) or gamma
	ArrivalCV    float64 `json:"arrival_cv"`    // gamma: CV of inter-arrival times (default 2, bursty)
	ISLMean      float64 `json:"isl_mean"`      // default 2,000
	ISLCV        float64 `json:"isl_cv"`        // default 0.5
	OSLMean      float64 `json:"osl_mean"`      // default 200
	OSLCV        float64 `json:"osl_cv"`        // default 0.5
	PrefixGroups int     `json:"prefix_groups"` // shared-prefix groups (0 = none)
	PrefixTokens int     `json:"prefix_tokens"` // tokens of each shared prefix
}

// Input bounds shared by the generated workloads. HorizonS is the
// engine's horizon (sim.Horizon) in seconds.
const (
	MaxTokens       = 1e6  // longest prompt, answer or shared prefix (mean)
	MaxPromptVolume = 1e10 // total prompt tokens of one generated stream
	HorizonS        = 365 * 24 * 3600
)

// Validate fills defaults and reports every problem at once.
func (s *Synthetic) Validate() error {
	if s.Arrival == "" {
		s.Arrival = "poisson"
	}
	for _, d := range []struct {
		v   *float64
		def float64
	}{{&s.ArrivalCV, 2}, {&s.ISLMean, 2000}, {&s.ISLCV, 0.5}, {&s.OSLMean, 200}, {&s.OSLCV, 0.5}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	var errs []error
	if s.Requests < 1 || s.Requests > 10_000_000 {
		errs = append(errs, inputerr.Fieldf("synthetic.requests", "%d must be in [1, 10000000]", s.Requests))
	}
	if !(s.RatePerS > 0) || math.IsInf(s.RatePerS, 0) {
		errs = append(errs, inputerr.Fieldf("synthetic.rate", "%g must be > 0", s.RatePerS))
	}
	if s.Arrival != "poisson" && s.Arrival != "gamma" {
		errs = append(errs, inputerr.Fieldf("synthetic.arrival", "%q: want poisson or gamma", s.Arrival))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"synthetic.arrival_cv", s.ArrivalCV}, {"synthetic.isl_mean", s.ISLMean}, {"synthetic.isl_cv", s.ISLCV}, {"synthetic.osl_mean", s.OSLMean}, {"synthetic.osl_cv", s.OSLCV}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, inputerr.Fieldf(f.name, "%g must be a finite number ≥ 0", f.v))
		}
	}
	// Bounds that keep a run finite: lengths beyond any model's context,
	// a stream longer than the engine's horizon, or a total prompt volume
	// whose block hashes would not fit in memory are refused.
	for _, f := range []struct {
		name string
		v    float64
		hi   float64
	}{{"synthetic.isl_mean", s.ISLMean, MaxTokens}, {"synthetic.osl_mean", s.OSLMean, MaxTokens},
		{"synthetic.prefix_tokens", float64(s.PrefixTokens), MaxTokens},
		{"synthetic.isl_cv", s.ISLCV, 10}, {"synthetic.osl_cv", s.OSLCV, 10}} {
		if f.v > f.hi {
			errs = append(errs, inputerr.Fieldf(f.name, "%g must be ≤ %g", f.v, f.hi))
		}
	}
	if s.Arrival == "gamma" && !(s.ArrivalCV >= 0.01 && s.ArrivalCV <= 100) {
		errs = append(errs, inputerr.Fieldf("synthetic.arrival_cv", "%g must be in [0.01, 100] for gamma arrivals", s.ArrivalCV))
	}
	if s.RatePerS > 0 && s.Requests > 0 && float64(s.Requests)/s.RatePerS > HorizonS {
		errs = append(errs, inputerr.Fieldf("synthetic.rate", "%g: %d requests would take %.3g s, past the %g s horizon", s.RatePerS, s.Requests, float64(s.Requests)/s.RatePerS, float64(HorizonS)))
	}
	if vol := float64(s.Requests) * (s.ISLMean + float64(s.PrefixTokens)); vol > MaxPromptVolume {
		errs = append(errs, inputerr.Fieldf("synthetic.requests", "%d × %g prompt tokens = %.3g tokens: more than %g would not fit in memory", s.Requests, s.ISLMean+float64(s.PrefixTokens), vol, MaxPromptVolume))
	}
	switch {
	case s.PrefixGroups < 0:
		errs = append(errs, inputerr.Fieldf("synthetic.prefix_groups", "%d must be ≥ 0", s.PrefixGroups))
	case s.PrefixTokens < 0:
		errs = append(errs, inputerr.Fieldf("synthetic.prefix_tokens", "%d must be ≥ 0", s.PrefixTokens))
	case (s.PrefixGroups > 0) != (s.PrefixTokens > 0):
		errs = append(errs, inputerr.Fieldf("synthetic.prefix_groups", "%d and `synthetic.prefix_tokens` %d: set both or neither", s.PrefixGroups, s.PrefixTokens))
	}
	return errors.Join(errs...)
}

// Generate draws the stream as a Mooncake-style trace (512-token hash
// ids: a shared prefix's whole blocks share ids across its group; every
// other block is unique), and marks each request's shared prefix so that
// its whole worker blocks are shared too, however short. s must be valid.
func (s Synthetic) Generate(rng *rand.Rand) *Trace {
	var gap interface{ Rand() float64 }
	if s.Arrival == "gamma" {
		alpha := 1 / (s.ArrivalCV * s.ArrivalCV)
		gap = distuv.Gamma{Alpha: alpha, Beta: alpha * s.RatePerS, Src: rng}
	} else {
		gap = distuv.Exponential{Rate: s.RatePerS, Src: rng}
	}
	isl, osl := lognormal(s.ISLMean, s.ISLCV, rng), lognormal(s.OSLMean, s.OSLCV, rng)
	t := &Trace{Name: fmt.Sprintf("synthetic(%s %g req/s)", s.Arrival, s.RatePerS)}
	next := int64(1 << 40) // ids above any prefix group's
	at := 0.0
	for i := 0; i < s.Requests; i++ {
		if i > 0 {
			at += gap.Rand()
		}
		prefix, group := 0, 0
		if s.PrefixGroups > 0 {
			prefix, group = s.PrefixTokens, rng.IntN(s.PrefixGroups)
		}
		in := prefix + max(1, int(math.Round(isl.Rand())))
		var ids []int64
		for k := 0; k < (in+MooncakeBlockTokens-1)/MooncakeBlockTokens; k++ {
			if (k+1)*MooncakeBlockTokens <= prefix {
				ids = append(ids, int64(group)<<20|int64(k))
			} else {
				ids = append(ids, next)
				next++
			}
		}
		t.Requests = append(t.Requests, Request{Line: i + 1, ArrivalNs: int64(at * 1e9), InputTokens: in,
			OutputTokens: max(1, int(math.Round(osl.Rand()))), HashIDs: ids, SharedPrefix: prefix, PrefixGroup: group})
	}
	return t
}

// lognormal has the given mean and coefficient of variation.
func lognormal(mean, cv float64, rng *rand.Rand) interface{ Rand() float64 } {
	if cv == 0 {
		return distuv.Normal{Mu: mean, Sigma: 0, Src: rng}
	}
	s2 := math.Log(1 + cv*cv)
	return distuv.LogNormal{Mu: math.Log(mean) - s2/2, Sigma: math.Sqrt(s2), Src: rng}
}
