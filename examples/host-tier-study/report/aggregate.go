package main

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// row is one arm × policy × concurrency: means over its seeds, and the
// seeds' range of TTFT p50.
type row struct {
	Arm, Policy  string
	Concurrency  int
	Seeds        int
	TTFTP50      float64 // ms, over completed requests
	TTFTP50Lo    float64
	TTFTP50Hi    float64
	TTFTP90      float64 // ms, over completed requests
	ReqPerS      float64
	Completeness float64
	HitRate      float64 // cached ÷ looked-up prompt tokens (GPU hits and host loads)
	HostHitRate  float64 // prompt tokens loaded from the host tier ÷ prompt tokens (kv_tiers); NaN without a tier
	Preemptions  float64
}

// aggregate folds one arm's points into rows, ordered by concurrency, then
// policy (round-robin first, the rest by name).
func aggregate(arm string, rs []*sweep.Result) []row {
	type key struct {
		pol string
		c   int
	}
	groups := map[key][]*sweep.Result{}
	var keys []key
	for _, r := range rs {
		k := key{r.Point.Policy, r.Point.Concurrency}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].c != keys[j].c {
			return keys[i].c < keys[j].c
		}
		return policyLess(keys[i].pol, keys[j].pol)
	})
	out := make([]row, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		r := row{Arm: arm, Policy: k.pol, Concurrency: k.c, Seeds: len(g), TTFTP50Lo: math.Inf(1), TTFTP50Hi: math.Inf(-1)}
		host := 0
		for _, p := range g {
			s := &p.Summary
			r.TTFTP50 += s.TTFTMs.Pct("p50")
			r.TTFTP50Lo = math.Min(r.TTFTP50Lo, s.TTFTMs.Pct("p50"))
			r.TTFTP50Hi = math.Max(r.TTFTP50Hi, s.TTFTMs.Pct("p50"))
			r.TTFTP90 += s.TTFTMs.Pct("p90")
			r.ReqPerS += s.RequestsPerS
			r.Completeness += s.Completeness
			r.HitRate += s.PrefixHitRate
			r.Preemptions += float64(s.Preemptions)
			if s.KVTiers != nil {
				for _, t := range s.KVTiers.Tiers {
					if t.Medium != sim.MediumDisk.String() {
						r.HostHitRate += t.HitRate
					}
				}
				host++
			}
		}
		n := float64(len(g))
		r.TTFTP50 /= n
		r.TTFTP90 /= n
		r.ReqPerS /= n
		r.Completeness /= n
		r.HitRate /= n
		r.Preemptions /= n
		r.HostHitRate /= n
		if host < len(g) {
			r.HostHitRate = math.NaN()
		}
		out = append(out, r)
	}
	return out
}

func policyLess(a, b string) bool {
	if (a == "round-robin") != (b == "round-robin") {
		return a == "round-robin"
	}
	return a < b
}

// writeTable prints the rows as a Markdown table, grouped by concurrency.
func writeTable(w io.Writer, rows []row) {
	rows = append([]row(nil), rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Concurrency < rows[j].Concurrency })
	fmt.Fprintln(w, "| users | tier | policy | TTFT p50 (ms) | p50 seeds' range | TTFT p90 (ms) | req/s | completeness | prefix hit rate | from host tier | preemptions |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		host := "–"
		if !math.IsNaN(r.HostHitRate) {
			host = pct(r.HostHitRate)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %.0f | %.0f–%.0f | %.0f | %.2f | %s | %s | %s | %.0f |\n",
			r.Concurrency, r.Arm, r.Policy, r.TTFTP50, r.TTFTP50Lo, r.TTFTP50Hi, r.TTFTP90,
			r.ReqPerS, pct(r.Completeness), pct(r.HitRate), host, r.Preemptions)
	}
}

func pct(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }
