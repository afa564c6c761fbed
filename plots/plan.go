package plots

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/routesim/routesim/plan"
)

// PlanCurve is one policy's capacity search: the cluster sizes evaluated
// and the smallest that met the objectives (0 = none in range).
type PlanCurve struct {
	Policy string
	Steps  []plan.Step
	MinN   int
}

// SLOAttainment draws, per policy, the share of runs (seeds × draws) that
// met the objectives at each evaluated N, the confidence line, and each
// policy's chosen N ringed. what names the objectives and what is held
// fixed.
func SLOAttainment(curves []PlanCurve, confidence float64, what string, meta Meta) (*plot.Plot, error) {
	f := newFigure("SLO attainment vs N: "+what, "N (workers)", "runs meeting every objective", meta)
	p := f.p
	p.X.Tick.Marker = linTicks{integer: true}
	p.Y.Tick.Marker = linTicks{percent: true}
	p.Y.Min, p.Y.Max = 0, 1.04
	conf, err := plotter.NewLine(plotter.XYs{})
	if err != nil {
		return nil, err
	}
	lo, hi := 1e9, 0.0
	for _, c := range curves {
		for _, s := range c.Steps {
			lo, hi = min(lo, float64(s.N)), max(hi, float64(s.N))
		}
	}
	if hi == 0 {
		lo, hi = 1, 2
	}
	p.X.Min, p.X.Max = lo-0.5, hi+0.5
	conf.XYs = plotter.XYs{{X: lo - 0.5, Y: confidence}, {X: hi + 0.5, Y: confidence}}
	conf.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	conf.Color = plotutil.Color(7)
	p.Add(conf)
	f.add(conf.XYs)
	var entries []string
	for i, c := range curves {
		steps := slices.Clone(c.Steps)
		slices.SortFunc(steps, func(a, b plan.Step) int { return a.N - b.N })
		var xys plotter.XYs
		for _, s := range steps {
			xys = append(xys, f.pt(float64(s.N), s.Attainment))
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		col := plotutil.Color(i)
		line.Color, points.Color, points.Shape = col, col, plotutil.Shape(i)
		p.Add(line, points)
		f.add(xys)
		label := fmt.Sprintf("%s: N = %d", c.Policy, c.MinN)
		if c.MinN == 0 {
			label = c.Policy + ": not met in range"
		}
		p.Legend.Add(label, line, points)
		entries = append(entries, label)
		if c.MinN > 0 {
			for _, s := range steps {
				if s.N == c.MinN {
					ring, err := plotter.NewScatter(plotter.XYs{f.pt(float64(s.N), s.Attainment)})
					if err != nil {
						return nil, err
					}
					ring.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(7), Shape: draw.RingGlyph{}}
					p.Add(ring)
				}
			}
		}
	}
	p.Title.Text += fmt.Sprintf("\nsizes the search ran; dashed: %.0f %% confidence; ringed: the plan's N", 100*confidence)
	f.placeLegendInside(entries)
	return p, nil
}
