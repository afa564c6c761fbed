// Package plots draws a sweep's figures with gonum/plot, as PNG (at least
// 1600 px wide) and SVG: TTFT over completed and over offered requests with
// completeness against the sweep's axis (the finding at a glance), latency
// versus completeness (and, with several rate scales, each N's frontier
// through the load), a metric versus N with confidence bands over a
// completeness panel, TTFT CDFs over offered requests, TTFT by arrival
// decile over the share of each decile not served, and per-GPU
// utilization. Figures that summarise requests show every seed: the median
// line and the seeds' range as a band. Per-policy figures share their
// axes; titles are wrapped to the page; point labels are placed where they
// overlap nothing (labels.go), and tests read the SVGs to check it.
package plots

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/routesim/routesim/sweep"
)

// Meta names what a sweep simulated, for titles.
type Meta struct {
	Trace, GPU, Model, ProfileKind string
	// Fixed names what is held fixed in a figure that one value of the
	// sweep selects (a rate scale of several, N on a load axis); set by
	// All, not stored.
	Fixed string `json:"-"`
}

func (m Meta) subtitle() string {
	s := fmt.Sprintf("%s · %s · %s (%s profile)", m.Trace, m.GPU, m.Model, m.ProfileKind)
	if m.Fixed != "" {
		s += " · " + m.Fixed
	}
	return s
}

// All draws every figure of a sweep (per rate scale where it matters).
func All(results []sweep.Result, g sweep.Grid, m sweep.Metric, meta Meta) ([]Figure, error) {
	var figs []Figure
	axisName, _ := g.Axis()
	for _, rate := range g.RateScales {
		suffix := ""
		var fixed []string
		if len(g.RateScales) > 1 {
			suffix = fmt.Sprintf("-rate%g", rate)
			fixed = append(fixed, fmt.Sprintf("rate scale ×%g", rate))
		}
		if axisName != "N" && len(g.Ns) == 1 {
			fixed = append(fixed, fmt.Sprintf("N = %d", g.Ns[0]))
		}
		meta.Fixed = strings.Join(fixed, ", ")
		sub := filterRate(results, rate)
		lc, err := LatencyVsCompleteness(sub, g, meta)
		if err != nil {
			return nil, err
		}
		mn, err := MetricVsN(sub, g, m, meta)
		if err != nil {
			return nil, err
		}
		util, err := GPUUtil(sub, g, meta)
		if err != nil {
			return nil, err
		}
		head, err := TTFTCompletenessVsN(sub, g, meta)
		if err != nil {
			return nil, err
		}
		head.Name = "ttft-completeness-vs-n" + suffix
		figs = append(figs, head)
		if len(g.RateScales) > 1 && axisName == "N" && rate == g.RateScales[0] {
			for _, n := range g.Ns {
				fr, err := Frontier(results, g, n, metaAt(meta, n))
				if err != nil {
					return nil, err
				}
				figs = append(figs, Figure{Name: fmt.Sprintf("frontier-n%d", n), Plot: fr})
			}
		}
		mnFig := Figure{Name: "metric-vs-n" + suffix, Plot: mn}
		if !m.HigherBetter {
			if mnFig, err = withCompleteness(mn, sub, g); err != nil {
				return nil, err
			}
			mnFig.Name = "metric-vs-n" + suffix
		}
		figs = append(figs, Figure{Name: "latency-vs-completeness" + suffix, Plot: lc}, mnFig, Figure{Name: "gpu-util" + suffix, Plot: util})
		for _, pol := range g.Policies {
			cdf, err := TTFTCDF(sub, g, pol, meta)
			if err != nil {
				return nil, err
			}
			dec, err := TTFTByDecile(sub, g, pol, meta)
			if err != nil {
				return nil, err
			}
			decFig, err := withNotServedByDecile(dec, sub, g, pol)
			if err != nil {
				return nil, err
			}
			decFig.Name = "ttft-by-decile-" + pol + suffix
			figs = append(figs, Figure{Name: "ttft-cdf-" + pol + suffix, Plot: cdf}, decFig)
		}
	}
	return figs, nil
}

// withCompleteness stacks a latency figure drawn against the sweep's axis
// over a completeness panel sharing that axis, so what a policy refused is
// in view wherever its latency is.
func withCompleteness(p *plot.Plot, rs []sweep.Result, g sweep.Grid) (Figure, error) {
	fig := Figure{Title: p.Title.Text}
	p.Title.Text = ""
	c := newPanel("completeness", g, completenessHeight, true)
	if err := completenessPanel(c, rs, g); err != nil {
		return Figure{}, err
	}
	p.X.Min, p.X.Max = c.p.X.Min, c.p.X.Max
	p.X.Label.Text = ""
	p.X.Tick.Marker = unlabelled{p.X.Tick.Marker}
	fig.Panels = []Panel{{p, Height - 4*vg.Centimeter}, {c.p, completenessHeight}}
	return fig, nil
}

// metaAt is meta with N = n held fixed (and no rate scale: a frontier runs
// through them).
func metaAt(meta Meta, n int) Meta {
	meta.Fixed = fmt.Sprintf("N = %d", n)
	return meta
}

func filterRate(rs []sweep.Result, rate float64) []sweep.Result {
	var out []sweep.Result
	for _, r := range rs {
		if r.Point.RateScale == rate {
			out = append(out, r)
		}
	}
	return out
}

