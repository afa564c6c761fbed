package plots

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/routesim/routesim/sweep"
)

// cdfPoints is how many TTFT values a CDF curve is evaluated at.
const cdfPoints = 160

// TTFTCDF: for one policy, the share of offered requests whose first token
// came within x ms, per N: the median over seeds with the seeds' range.
// Curves end at the completeness: rejected requests never get a first
// token.
func TTFTCDF(rs []sweep.Result, g sweep.Grid, pol string, meta Meta) (*plot.Plot, error) {
	if err := checkRequests(rs, false); err != nil {
		return nil, err
	}
	f := newFigure("TTFT CDF over offered requests: "+pol+" ("+seedNote(rs, g, pol)+")", "TTFT (ms, log)", "share of offered requests", meta)
	p := f.p
	f.logX()
	p.Y.Tick.Marker = linTicks{percent: true}
	p.Y.Min, p.Y.Max = 0, 1
	axisName, axis := g.Axis()
	var entries []string
	for i, n := range pickNs(axis, 6) {
		type seedCDF struct {
			done    []float64 // first-token times, sorted
			offered int
		}
		var cdfs []seedCDF
		lo, hi := math.Inf(1), 0.0
		for _, r := range seedsAt(rs, g, pol, n) {
			if len(r.TTFTMs) == 0 {
				continue
			}
			c := seedCDF{offered: len(r.TTFTMs)}
			for _, t := range r.TTFTMs {
				if t > 0 {
					c.done = append(c.done, t)
				}
			}
			sort.Float64s(c.done)
			if len(c.done) > 0 {
				lo, hi = math.Min(lo, c.done[0]), math.Max(hi, c.done[len(c.done)-1])
			}
			cdfs = append(cdfs, c)
		}
		if hi == 0 {
			continue
		}
		// Shares over offered requests, on one log-spaced grid of TTFTs
		// common to every seed.
		var xs []float64
		var ys []spread
		for k := 0; k < cdfPoints; k++ {
			x := lo
			if hi > lo {
				x = lo * math.Pow(hi/lo, float64(k)/float64(cdfPoints-1))
			}
			share := make([]float64, len(cdfs))
			for j, c := range cdfs {
				share[j] = float64(sort.SearchFloat64s(c.done, math.Nextafter(x, math.Inf(1)))) / float64(c.offered)
			}
			xs = append(xs, x)
			ys = append(ys, spreadOf(share))
		}
		line, err := medianBand(f, xs, ys, plotutil.Color(i), i)
		if err != nil {
			return nil, err
		}
		label := fmt.Sprintf("%s=%d", axisName, n)
		p.Legend.Add(label, line)
		entries = append(entries, label)
	}
	// Every policy's figure spans the same TTFTs, so they compare at a
	// glance.
	if lo, hi := completedRange(rs); hi > 0 {
		p.X.Min, p.X.Max = math.Log10(lo)-0.02, math.Log10(hi)+0.02
	}
	f.placeLegend(entries)
	return p, nil
}

// completedRange is the least and greatest TTFT of any completed request
// in rs (every policy and N): the shared x range of the CDF figures.
func completedRange(rs []sweep.Result) (lo, hi float64) {
	lo = math.Inf(1)
	for i := range rs {
		for _, t := range rs[i].TTFTMs {
			if t > 0 {
				lo, hi = math.Min(lo, t), math.Max(hi, t)
			}
		}
	}
	return lo, hi
}

