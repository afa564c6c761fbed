package plots

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/routesim/routesim/sweep"
)

// Latency against completeness: TTFT p50 over completed requests against
// completeness, one curve per policy, each point labelled by what varies
// along the curve. Completeness is drawn in nines (−log10 of the share not
// served: 90 %, 99 %, 99.9 % equally spaced), which spreads the high end
// where policies differ; full completeness sits at half a request's share.

// lvcPoint is one point of a latency–completeness curve.
type lvcPoint struct {
	comp, ttft float64
	label      string
	key        int // what varies along the curve, for coincidence notes
}

// lvcCurves draws curves (per policy, in order) on a latency–completeness
// figure. A point identical to an earlier policy's is drawn as a larger
// hollow marker over it and not labelled again; the legend names the
// policy it repeats and where (along formats the keys). The first and last
// point of a curve are always labelled (moved with a leader line if need
// be); the others where their label fits beside them.
func lvcCurves(f *figure, pols []string, curves map[string][]lvcPoint, floor float64, along func([]int) string) error {
	var entries []string
	same := func(a, b lvcPoint) bool { return a.key == b.key && a.comp == b.comp && a.ttft == b.ttft }
	for i, pol := range pols {
		var xys plotter.XYs
		var labels []pointLabel
		repeats, most := "", []int{}
		for _, prev := range pols[:i] {
			var keys []int
			for _, q := range curves[pol] {
				for _, o := range curves[prev] {
					if same(q, o) {
						keys = append(keys, q.key)
					}
				}
			}
			if len(keys) > len(most) {
				repeats, most = prev, keys
			}
		}
		var drawn []lvcPoint
		for _, q := range curves[pol] {
			if finitePositive(q.ttft) {
				drawn = append(drawn, q)
			}
		}
		for j, q := range drawn {
			at := plotter.XY{X: nines(q.comp, floor), Y: math.Log10(q.ttft)}
			xys = append(xys, at)
			dup := false
			for _, prev := range pols[:i] {
				for _, o := range curves[prev] {
					dup = dup || same(q, o)
				}
			}
			if !dup {
				labels = append(labels, pointLabel{at, q.label, plotutil.Color(i), labelSide(i), j == 0 || j == len(drawn)-1})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := plotutil.Color(i)
		line.Color, pts.Color = c, c
		pts.Shape, pts.Radius = filledGlyphs[i%len(filledGlyphs)], vg.Points(2.5)
		name := pol
		if len(most) > 0 {
			// Drawn over an identical earlier curve: a larger hollow
			// marker keeps both in view.
			pts.Shape, pts.Radius = hollowGlyphs[i%len(hollowGlyphs)], vg.Points(4.5)
			name += " (same as " + repeats + " at " + along(most) + ")"
		}
		f.p.Add(line, pts)
		f.addLine(xys, true)
		f.p.Legend.Add(name, line, pts)
		entries = append(entries, name)
		for _, lb := range labels {
			f.addLabel(lb.at, lb.text, lb.color, lb.side, lb.lead)
		}
	}
	f.placeLegend(entries)
	return nil
}

// ranges prints sorted integers as runs: 3–9, 12, 14–16.
func ranges(xs []int) string {
	sort.Ints(xs)
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", xs[i], xs[j]))
		} else {
			parts = append(parts, strconv.Itoa(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// ninesAxis sets f's x axis to completeness in nines over the points'
// range, with room for labels; floor is half a request's share.
func ninesAxis(f *figure, curves map[string][]lvcPoint, floor float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, q := range c {
			if finitePositive(q.ttft) {
				v := nines(q.comp, floor)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return
	}
	lo = math.Min(lo, 1) // at least from 90 %
	span := math.Max(hi-lo, 0.5)
	f.p.X.Min, f.p.X.Max = lo-0.12*span, hi+0.12*span
	f.p.X.Tick.Marker = ninesTicks{floor}
}

// halfRequest is half of one request's share of the largest point.
func halfRequest(rs []sweep.Result) float64 {
	most := 1
	for i := range rs {
		most = max(most, rs[i].Summary.Offered, len(rs[i].TTFTMs))
	}
	return 0.5 / float64(most)
}

// LatencyVsCompleteness: completeness (nines) against TTFT p50 over
// completed, one curve per policy through the sweep's axis (means over
// seeds), points labelled by their axis value. Along N it shows where
// shedding buys latency; along a load axis it is each policy's frontier.
func LatencyVsCompleteness(rs []sweep.Result, g sweep.Grid, meta Meta) (*plot.Plot, error) {
	axisName, axis := g.Axis()
	title := "Latency vs completeness: TTFT over what was served, against how much was served"
	if axisName != "N" {
		title = "Latency–completeness frontier: each policy as the load grows"
	}
	f := newFigure(title, "completeness (served / offered; axis in nines: 90 %, 99 %, 99.9 % equally spaced)", "TTFT p50 over completed (ms, log)", meta)
	f.logY()
	comp := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.Completeness })
	ttft := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.TTFTMs.Pct("p50") })
	curves := map[string][]lvcPoint{}
	for _, pol := range g.Policies {
		for j, n := range axis {
			if _, ok := comp[pol][n]; !ok {
				continue
			}
			label := strconv.Itoa(n)
			if j == 0 {
				label = fmt.Sprintf("%s = %d", axisName, n)
			}
			curves[pol] = append(curves[pol], lvcPoint{comp[pol][n][0], ttft[pol][n][0], label, n})
		}
	}
	floor := halfRequest(rs)
	ninesAxis(f, curves, floor)
	padLogY(f, curves)
	mTTFT, _ := sweep.MetricByName("ttft-p50", 0)
	mComp, _ := sweep.MetricByName("completeness", 0)
	if g.Seeds > 1 && sweep.SeedsIdentical(rs, g, mTTFT) && sweep.SeedsIdentical(rs, g, mComp) {
		f.p.Title.Text += fmt.Sprintf("\npoints: one replay (all %d seeds identical), labelled by %s", g.Seeds, axisName)
	} else {
		f.p.Title.Text += fmt.Sprintf("\npoints: means of %d seeds, labelled by %s", g.Seeds, axisName)
	}
	if err := lvcCurves(f, g.Policies, curves, floor, func(ks []int) string { return axisName + " = " + ranges(ks) }); err != nil {
		return nil, err
	}
	return f.p, nil
}

// padLogY sets a log y range around the curves' TTFTs with room for
// labels.
func padLogY(f *figure, curves map[string][]lvcPoint) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, q := range c {
			if finitePositive(q.ttft) {
				lo, hi = math.Min(lo, math.Log10(q.ttft)), math.Max(hi, math.Log10(q.ttft))
			}
		}
	}
	if math.IsInf(lo, 0) {
		return
	}
	span := math.Max(hi-lo, 0.3)
	f.p.Y.Min, f.p.Y.Max = lo-0.06*span, hi+0.06*span
}