// byPolicyN averages f over seeds per (policy, N); it also returns the
// half-width of a 95 % normal interval of the mean (0 with one seed).
func byPolicyN(rs []sweep.Result, g sweep.Grid, f func(*sweep.Result) float64) map[string]map[int][2]float64 {
	vals := map[string]map[int][]float64{}
	for i := range rs {
		r := &rs[i]
		if vals[r.Point.Policy] == nil {
			vals[r.Point.Policy] = map[int][]float64{}
		}
		x := g.AxisValue(r.Point)
		vals[r.Point.Policy][x] = append(vals[r.Point.Policy][x], f(r))
	}
	out := map[string]map[int][2]float64{}
	for p, byN := range vals {
		out[p] = map[int][2]float64{}
		for n, xs := range byN {
			m, sd := 0.0, 0.0
			for _, x := range xs {
				m += x / float64(len(xs))
			}
			for _, x := range xs {
				sd += (x - m) * (x - m)
			}
			hw := 0.0
			if len(xs) > 1 {
				hw = 1.96 * math.Sqrt(sd/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
			}
			out[p][n] = [2]float64{m, hw}
		}
	}
	return out
}

func newFigure(title, x, y string, meta Meta) *figure {
	p := plot.New()
	p.Title.Text = title + "\n" + meta.subtitle()
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Tick.Marker = linTicks{}
	p.Y.Tick.Marker = linTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Padding = vg.Points(2)
	return &figure{p: p, dataW: 480, dataH: 250}
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// seedNote says how a figure of pol's per-request TTFTs summarises seeds.
func seedNote(rs []sweep.Result, g sweep.Grid, pol string) string {
	switch {
	case g.Seeds == 1:
		return "one seed"
	case requestsIdentical(rs, g, pol):
		return fmt.Sprintf("all %d seeds identical: one replay", g.Seeds)
	}
	return fmt.Sprintf("median of %d seeds, band: their range", g.Seeds)
}

// requestsIdentical says every seed of pol gave, at every axis value, the
// same per-request TTFTs (a noiseless profile and a policy that draws
// nothing): a band over seeds would be no band.
func requestsIdentical(rs []sweep.Result, g sweep.Grid, pol string) bool {
	first := map[int][]float64{}
	for i := range rs {
		r := &rs[i]
		if r.Point.Policy != pol {
			continue
		}
		if len(r.Draws) > 0 {
			return false
		}
		x := g.AxisValue(r.Point)
		ref, ok := first[x]
		if !ok {
			first[x] = r.TTFTMs
			continue
		}
		if len(ref) != len(r.TTFTMs) {
			return false
		}
		for j := range ref {
			if ref[j] != r.TTFTMs[j] && !(math.IsNaN(ref[j]) && math.IsNaN(r.TTFTMs[j])) {
				return false
			}
		}
	}
	return true
}

func seedsPhrase(g sweep.Grid) string {
	if g.Seeds == 1 {
		return "the one seed"
	}
	return fmt.Sprintf("each of %d seeds", g.Seeds)
}

// MetricVsN: the crossover metric per policy against N, mean over seeds
// with a 95 % band.
func MetricVsN(rs []sweep.Result, g sweep.Grid, m sweep.Metric, meta Meta) (*plot.Plot, error) {
	axisName, axis := g.Axis()
	f := newFigure(m.Label+" vs "+axisLabel(axisName), axisLabel(axisName), m.Label, meta)
	p := f.p
	p.X.Tick.Marker = linTicks{integer: true}
	if !m.HigherBetter {
		f.logY()
	} else if m.Name == "completeness" || m.Name == "goodput" {
		p.Y.Tick.Marker = linTicks{percent: true}
	}
	vals := byPolicyN(rs, g, m.Value)
	var entries []string
	for i, pol := range g.Policies {
		var mid, lo, hi plotter.XYs
		for _, n := range axis {
			v := vals[pol][n]
			if !m.HigherBetter && !finitePositive(v[0]) {
				continue
			}
			mid = append(mid, f.pt(float64(n), v[0]))
			l := v[0] - v[1]
			if !m.HigherBetter && l <= 0 {
				l = v[0]
			}
			lo = append(lo, f.pt(float64(n), l))
			hi = append(hi, f.pt(float64(n), v[0]+v[1]))
		}
		if len(mid) == 0 {
			continue
		}
		band := append(plotter.XYs{}, lo...)
		for j := len(hi) - 1; j >= 0; j-- {
			band = append(band, hi[j])
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, err
		}
		c := plotutil.Color(i)
		poly.Color = translucent(c)
		poly.LineStyle.Width = 0
		line, points, err := plotter.NewLinePoints(mid)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color, points.Shape = c, c, filledGlyphs[i%len(filledGlyphs)]
		p.Add(poly, line, points)
		f.add(mid, band)
		p.Legend.Add(pol, line, points)
		entries = append(entries, pol)
		if err := addModelBand(f, rs, g, m, pol, c, axis); err != nil {
			return nil, err
		}
	}
	note := fmt.Sprintf("\nmeans of %d seeds; shaded: 95 %% interval of the mean", g.Seeds)
	if g.Seeds > 1 && sweep.SeedsIdentical(rs, g, m) {
		note = fmt.Sprintf("\nall %d seeds identical (a noiseless replay): no interval", g.Seeds)
	}
	if hasDraws(rs) {
		note += "; dashed: 10–90 % over model coefficient draws"
	}
	p.Title.Text += note
	f.placeLegend(entries)
	return p, nil
}

func axisLabel(name string) string {
	switch name {
	case "concurrency":
		return "concurrency (users)"
	case "rate":
		return "arrival rate (requests/s)"
	}
	return "N (workers)"
}

// pickNs keeps at most k of the grid's N values, evenly spread.
func pickNs(ns []int, k int) []int {
	if len(ns) <= k {
		return ns
	}
	var out []int
	for i := 0; i < k; i++ {
		out = append(out, ns[i*(len(ns)-1)/(k-1)])
	}
	return out
}