// TTFTByDecile: for one policy, mean TTFT of the completed requests
// arriving in each tenth of the trace, per N (median over seeds, band:
// their range): a queue that builds up rises to the right.
func TTFTByDecile(rs []sweep.Result, g sweep.Grid, pol string, meta Meta) (*plot.Plot, error) {
	if err := checkRequests(rs, true); err != nil {
		return nil, err
	}
	f := newFigure("TTFT by arrival decile (queue build-up): "+pol+" ("+seedNote(rs, g, pol)+")", "arrival decile of the trace", "mean TTFT of completed (ms, log)", meta)
	p := f.p
	f.logY()
	p.X.Tick.Marker = linTicks{integer: true}
	axisName, axis := g.Axis()
	var entries []string
	for i, n := range pickNs(axis, 6) {
		per := decileMeans(seedsAt(rs, g, pol, n))
		var xs []float64
		var ys []spread
		for d := range per {
			if len(per[d]) > 0 {
				xs = append(xs, float64(d+1))
				ys = append(ys, spreadOf(per[d]))
			}
		}
		if len(xs) == 0 {
			continue
		}
		line, err := medianBand(f, xs, ys, plotutil.Color(i), 0)
		if err != nil {
			return nil, err
		}
		var mid plotter.XYs
		for k := range xs {
			mid = append(mid, f.pt(xs[k], ys[k].med))
		}
		pts, err := plotter.NewScatter(mid)
		if err != nil {
			return nil, err
		}
		pts.Color, pts.Shape = plotutil.Color(i), filledGlyphs[i%len(filledGlyphs)]
		p.Add(pts)
		label := fmt.Sprintf("%s=%d", axisName, n)
		p.Legend.Add(label, line, pts)
		entries = append(entries, label)
	}
	// Every policy's figure spans the same TTFTs.
	lo, hi := math.Inf(1), 0.0
	for _, other := range g.Policies {
		for _, n := range pickNs(axis, 6) {
			for _, d := range decileMeans(seedsAt(rs, g, other, n)) {
				for _, v := range d {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	if hi > 0 {
		span := math.Log10(hi) - math.Log10(lo)
		p.Y.Min, p.Y.Max = math.Log10(lo)-0.04*span-0.01, math.Log10(hi)+0.04*span+0.01
	}
	p.X.Min, p.X.Max = 0.5, 10.5
	f.placeLegend(entries)
	return p, nil
}

// decileMeans is, per tenth of the trace's arrival span, each seed's mean
// TTFT of the completed requests arriving in it.
func decileMeans(seeds []*sweep.Result) [10][]float64 {
	return perDecile(seeds, func(r *sweep.Result, j int) (float64, bool) { return r.TTFTMs[j], r.TTFTMs[j] > 0 })
}

// perDecile is, per tenth of each seed's arrival span, that seed's mean of
// value over the requests arriving in it that value counts (a tenth with
// none gives no entry).
func perDecile(seeds []*sweep.Result, value func(r *sweep.Result, j int) (v float64, counted bool)) [10][]float64 {
	var per [10][]float64
	for _, r := range seeds {
		if len(r.ArrivalS) == 0 {
			continue
		}
		first, last := r.ArrivalS[0], r.ArrivalS[0]
		for _, a := range r.ArrivalS {
			first, last = math.Min(first, a), math.Max(last, a)
		}
		span := last - first
		var sum, cnt [10]float64
		for j, a := range r.ArrivalS {
			v, ok := value(r, j)
			if !ok {
				continue
			}
			d := 0
			if span > 0 {
				d = max(min(int(10*(a-first)/span), 9), 0)
			}
			sum[d] += v
			cnt[d]++
		}
		for d := range per {
			if cnt[d] > 0 {
				per[d] = append(per[d], sum[d]/cnt[d])
			}
		}
	}
	return per
}

// GPUUtil: every GPU's simulated NVML utilization against N, in every
// seed, per policy, with the per-policy mean over GPUs and seeds as a
// line: spread shows skew.
func GPUUtil(rs []sweep.Result, g sweep.Grid, meta Meta) (*plot.Plot, error) {
	axisName, axis := g.Axis()
	f := newFigure("Per-GPU utilization (simulated NVML)", axisLabel(axisName), "utilization (kernel-time share)", meta)
	p := f.p
	p.Title.Text += "\ndots: each GPU in " + seedsPhrase(g) + "; line: their mean"
	p.X.Tick.Marker = linTicks{integer: true}
	p.Y.Tick.Marker = linTicks{percent: true}
	p.Y.Min, p.Y.Max = 0, 1
	width := 0.6 / float64(max(len(g.Policies), 1))
	var entries []string
	for i, pol := range g.Policies {
		var pts, mean plotter.XYs
		off := (float64(i) - float64(len(g.Policies)-1)/2) * width
		for _, n := range axis {
			seeds := seedsAt(rs, g, pol, n)
			if len(seeds) == 0 {
				continue
			}
			m := 0.0
			for _, r := range seeds {
				for _, gpu := range r.Summary.GPU.GPUs {
					pts = append(pts, plotter.XY{X: float64(n) + off, Y: gpu.UtilMean})
				}
				m += r.Summary.GPU.UtilMean / float64(len(seeds))
			}
			mean = append(mean, plotter.XY{X: float64(n) + off, Y: m})
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
		f.add(pts)
		p.Legend.Add(pol, line, sc)
		entries = append(entries, pol)
	}
	f.placeLegend(entries)
	return p, nil
}

// checkRequests refuses points whose per-request arrays the request
// figures cannot read: a TTFT that is not finite, and with arrivals, an
// arrival list that is not as long as the TTFTs or holds a value that is
// not finite. (Point files are checked when read; this keeps the figures
// from ever indexing past an array.)
func checkRequests(rs []sweep.Result, arrivals bool) error {
	for i := range rs {
		r := &rs[i]
		for j, t := range r.TTFTMs {
			if math.IsNaN(t) || math.IsInf(t, 0) {
				return fmt.Errorf("plots: point %s: ttft_ms[%d] is %g", r.Point.Key(), j, t)
			}
		}
		if !arrivals {
			continue
		}
		if len(r.ArrivalS) != len(r.TTFTMs) {
			return fmt.Errorf("plots: point %s: %d TTFTs for %d arrivals", r.Point.Key(), len(r.TTFTMs), len(r.ArrivalS))
		}
		for j, a := range r.ArrivalS {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				return fmt.Errorf("plots: point %s: arrival_s[%d] is %g", r.Point.Key(), j, a)
			}
		}
	}
	return nil
}

// decileNotServed is, per tenth of the trace's arrival span, each seed's
// share of the requests arriving in it that were not served.
func decileNotServed(seeds []*sweep.Result) [10][]float64 {
	return perDecile(seeds, func(r *sweep.Result, j int) (float64, bool) {
		if r.TTFTMs[j] < 0 {
			return 1, true
		}
		return 0, true
	})
}

// withNotServedByDecile stacks pol's TTFT-by-decile plot over a panel of
// the share of each decile's arrivals not served, per N (median over
// seeds): the mean TTFT above is over what was served, and this shows
// what was not, and when. Its y range is shared by every policy's figure.
func withNotServedByDecile(p *plot.Plot, rs []sweep.Result, g sweep.Grid, pol string) (Figure, error) {
	fig := Figure{Title: p.Title.Text + "\nbelow: the share of each decile's arrivals not served (median of the seeds), same N colours"}
	p.Title.Text = ""
	p.X.Label.Text = ""
	p.X.Tick.Marker = unlabelled{p.X.Tick.Marker}
	_, axis := g.Axis()
	f := newPanel("not served", g, completenessHeight, true)
	f.p.X.Label.Text = "arrival decile of the trace"
	f.p.X.Tick.Marker = linTicks{integer: true}
	f.p.X.Min, f.p.X.Max = p.X.Min, p.X.Max
	f.p.Y.Tick.Marker = linTicks{percent: true}
	top := 0.0
	for _, other := range g.Policies {
		for _, n := range pickNs(axis, 6) {
			for _, d := range decileNotServed(seedsAt(rs, g, other, n)) {
				for _, v := range d {
					top = math.Max(top, v)
				}
			}
		}
	}
	f.p.Y.Min, f.p.Y.Max = 0, math.Max(0.01, top*1.1)
	for i, n := range pickNs(axis, 6) {
		per := decileNotServed(seedsAt(rs, g, pol, n))
		var xys plotter.XYs
		for d := range per {
			if len(per[d]) > 0 {
				xys = append(xys, plotter.XY{X: float64(d + 1), Y: spreadOf(per[d]).med})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return Figure{}, err
		}
		c := plotutil.Color(i)
		line.Color, pts.Color, pts.Shape = c, c, filledGlyphs[i%len(filledGlyphs)]
		f.p.Add(line, pts)
		f.addLine(xys, true)
	}
	fig.Panels = []Panel{{p, Height - 4*vg.Centimeter}, {f.p, completenessHeight}}
	return fig, nil
}