// Frontier: at one N, each policy's latency–completeness curve through the
// sweep's rate scales (the load): TTFT p50 over completed against
// completeness, points labelled by rate scale, means over seeds. lo and
// hi, in plotted units (nines, log10 ms), are the axes shared by every N's
// figure.
func Frontier(rs []sweep.Result, g sweep.Grid, n int, meta Meta) (*plot.Plot, error) {
	f := newFigure(fmt.Sprintf("Latency–completeness frontier at N = %d: each policy as the load grows", n),
		"completeness (served / offered; axis in nines: 90 %, 99 %, 99.9 % equally spaced)", "TTFT p50 over completed (ms, log)", meta)
	f.logY()
	all, floor := frontierCurves(rs, g)
	ninesAxis(f, flatten(all), floor)
	padLogY(f, flatten(all))
	f.p.Title.Text += fmt.Sprintf("\npoints: means of %d seeds, labelled by the rate scale (× the trace's arrival rate)", g.Seeds)
	along := func(ks []int) string {
		var rates []string
		for _, k := range ks {
			rates = append(rates, "×"+strconv.FormatFloat(g.RateScales[k], 'g', -1, 64))
		}
		return "rate scale " + strings.Join(rates, ", ")
	}
	if err := lvcCurves(f, g.Policies, all[n], floor, along); err != nil {
		return nil, err
	}
	return f.p, nil
}

// frontierCurves is every N's curves through the rate scales.
func frontierCurves(rs []sweep.Result, g sweep.Grid) (map[int]map[string][]lvcPoint, float64) {
	out := map[int]map[string][]lvcPoint{}
	for _, n := range g.Ns {
		out[n] = map[string][]lvcPoint{}
		for _, pol := range g.Policies {
			for k, rate := range g.RateScales {
				var c, t float64
				cnt := 0
				for i := range rs {
					r := &rs[i]
					if r.Point.N == n && r.Point.Policy == pol && r.Point.RateScale == rate {
						c += r.Summary.Completeness
						t += r.Summary.TTFTMs.Pct("p50")
						cnt++
					}
				}
				if cnt == 0 {
					continue
				}
				out[n][pol] = append(out[n][pol], lvcPoint{c / float64(cnt), t / float64(cnt), "×" + strconv.FormatFloat(rate, 'g', -1, 64), k})
			}
		}
	}
	return out, halfRequest(rs)
}

// flatten merges every N's curves (for shared axes).
func flatten(all map[int]map[string][]lvcPoint) map[string][]lvcPoint {
	out := map[string][]lvcPoint{}
	for _, byPol := range all {
		for pol, c := range byPol {
			out[pol] = append(out[pol], c...)
		}
	}
	return out
}
