package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/routesim/routesim/sweep"
)

// printCrossovers prints what sweep reports on stdout: the header, the
// crossover lines, the per-point table and where the files went.
func printCrossovers(w io.Writer, m *sweep.Manifest, results []sweep.Result, cross, comp []sweep.Crossover, dir string) error {
	axis, values := m.Grid.Axis()
	fmt.Fprintf(w, "routesim sweep: %s on %s, N %v, %d seeds, policies %s; crossover along %s %v\n", m.Meta.Model, m.Meta.GPU, m.Grid.Ns, m.Grid.Seeds, strings.Join(m.Grid.Policies, ", "), axis, values)
	if line := specTrustLine(&m.Base); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := offeredLine(m); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := seedsLine(m, results); line != "" {
		fmt.Fprintln(w, line)
	}
	table := func(title string, cs []sweep.Crossover) {
		fmt.Fprintf(w, "\ncrossover on %s:\n", title)
		for _, c := range cs {
			prefix := ""
			if len(m.Grid.RateScales) > 1 {
				prefix = fmt.Sprintf("[rate ×%g] ", c.RateScale)
			}
			fmt.Fprintf(w, "  %s%s\n", prefix, c)
		}
	}
	table(m.Metric, cross)
	if len(comp) > 0 {
		table("completeness", comp)
	}
	if err := printPointTable(w, m, results); err != nil {
		return err
	}
	files := "summary.csv,summary.parquet,crossover.json,manifest.json,plots/"
	if m.PerRequest {
		files = "summary.csv,summary.parquet,requests.parquet,crossover.json,manifest.json,plots/"
	}
	_, err := fmt.Fprintf(w, "\nwrote %s/{%s}\n", dir, files)
	return err
}

// printPointTable prints, per rate scale, each axis value × policy's
// completeness and TTFT p50 / p95 over completed requests (means over
// seeds): the numbers behind the crossover lines.
func printPointTable(w io.Writer, m *sweep.Manifest, results []sweep.Result) error {
	axis, values := m.Grid.Axis()
	var ms [3]sweep.Metric
	for i, name := range []string{"completeness", "ttft-p50", "ttft-p95"} {
		ms[i], _ = sweep.MetricByName(name, 0)
	}
	for _, rate := range m.Grid.RateScales {
		var v [3][][]float64
		for i := range ms {
			v[i] = sweep.PointMeans(results, m.Grid, rate, ms[i])
		}
		title := "per point"
		if len(m.Grid.RateScales) > 1 {
			title += fmt.Sprintf(" at rate ×%g", rate)
		}
		fmt.Fprintf(w, "\n%s, mean of %d seeds: completeness, TTFT p50 / p95 over completed (ms)\n", title, m.Grid.Seeds)
		var buf strings.Builder
		tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  %s\t", axis)
		for _, p := range m.Grid.Policies {
			fmt.Fprintf(tw, "%s\t", p)
		}
		fmt.Fprintln(tw)
		for ni, x := range values {
			fmt.Fprintf(tw, "  %d\t", x)
			for pi := range m.Grid.Policies {
				fmt.Fprintf(tw, "%6s %7s / %-7s\t", pct(v[0][pi][ni]), msCell(v[1][pi][ni]), msCell(v[2][pi][ni]))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if _, err := io.WriteString(w, strings.TrimRight(line, " ")+"\n"); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedsLine says, when the sweep's seeds all gave the same results (a
// profile without step noise, policies that draw nothing), that its
// "means of K seeds" are one replay and its crossovers have no interval.
func seedsLine(m *sweep.Manifest, results []sweep.Result) string {
	if m.Grid.Seeds < 2 {
		return ""
	}
	for _, name := range []string{m.Metric, "completeness", "ttft-p50", "ttft-p95"} {
		met, err := sweep.MetricByName(name, m.SLOTTFTMs)
		if err != nil || !sweep.SeedsIdentical(results, m.Grid, met) {
			return ""
		}
	}
	return fmt.Sprintf("seeds: all %d seeds gave identical results (the profile has no step-time noise, noise_sigma 0, and no policy draws): the figures below are one replay, not means with intervals", m.Grid.Seeds)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// msCell formats a mean latency; undefined (no completed request in some
// seed) prints as —.
func msCell(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return fmt.Sprintf("%.0f", x)
}

// offeredLine says what load the sweep offers at its base point: the
// requests kept and their effective rate after every filter and scale.
func offeredLine(m *sweep.Manifest) string {
	s := m.Base
	s.RateScale = m.Grid.RateScales[0]
	b, err := s.Build(nil)
	if err != nil {
		return ""
	}
	if b.Work == nil {
		return fmt.Sprintf("offered: closed-loop sessions, %d users", s.Sessions.Concurrency)
	}
	jobs := b.Work.Jobs
	span := (jobs[len(jobs)-1].Arrival - jobs[0].Arrival).Seconds()
	rate := 0.0
	if span > 0 {
		rate = float64(len(jobs)-1) / span
	}
	if s.Workload == "synthetic" {
		return fmt.Sprintf("offered: %d synthetic requests at %g req/s × rate scale %g = %.3g req/s (%.3g measured over %.0f s)",
			len(jobs), s.Synthetic.RatePerS, s.RateScale, s.Synthetic.RatePerS*s.RateScale, rate, span)
	}
	return fmt.Sprintf("offered: %d requests of %s (max ISL %d, skip %d, first %d) at rate scale %g: %.3g req/s over %.0f s",
		len(jobs), s.Trace, s.MaxISL, s.Skip, s.First, s.RateScale, rate, span)
}

// printDryRun lists the points shard would run into out (sweep --dry-run).
func printDryRun(w io.Writer, grid sweep.Grid, shard sweep.Shard, out string) error {
	all := grid.Points()
	var mine []sweep.Point
	for i, p := range all {
		if shard.Has(i) {
			mine = append(mine, p)
		}
	}
	fmt.Fprintf(w, "dry run: shard %d/%d would run %d of the grid's %d points into %s (nothing written):\n", shard.I, shard.K, len(mine), len(all), out)
	for _, p := range mine {
		fmt.Fprintf(w, "  %s\n", p.Key())
	}
	return nil
}
