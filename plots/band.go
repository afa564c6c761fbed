package plots

import (
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// The model-uncertainty band of sweep --uncertainty: each point's metric
// over its coefficient draws.

func hasDraws(rs []sweep.Result) bool {
	for i := range rs {
		if len(rs[i].Draws) > 0 {
			return true
		}
	}
	return false
}

// addModelBand draws policy pol's model-uncertainty band as two dashed
// lines: the metric's 10th and 90th percentile over each point's
// coefficient draws, averaged over seeds.
func addModelBand(f *figure, rs []sweep.Result, g sweep.Grid, m sweep.Metric, pol string, c color.Color, axis []int) error {
	los, his := map[int][]float64{}, map[int][]float64{}
	for i := range rs {
		r := &rs[i]
		if r.Point.Policy != pol || len(r.Draws) == 0 {
			continue
		}
		vals := make([]float64, len(r.Draws))
		for j := range r.Draws {
			dr := sweep.Result{Point: r.Point, Summary: r.Draws[j], TTFTMs: r.TTFTMs}
			vals[j] = m.Value(&dr)
		}
		sort.Float64s(vals)
		x := g.AxisValue(r.Point)
		los[x] = append(los[x], sim.Quantile7(vals, sim.BandLo))
		his[x] = append(his[x], sim.Quantile7(vals, sim.BandHi))
	}
	var lo, hi plotter.XYs
	for _, n := range axis {
		l, h := meanOf(los[n]), meanOf(his[n])
		if m.HigherBetter || (finitePositive(l) && finitePositive(h)) {
			if !math.IsNaN(l) && !math.IsNaN(h) && !math.IsInf(l, 0) && !math.IsInf(h, 0) {
				lo = append(lo, f.pt(float64(n), l))
				hi = append(hi, f.pt(float64(n), h))
			}
		}
	}
	for _, xy := range []plotter.XYs{lo, hi} {
		if len(xy) < 2 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color, l.Dashes = c, []vg.Length{vg.Points(3), vg.Points(2)}
		f.p.Add(l)
		f.add(xy)
	}
	return nil
}

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x / float64(len(xs))
	}
	return s
}
