// Package plots draws a sweep's figures with gonum/plot, as PNG and SVG:
// latency versus completeness, a metric versus N with confidence bands,
// TTFT CDFs over offered requests, TTFT by arrival decile (queue
// build-up), and per-GPU utilization.
package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

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
}

func (m Meta) subtitle() string {
	return fmt.Sprintf("%s · %s · %s (%s profile)", m.Trace, m.GPU, m.Model, m.ProfileKind)
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

// Render writes one plot as png or svg.
func Render(w io.Writer, p *plot.Plot, format string) error {
	wt, err := p.WriterTo(16*vg.Centimeter, 11*vg.Centimeter, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// All draws every figure of a sweep (per rate scale where it matters).
func All(results []sweep.Result, g sweep.Grid, m sweep.Metric, meta Meta) ([]Figure, error) {
	var figs []Figure
	for _, rate := range g.RateScales {
		suffix := ""
		if len(g.RateScales) > 1 {
			suffix = fmt.Sprintf("-rate%g", rate)
		}
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

func newPlot(title, x, y string, meta Meta) *plot.Plot {
	p := plot.New()
	p.Title.Text = title + "\n" + meta.subtitle()
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func logY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
}

// ticks125 labels 1, 2 and 5 × 10^k on a log axis.
type ticks125 struct{}

// Ticks implements plot.Ticker.
func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 {
		lo = 1e-9
	}
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	if len(out) < 2 { // a narrow range: ordinary ticks read better
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	return out
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// LatencyVsCompleteness: x completeness, y TTFT p50 over completed, one
// curve per policy through increasing N, each point labelled by N.
func LatencyVsCompleteness(rs []sweep.Result, g sweep.Grid, meta Meta) (*plot.Plot, error) {
	p := newPlot("Latency vs completeness: TTFT over what was served, against how much was served",
		"completeness (completed / offered)", "TTFT p50 over completed (ms, log)", meta)
	logY(p)
	axisName, axis := g.Axis()
	labelled := map[int]bool{}
	for _, n := range pickNs(axis, 5) {
		labelled[n] = true
	}
	comp := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.Completeness })
	ttft := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.TTFTMs.Pct("p50") })
	for i, pol := range g.Policies {
		var xys plotter.XYs
		var labels []string
		for _, n := range axis {
			c, t := comp[pol][n][0], ttft[pol][n][0]
			if !finitePositive(t) {
				continue
			}
			xys = append(xys, plotter.XY{X: c, Y: t})
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
		p.Legend.Add(pol+" (labels: "+axisName+")", line, points)
	}
	if len(axis) > 5 {
		p.Title.Text += fmt.Sprintf("\n%s from %d to %d along each curve; some points labelled", axisName, axis[0], axis[len(axis)-1])
	}
	p.X.Min, p.X.Max = math.Min(p.X.Min-0.01, 0.95), 1.01
	return p, nil
}

// MetricVsN: the crossover metric per policy against N, mean over seeds
// with a 95 % band.
func MetricVsN(rs []sweep.Result, g sweep.Grid, m sweep.Metric, meta Meta) (*plot.Plot, error) {
	axisName, axis := g.Axis()
	p := newPlot(m.Label+" vs "+axisLabel(axisName), axisLabel(axisName), m.Label, meta)
	if !m.HigherBetter {
		logY(p)
	}
	vals := byPolicyN(rs, g, m.Value)
	for i, pol := range g.Policies {
		var mid, lo, hi plotter.XYs
		for _, n := range axis {
			v := vals[pol][n]
			if !m.HigherBetter && !finitePositive(v[0]) {
				continue
			}
			mid = append(mid, plotter.XY{X: float64(n), Y: v[0]})
			l := v[0] - v[1]
			if !m.HigherBetter && l <= 0 {
				l = v[0]
			}
			lo = append(lo, plotter.XY{X: float64(n), Y: l})
			hi = append(hi, plotter.XY{X: float64(n), Y: v[0] + v[1]})
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
		r, gg, b, _ := c.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(gg >> 8), B: uint8(b >> 8), A: 50}
		poly.LineStyle.Width = 0
		line, points, err := plotter.NewLinePoints(mid)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color, points.Shape = c, c, plotutil.Shape(i)
		p.Add(poly, line, points)
		p.Legend.Add(pol, line, points)
		if err := addModelBand(p, rs, g, m, pol, c, axis); err != nil {
			return nil, err
		}
	}
	if hasDraws(rs) {
		p.Title.Text += "\n(shaded: 95 % over seeds; dashed: 10–90 % over model coefficient draws)"
	}
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

// firstSeed returns the lowest-seed result of (policy, axis value x).
func firstSeed(rs []sweep.Result, g sweep.Grid, pol string, x int) *sweep.Result {
	var best *sweep.Result
	for i := range rs {
		r := &rs[i]
		if r.Point.Policy == pol && g.AxisValue(r.Point) == x && (best == nil || r.Point.Seed < best.Point.Seed) {
			best = r
		}
	}
	return best
}

// TTFTCDF: for one policy, the share of offered requests whose first token
// came within x ms, per N (first seed). Curves end at the completeness:
// rejected requests never get a first token.
func TTFTCDF(rs []sweep.Result, g sweep.Grid, pol string, meta Meta) (*plot.Plot, error) {
	p := newPlot("TTFT CDF over offered requests: "+pol, "TTFT (ms, log)", "share of offered requests", meta)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	axisName, axis := g.Axis()
	for i, n := range pickNs(axis, 6) {
		r := firstSeed(rs, g, pol, n)
		if r == nil || len(r.TTFTMs) == 0 {
			continue
		}
		var ok []float64
		for _, t := range r.TTFTMs {
			if t > 0 {
				ok = append(ok, t)
			}
		}
		if len(ok) == 0 {
			continue
		}
		sort.Float64s(ok)
		step := max(1, len(ok)/200)
		var xys plotter.XYs
		for j := 0; j < len(ok); j += step {
			xys = append(xys, plotter.XY{X: ok[j], Y: float64(j+1) / float64(len(r.TTFTMs))})
		}
		xys = append(xys, plotter.XY{X: ok[len(ok)-1], Y: float64(len(ok)) / float64(len(r.TTFTMs))})
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s=%d", axisName, n), line)
	}
	p.Legend.Top, p.Legend.Left = false, false
	return p, nil
}

// TTFTByDecile: for one policy, mean TTFT of the completed requests
// arriving in each tenth of the trace, per N: a queue that builds up
// rises to the right.
func TTFTByDecile(rs []sweep.Result, g sweep.Grid, pol string, meta Meta) (*plot.Plot, error) {
	p := newPlot("TTFT by arrival decile (queue build-up): "+pol, "arrival decile of the trace", "mean TTFT of completed (ms, log)", meta)
	logY(p)
	axisName, axis := g.Axis()
	for i, n := range pickNs(axis, 6) {
		r := firstSeed(rs, g, pol, n)
		if r == nil || len(r.ArrivalS) == 0 {
			continue
		}
		span := r.ArrivalS[len(r.ArrivalS)-1] - r.ArrivalS[0]
		var sum, cnt [10]float64
		for j, a := range r.ArrivalS {
			if r.TTFTMs[j] <= 0 {
				continue
			}
			d := 0
			if span > 0 {
				d = min(int(10*(a-r.ArrivalS[0])/span), 9)
			}
			sum[d] += r.TTFTMs[j]
			cnt[d]++
		}
		var xys plotter.XYs
		for d := 0; d < 10; d++ {
			if cnt[d] > 0 {
				xys = append(xys, plotter.XY{X: float64(d + 1), Y: sum[d] / cnt[d]})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color, points.Shape = plotutil.Color(i), plotutil.Color(i), plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("%s=%d", axisName, n), line, points)
	}
	return p, nil
}

// GPUUtil: every GPU's simulated NVML utilization against N (first seed),
// per policy, with the per-policy mean as a line: spread shows skew.
func GPUUtil(rs []sweep.Result, g sweep.Grid, meta Meta) (*plot.Plot, error) {
	axisName, axis := g.Axis()
	p := newPlot("Per-GPU utilization (simulated NVML)", axisLabel(axisName), "utilization (kernel time share)", meta)
	p.Y.Min, p.Y.Max = 0, 1
	width := 0.6 / float64(max(len(g.Policies), 1))
	for i, pol := range g.Policies {
		var pts, mean plotter.XYs
		off := (float64(i) - float64(len(g.Policies)-1)/2) * width
		for _, n := range axis {
			r := firstSeed(rs, g, pol, n)
			if r == nil {
				continue
			}
			for _, gpu := range r.Summary.GPU.GPUs {
				pts = append(pts, plotter.XY{X: float64(n) + off, Y: gpu.UtilMean})
			}
			mean = append(mean, plotter.XY{X: float64(n) + off, Y: r.Summary.GPU.UtilMean})
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape = plotutil.Color(i), plotutil.Shape(i)
		sc.Radius = vg.Points(1.5)
		line, err := plotter.NewLine(mean)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		p.Add(sc, line)
		p.Legend.Add(pol, line, sc)
	}
	return p, nil
}
