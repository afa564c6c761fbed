// Package plots draws a sweep's figures with gonum/plot, as PNG and SVG:
// latency versus completeness, a metric versus N with confidence bands,
// TTFT CDFs over offered requests, TTFT by arrival decile (queue
// build-up), and per-GPU utilization. Figures that summarise requests show
// every seed: the median line and the seeds' range as a band.
package plots

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/routesim/routesim/internal/atomicfile"
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

// Figure is one drawn plot and its file stem.
type Figure struct {
	Name string
	Plot *plot.Plot
}

// Save writes each figure as NAME.png and NAME.svg into dir.
func Save(dir string, figs []Figure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		for _, ext := range []string{"png", "svg"} {
			if err := atomicfile.WriteFile(filepath.Join(dir, f.Name+"."+ext), func(w io.Writer) error {
				return Render(w, f.Plot, ext)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Width and Height are every figure's size.
const (
	Width  = 16 * vg.Centimeter
	Height = 11 * vg.Centimeter
)

// Render writes one plot as png or svg.
func Render(w io.Writer, p *plot.Plot, format string) error {
	widenFlat(&p.X)
	widenFlat(&p.Y)
	wt, err := p.WriterTo(Width, Height, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// widenFlat gives an axis whose values are all equal up to rounding (every
// seed of a point alike, a band of zero width) a range of ±5 % around
// them, so it is drawn with a labelled value instead of a few ULPs.
func widenFlat(a *plot.Axis) {
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || !(a.Max >= a.Min) || !flat(a.Min, a.Max) {
		return
	}
	mid := (a.Min + a.Max) / 2
	d := 0.05 * math.Abs(mid)
	if d == 0 {
		d = 1
	}
	a.Min, a.Max = mid-d, mid+d
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
		figs = append(figs, Figure{"latency-vs-completeness" + suffix, lc}, Figure{"metric-vs-n" + suffix, mn}, Figure{"gpu-util" + suffix, util})
		for _, pol := range g.Policies {
			cdf, err := TTFTCDF(sub, g, pol, meta)
			if err != nil {
				return nil, err
			}
			dec, err := TTFTByDecile(sub, g, pol, meta)
			if err != nil {
				return nil, err
			}
			figs = append(figs, Figure{"ttft-cdf-" + pol + suffix, cdf}, Figure{"ttft-by-decile-" + pol + suffix, dec})
		}
	}
	return figs, nil
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
	return &figure{p: p}
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

// LatencyVsCompleteness: x completeness, y TTFT p50 over completed, one
// curve per policy through increasing N (means over seeds), points
// labelled by N.
func LatencyVsCompleteness(rs []sweep.Result, g sweep.Grid, meta Meta) (*plot.Plot, error) {
	axisName, axis := g.Axis()
	f := newFigure("Latency vs completeness: TTFT over what was served, against how much was served",
		"completeness (% of offered requests completed)", "TTFT p50 over completed (ms, log)", meta)
	p := f.p
	f.logY()
	p.X.Tick.Marker = linTicks{percent: true}
	labelled := map[int]bool{}
	for _, n := range pickNs(axis, 5) {
		labelled[n] = true
	}
	comp := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.Completeness })
	ttft := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.TTFTMs.Pct("p50") })
	var entries []string
	lowest := 1.0
	for i, pol := range g.Policies {
		var xys plotter.XYs
		var labels []string
		for _, n := range axis {
			c, t := comp[pol][n][0], ttft[pol][n][0]
			if !finitePositive(t) {
				continue
			}
			xys = append(xys, f.pt(c, t))
			lowest = math.Min(lowest, c)
			label := ""
			if labelled[n] {
				label = fmt.Sprintf("%d", n)
			}
			labels = append(labels, label)
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		for j := range lab.TextStyle {
			lab.TextStyle[j].Color = plotutil.Color(i)
			lab.TextStyle[j].Font.Size = vg.Points(9)
			lab.TextStyle[j].XAlign = 0.4
			lab.TextStyle[j].YAlign = -0.5
		}
		p.Add(line, points, lab)
		f.add(xys)
		p.Legend.Add(pol, line, points)
		entries = append(entries, pol)
	}
	mTTFT, _ := sweep.MetricByName("ttft-p50", 0)
	mComp, _ := sweep.MetricByName("completeness", 0)
	if g.Seeds > 1 && sweep.SeedsIdentical(rs, g, mTTFT) && sweep.SeedsIdentical(rs, g, mComp) {
		p.Title.Text += fmt.Sprintf("\npoints: one replay (all %d seeds identical), labelled by %s", g.Seeds, axisName)
	} else {
		p.Title.Text += fmt.Sprintf("\npoints: means of %d seeds, labelled by %s", g.Seeds, axisName)
	}
	if len(axis) > 5 {
		p.Title.Text += fmt.Sprintf(" (%d to %d along each curve, some labelled)", axis[0], axis[len(axis)-1])
	}
	lo := math.Min(math.Floor((lowest-0.005)*100)/100, 0.95)
	p.X.Min, p.X.Max = lo, 1+0.03*(1-lo)
	f.placeLegend(entries)
	return p, nil
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
		line.Color, points.Color, points.Shape = c, c, plotutil.Shape(i)
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
