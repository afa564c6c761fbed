package plan

import (
	"fmt"
	"io"
	"strings"
)

// A plan's tables: plan.json (Output) and plan.csv (WriteCSV), one row
// per search. The attainment figures are drawn by package plots.

// Entry is one search's row of plan.json: a policy under one combination
// of settings at one traffic scale.
type Entry struct {
	Policy       string            `json:"policy"`
	Settings     map[string]string `json:"settings"`
	TrafficScale float64           `json:"traffic_scale"`
	// MinN is the smallest size that meets the objectives (0 = none in
	// range; Met says which), GPUs its GPU count, Attainment the share of
	// its runs that met them.
	MinN       int     `json:"min_n"`
	Met        bool    `json:"met"`
	GPUs       int     `json:"gpus"`
	Attainment float64 `json:"attainment"`
	// Stats are the medians over runs (seeds × draws) at MinN; nil
	// percentiles are +∞ (fewer than 95 % completed).
	Stats *Stats `json:"stats"`
	// Margin is the tightest objective's slack at MinN (SLO.Margin);
	// CostPerMillion the GPU cost of a million requests there.
	Margin         *float64 `json:"margin"`
	CostPerMillion *float64 `json:"cost_per_million_requests,omitempty"`
	// Evaluated are the sizes the search ran, in order, of at most
	// MaxEvaluations.
	Evaluated      []Step `json:"evaluated"`
	Evaluations    int    `json:"evaluations"`
	MaxEvaluations int    `json:"max_evaluations"`
}

// Output is plan.json: the plan's question and every search's entry.
type Output struct {
	Tool       string  `json:"tool"`
	Version    string  `json:"version"`
	SLO        SLO     `json:"slo"`
	Confidence float64 `json:"confidence"`
	Seeds      int     `json:"seeds"`
	BaseSeed   uint64  `json:"base_seed"`
	Draws      int     `json:"uncertainty"`
	Ns         []int   `json:"n"`
	Plans      []Entry `json:"plans"`
}

// WriteCSV writes o's entries as plan.csv: one row per search, an empty
// field for ∞ or none.
func WriteCSV(w io.Writer, o Output) error {
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return fmt.Sprint(*v)
	}
	var b strings.Builder
	b.WriteString("policy,settings,traffic_scale,min_n,met,gpus,attainment,ttft_p95_ms,itl_p95_ms,e2e_p95_ms,completeness,goodput,margin,cost_per_million_requests,evaluations,max_evaluations\n")
	for _, e := range o.Plans {
		setting := strings.TrimSuffix(strings.TrimPrefix(SettingLabel(e.Settings, 1), " ("), ")")
		fmt.Fprintf(&b, "%s,%q,%g,%d,%t,%d,%g,", e.Policy, setting, e.TrafficScale, e.MinN, e.Met, e.GPUs, e.Attainment)
		if e.Stats != nil {
			fmt.Fprintf(&b, "%s,%s,%s,%g,%g,", opt(e.Stats.TTFTP95Ms), opt(e.Stats.ITLP95Ms), opt(e.Stats.E2EP95Ms), e.Stats.Completeness, e.Stats.Goodput)
		} else {
			b.WriteString(",,,,,")
		}
		fmt.Fprintf(&b, "%s,%s,%d,%d\n", opt(e.Margin), opt(e.CostPerMillion), e.Evaluations, e.MaxEvaluations)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
