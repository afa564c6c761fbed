// Package session generates closed-loop multi-turn chat traffic: a fixed
// number of concurrent users, each holding one conversation at a time and
// sending its next turn a think time after the previous answer. Turn k's
// prompt is turn k−1's prompt, its answer and new input, hashed block by
// block so the prefix cache sees the reuse; conversations open with a
// shared system prompt and one of a pool of starters (prefix groups).
package session

import (
	"errors"
	"math"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// Config describes the population. Zero values take the defaults noted.
type Config struct {
	Concurrency   int     `json:"concurrency"`    // users (required)
	Sessions      int     `json:"sessions"`       // conversations to start in all (0 = until DurationS)
	DurationS     float64 `json:"duration_s"`     // no turn starts after this (0 = until Sessions)
	TurnsMin      int     `json:"turns_min"`      // turns per conversation, uniform in [min, max] (default 3..5)
	TurnsMax      int     `json:"turns_max"`      //
	ThinkS        float64 `json:"think_s"`        // mean think time, exponential (default 1 s)
	SystemPrompts int     `json:"system_prompts"` // pool of system prompts (default 1)
	SystemTokens  int     `json:"system_tokens"`  // tokens each (DefaultConfig: 1,000; 0 = no system prompt)
	Starters      int     `json:"starters"`       // pool of conversation starters (default 10)
	StarterTokens int     `json:"starter_tokens"` // tokens each (DefaultConfig: 3,500; 0 = open with new input)
	NewTokens     float64 `json:"new_tokens"`     // mean new input per later turn, lognormal (default 200)
	NewCV         float64 `json:"new_cv"`         // its coefficient of variation (default 0.5)
	OutputTokens  float64 `json:"output_tokens"`  // mean answer length, lognormal (default 300)
	OutputCV      float64 `json:"output_cv"`      // (default 0.5)
}

// DefaultConfig is a session workload's defaults. The prompt lengths are
// set here, not filled in later, because 0 is meaningful for them (no
// system prompt, no starter): a scenario's "system_tokens": 0 must mean
// none, not the default.
func DefaultConfig() Config { return Config{SystemTokens: 1000, StarterTokens: 3500} }

// defaults fills the fields whose zero value means "not set".
func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	deff := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.TurnsMin, 3)
	def(&c.TurnsMax, max(c.TurnsMin, 5))
	deff(&c.ThinkS, 1)
	def(&c.SystemPrompts, 1)
	def(&c.Starters, 10)
	deff(&c.NewTokens, 200)
	deff(&c.NewCV, 0.5)
	deff(&c.OutputTokens, 300)
	deff(&c.OutputCV, 0.5)
}

// MaxDurationS bounds a closed-loop run's duration: one week of simulated
// time.
const MaxDurationS = 7 * 24 * 3600

// MaxConcurrency is the most concurrent users a sessions workload may have.
const MaxConcurrency = 100_000

// MaxTurns bounds a run's requests (turns), as workload.MaxRequests bounds
// a trace's: Validate refuses more sessions × turns, and a run stopped by
// its duration that reaches it ends with an error (Population.Err).
const MaxTurns = workload.MaxRequests

// Validate fills defaults and reports every problem at once.
func (c *Config) Validate() error {
	c.defaults()
	var errs []error
	if c.Concurrency < 1 || c.Concurrency > MaxConcurrency {
		errs = append(errs, inputerr.Fieldf("sessions.concurrency", "%d must be in [1, %d]", c.Concurrency, MaxConcurrency))
	}
	if c.Sessions < 0 {
		errs = append(errs, inputerr.Fieldf("sessions.sessions", "%d must be ≥ 0", c.Sessions))
	}
	if c.DurationS < 0 || math.IsNaN(c.DurationS) {
		errs = append(errs, inputerr.Fieldf("sessions.duration_s", "%g must be ≥ 0", c.DurationS))
	}
	if c.Sessions == 0 && c.DurationS == 0 {
		errs = append(errs, inputerr.Fieldf("sessions.sessions", "or `sessions.duration_s` must be set: sessions need a stopping rule"))
	}
	if c.TurnsMin < 1 || c.TurnsMax < c.TurnsMin {
		errs = append(errs, inputerr.Fieldf("sessions.turns_min", "%d..%d: want 1 ≤ min ≤ max", c.TurnsMin, c.TurnsMax))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"sessions.think_s", c.ThinkS}, {"sessions.new_tokens", c.NewTokens}, {"sessions.new_cv", c.NewCV}, {"sessions.output_tokens", c.OutputTokens}, {"sessions.output_cv", c.OutputCV}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, inputerr.Fieldf(f.name, "%g must be a finite number ≥ 0", f.v))
		}
	}
	for _, f := range []struct {
		name   string
		v, max float64
	}{{"sessions.think_s", c.ThinkS, 24 * 3600}, {"sessions.duration_s", c.DurationS, MaxDurationS},
		{"sessions.new_tokens", c.NewTokens, workload.MaxTokens}, {"sessions.output_tokens", c.OutputTokens, workload.MaxTokens},
		{"sessions.system_tokens", float64(c.SystemTokens), workload.MaxTokens}, {"sessions.starter_tokens", float64(c.StarterTokens), workload.MaxTokens},
		{"sessions.new_cv", c.NewCV, 10}, {"sessions.output_cv", c.OutputCV, 10}, {"sessions.sessions", float64(c.Sessions), 1e7}} {
		if f.v > f.max {
			errs = append(errs, inputerr.Fieldf(f.name, "%g must be ≤ %g", f.v, f.max))
		}
	}
	if c.TurnsMax > 1000 {
		errs = append(errs, inputerr.Fieldf("sessions.turns_max", "%d must be ≤ 1000", c.TurnsMax))
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"sessions.system_prompts", c.SystemPrompts, 1}, {"sessions.starters", c.Starters, 1},
		{"sessions.system_tokens", c.SystemTokens, 0}, {"sessions.starter_tokens", c.StarterTokens, 0}} {
		if f.v < f.min {
			errs = append(errs, inputerr.Fieldf(f.name, "%d must be ≥ %d", f.v, f.min))
		}
	}
	if c.Sessions > 0 && float64(c.Sessions)*float64(c.TurnsMax) > MaxTurns {
		errs = append(errs, inputerr.Fieldf("sessions.sessions", "%d conversations of up to %d turns (`sessions.turns_max`) are up to %.4g requests: more than %d, the most a run holds",
			c.Sessions, c.TurnsMax, float64(c.Sessions)*float64(c.TurnsMax), MaxTurns))
	}
	return errors.Join(errs...)
}

// segment is a run of tokens with one identity (a system prompt, a
// starter, a turn's new input, an answer).
type segment struct {
	id     uint64
	tokens int
}

// blockHashes chains block contents over the segments: the hash of block
// k depends on every token before it, so equal hashes mean equal prefixes.
func blockHashes(segs []segment, blockSize int) []uint64 {
	total := 0
	for _, s := range segs {
		total += s.tokens
	}
	out := make([]uint64, 0, total/blockSize)
	var chain uint64
	si, off := 0, 0 // position inside segs
	for b := 0; b < total/blockSize; b++ {
		content := uint64(0x9e3779b97f4a7c15)
		for need := blockSize; need > 0; {
			s := segs[si]
			take := min(need, s.tokens-off)
			content = mix(content, s.id^uint64(off)<<40^uint64(take))
			need -= take
			off += take
			if off == s.tokens {
				si, off = si+1, 0
			}
		}
		chain = mix(chain, content)
		out = append(out, chain)
	}
	return out
}

func mix(h, v uint64) uint64 { return sim.Mix(h, v) }
