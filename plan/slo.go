package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// SLO is a set of service-level objectives over the offered requests. A
// zero field is not an objective. Latency objectives are 95th percentiles
// in milliseconds; a request that did not complete counts as +∞.
type SLO struct {
	TTFTP95Ms       float64 `json:"ttft_p95_ms,omitempty"`
	ITLP95Ms        float64 `json:"itl_p95_ms,omitempty"`
	E2EP95Ms        float64 `json:"e2e_p95_ms,omitempty"`
	MinCompleteness float64 `json:"min_completeness,omitempty"`
	// MinGoodput is the least share of offered requests that completed
	// within every latency objective given (each request's own TTFT, ITL
	// and E2E against the thresholds), as DistServe defines goodput.
	MinGoodput float64 `json:"min_goodput,omitempty"`
}

// Validate reports every problem, naming each objective by its flag.
func (s SLO) Validate() error {
	var errs []error
	for _, c := range []struct {
		flag string
		v    float64
		max  float64
	}{{"slo-ttft-p95", s.TTFTP95Ms, 0}, {"slo-itl-p95", s.ITLP95Ms, 0}, {"slo-e2e-p95", s.E2EP95Ms, 0},
		{"min-completeness", s.MinCompleteness, 1}, {"min-goodput", s.MinGoodput, 1}} {
		switch {
		case math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0:
			errs = append(errs, inputerr.Fieldf(c.flag, "%g must be a finite number ≥ 0", c.v))
		case c.max > 0 && c.v > c.max:
			errs = append(errs, inputerr.Fieldf(c.flag, "%g must be at most %g", c.v, c.max))
		}
	}
	if s == (SLO{}) {
		errs = append(errs, errors.New("no objective: give at least one of --slo-ttft-p95, --slo-itl-p95, --slo-e2e-p95, --min-completeness, --min-goodput"))
	}
	return errors.Join(errs...)
}

// String lists the objectives.
func (s SLO) String() string {
	var parts []string
	add := func(ok bool, f string, a ...any) {
		if ok {
			parts = append(parts, fmt.Sprintf(f, a...))
		}
	}
	add(s.TTFTP95Ms > 0, "TTFT p95 ≤ %g ms", s.TTFTP95Ms)
	add(s.ITLP95Ms > 0, "ITL p95 ≤ %g ms", s.ITLP95Ms)
	add(s.E2EP95Ms > 0, "E2E p95 ≤ %g ms", s.E2EP95Ms)
	add(s.MinCompleteness > 0, "completeness ≥ %g", s.MinCompleteness)
	add(s.MinGoodput > 0, "goodput ≥ %g", s.MinGoodput)
	return strings.Join(parts, ", ")
}

// Stats are one run's figures against an SLO. A percentile is nil when
// fewer than 95 % of the offered requests completed (it is +∞).
type Stats struct {
	Offered      int      `json:"offered"`
	TTFTP95Ms    *float64 `json:"ttft_p95_ms"`
	ITLP95Ms     *float64 `json:"itl_p95_ms"`
	E2EP95Ms     *float64 `json:"e2e_p95_ms"`
	Completeness float64  `json:"completeness"`
	Goodput      float64  `json:"goodput"`
	// DurationS (the counted requests' first arrival to last end) and
	// Completed price the run (cost per request).
	DurationS float64 `json:"duration_s"`
	Completed int     `json:"completed"`
	Met       bool    `json:"met"`
}

// Evaluate measures a run's records against s.
func Evaluate(res *sim.Result, s SLO) Stats {
	recs := res.Records
	st := Stats{Offered: len(recs)}
	if len(recs) == 0 {
		return st
	}
	// The window the counted requests span (after a warm-up, not the whole
	// run): their first arrival to their last end.
	first, last := recs[0].Arrival, recs[0].Arrival
	for i := range recs {
		first, last = min(first, recs[i].Arrival), max(last, recs[i].End)
	}
	st.DurationS = (last - first).Seconds()
	ttft := make([]float64, len(recs))
	itl := make([]float64, len(recs))
	e2e := make([]float64, len(recs))
	good := 0
	for i := range recs {
		r := &recs[i]
		ttft[i], itl[i], e2e[i] = math.Inf(1), math.Inf(1), math.Inf(1)
		if r.Status != sim.StatusOK {
			continue
		}
		st.Completed++
		ttft[i], e2e[i] = r.TTFT().Ms(), r.E2E().Ms()
		if v := r.ITL(); v >= 0 {
			itl[i] = v / 1e6
		} else {
			itl[i] = 0 // one output token: no inter-token gap to violate
		}
		if (s.TTFTP95Ms == 0 || ttft[i] <= s.TTFTP95Ms) && (s.ITLP95Ms == 0 || itl[i] <= s.ITLP95Ms) && (s.E2EP95Ms == 0 || e2e[i] <= s.E2EP95Ms) {
			good++
		}
	}
	n := float64(len(recs))
	st.Completeness, st.Goodput = float64(st.Completed)/n, float64(good)/n
	st.TTFTP95Ms, st.ITLP95Ms, st.E2EP95Ms = p95(ttft), p95(itl), p95(e2e)
	st.Met = within(st.TTFTP95Ms, s.TTFTP95Ms) && within(st.ITLP95Ms, s.ITLP95Ms) && within(st.E2EP95Ms, s.E2EP95Ms) &&
		st.Completeness >= s.MinCompleteness && st.Goodput >= s.MinGoodput
	return st
}

// p95 is the 95th percentile (linear interpolation, as every routesim
// summary), nil when it is infinite.
func p95(x []float64) *float64 {
	slices.Sort(x)
	v := sim.Quantile7(x, 0.95)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func within(v *float64, limit float64) bool { return limit == 0 || (v != nil && *v <= limit) }

// Margin is the smallest relative slack of the objectives given, at
// these (median) figures: 0.2 means every objective holds with 20 % to
// spare, a negative value that one is missed by that share. +Inf when no
// objective is finite.
func (s SLO) Margin(st Stats) float64 {
	m := math.Inf(1)
	lat := func(v *float64, limit float64) {
		if limit > 0 {
			if v == nil {
				m = math.Inf(-1)
				return
			}
			m = math.Min(m, (limit-*v)/limit)
		}
	}
	lat(st.TTFTP95Ms, s.TTFTP95Ms)
	lat(st.ITLP95Ms, s.ITLP95Ms)
	lat(st.E2EP95Ms, s.E2EP95Ms)
	share := func(v, floor float64) {
		if floor > 0 {
			m = math.Min(m, (v-floor)/floor)
		}
	}
	share(st.Completeness, s.MinCompleteness)
	share(st.Goodput, s.MinGoodput)
	return m
}
