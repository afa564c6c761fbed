package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/sealed"
	"github.com/routesim/routesim/plan"
	"github.com/routesim/routesim/plots"
	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/scenario"
)

// The plan command's outputs: plan.json, plan.csv, the attainment plots
// and the printed table.

// planManifest marks a plan's directory as the plan's (dirOwner): what
// its runs depend on is in each run directory's point files.
type planManifest struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Command string `json:"command"`
}

// claimPlanDir takes out for a plan: its lock, refused if out belongs to
// another kind of command, and its manifest written before any run.
func claimPlanDir(out string) (*atomicfile.Lock, error) {
	lock, err := claimDir(out, "--out", kindPlan)
	if err != nil {
		return nil, err
	}
	err = checkWritable(out)
	if err == nil {
		err = sealed.WriteFile(filepath.Join(out, "manifest.json"), planManifest{"routesim", Version, string(kindPlan)})
	}
	if err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// writePlanOutputs writes plan.json, plan.csv and the attainment plots.
func writePlanOutputs(pf planFlags, o plan.Output, base scenario.Spec) error {
	if err := atomicfile.WriteFile(filepath.Join(pf.out, "plan.json"), func(w io.Writer) error { return report.WriteJSON(w, o) }); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(pf.out, "plan.csv"), func(w io.Writer) error { return plan.WriteCSV(w, o) }); err != nil {
		return err
	}
	meta := plots.Meta{Trace: base.Trace, GPU: base.GPU, Model: base.Model, ProfileKind: "routesim"}
	if prof, err := base.LoadProfile(); err == nil {
		meta.GPU, meta.Model, meta.ProfileKind = prof.GPU, prof.Model, prof.Kind
	}
	meta.Model += engineTag(&base)
	switch base.Workload {
	case "sessions":
		meta.Trace = "closed-loop sessions"
	case "synthetic":
		meta.Trace = "synthetic open loop"
	}
	var figs []plots.Figure
	groups := map[string][]plan.Entry{}
	var order []string
	for _, e := range o.Plans {
		k := plan.SettingLabel(e.Settings, e.TrafficScale)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	for i, k := range order {
		var curves []plots.PlanCurve
		for _, e := range groups[k] {
			curves = append(curves, plots.PlanCurve{Policy: e.Policy, Steps: e.Evaluated, MinN: e.MinN})
		}
		what := o.SLO.String()
		if k != "" {
			what += k
		}
		p, err := plots.SLOAttainment(curves, o.Confidence, what, meta)
		if err != nil {
			return err
		}
		name := "slo-attainment"
		if len(order) > 1 {
			name += fmt.Sprintf("-%d", i)
		}
		figs = append(figs, plots.Figure{Name: name, Plot: p})
	}
	return plots.Save(filepath.Join(pf.out, "plots"), figs)
}

func percent(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := 100 * *v
	return &p
}

func fmtPtr(v *float64, f string) string {
	if v == nil {
		return "∞"
	}
	return fmt.Sprintf(f, *v)
}

// printPlanDryRun lists the searches a plan would run and the most runs
// each can take.
func printPlanDryRun(w io.Writer, pf planFlags, labels []string) error {
	steps := pf.maxSteps()
	runs := pf.seeds * (1 + pf.draws)
	var b strings.Builder
	fmt.Fprintf(&b, "routesim plan --dry-run: every configuration builds; N in %d..%d, %s\n", pf.ns[0], pf.ns[len(pf.ns)-1], pf.slo)
	idx, mine := 0, 0
	for _, l := range labels {
		for _, pol := range pf.policies {
			if pf.shard.Has(idx) {
				fmt.Fprintf(&b, "  search %s%s: at most %d sizes × %d runs\n", pol, l, steps, runs)
				mine++
			}
			idx++
		}
	}
	fmt.Fprintf(&b, "%d searches (shard %d/%d), at most %d runs; nothing written\n", mine, pf.shard.I, max(pf.shard.K, 1), mine*steps*runs)
	_, err := io.WriteString(w, b.String())
	return err
}

func printPlan(w io.Writer, pf planFlags, o plan.Output, trust string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "routesim plan: smallest N in %d..%d meeting %s in ≥ %.0f %% of %d runs per size (%d seeds",
		pf.ns[0], pf.ns[len(pf.ns)-1], o.SLO, 100*o.Confidence, o.Seeds*(1+o.Draws), o.Seeds)
	if o.Draws > 0 {
		fmt.Fprintf(&b, " × (the fitted profile + %d coefficient draws)", o.Draws)
	}
	b.WriteString(")\n")
	if trust != "" {
		b.WriteString(trust + "\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  %-22s %-28s %5s %5s %10s %10s %10s %9s %8s %8s %s\n", "policy", "setting", "min N", "GPUs", "TTFT p95", "ITL p95", "E2E p95", "complete", "goodput", "margin", "sizes run")
	for _, e := range o.Plans {
		setting := strings.TrimSuffix(strings.TrimPrefix(plan.SettingLabel(e.Settings, e.TrafficScale), " ("), ")")
		if setting == "" {
			setting = "—"
		}
		if !e.Met {
			why := fmt.Sprintf("the largest N (%d) misses; the search assumes more workers never do worse: try --scan", pf.ns[len(pf.ns)-1])
			if pf.scan {
				why = "no size in range meets the objectives"
			}
			fmt.Fprintf(&b, "  %-22s %-28s %5s   %s  %d of ≤ %d\n", e.Policy, setting, "none", why, e.Evaluations, e.MaxEvaluations)
			continue
		}
		s := e.Stats
		fmt.Fprintf(&b, "  %-22s %-28s %5d %5d %10s %10s %10s %8.1f%% %7.1f%% %8s %d of ≤ %d\n", e.Policy, setting, e.MinN, e.GPUs,
			fmtPtr(s.TTFTP95Ms, "%.0f ms"), fmtPtr(s.ITLP95Ms, "%.1f ms"), fmtPtr(s.E2EP95Ms, "%.0f ms"), 100*s.Completeness, 100*s.Goodput,
			fmtPtr(percent(e.Margin), "%+.0f%%"), e.Evaluations, e.MaxEvaluations)
		for _, st := range e.Evaluated {
			if st.N > e.MinN && !st.Met {
				fmt.Fprintf(&b, "  %-22s %-28s       misses again at N = %d: more workers do worse here\n", "", "", st.N)
				break
			}
		}
	}
	for _, e := range o.Plans {
		if e.CostPerMillion != nil {
			fmt.Fprintf(&b, "  cost at %s%s: %.2f per million requests (%d GPUs × %g per GPU-hour)\n", e.Policy, plan.SettingLabel(e.Settings, e.TrafficScale), *e.CostPerMillion, e.GPUs, pf.gpuHour)
		}
	}
	b.WriteString("\n(figures: medians over the runs at the plan's N; ∞ = fewer than 95 % of offered requests completed; margin: the tightest objective's slack)\n")
	fmt.Fprintf(&b, "wrote %s/{plan.json,plan.csv,plots/}\n", pf.out)
	_, err := io.WriteString(w, b.String())
	return err
}
