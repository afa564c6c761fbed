package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// The finding at a glance: TTFT over completed and over offered requests
// and completeness, against the sweep's axis, in panels that share it. A
// percentile over offered counts every request not served (refused or
// failed) as infinitely slow, as the summaries do (sim.Summarize), so it
// is undefined (drawn off scale, at the panel's top) once more than
// 1 − p of the requests were not served.

// offeredQuantile is the p-quantile of one run's TTFTs over offered
// requests, −1 (not completed) counting as +Inf: +Inf when it lands on a
// request not served, NaN for no requests.
func offeredQuantile(ttft []float64, p float64) float64 {
	if len(ttft) == 0 {
		return math.NaN()
	}
	x := make([]float64, len(ttft))
	for i, t := range ttft {
		x[i] = t
		if t < 0 {
			x[i] = math.Inf(1)
		}
	}
	sort.Float64s(x)
	return sim.Quantile7(x, p)
}

// ttftStat is a TTFT percentile of one policy at one axis value over its
// seeds: the mean over completed and the mean over offered (undef: the
// number of seeds where the latter is undefined, then not averaged).
type ttftStat struct {
	done, offered float64
	undef, seeds  int
	notServed     float64 // mean share of offered not served
}

func ttftStats(rs []sweep.Result, g sweep.Grid, pol string, x int, key string, p float64) (ttftStat, bool) {
	seeds := seedsAt(rs, g, pol, x)
	if len(seeds) == 0 {
		return ttftStat{}, false
	}
	s := ttftStat{seeds: len(seeds)}
	for _, r := range seeds {
		s.done += r.Summary.TTFTMs.Pct(key) / float64(len(seeds))
		s.notServed += (1 - r.Summary.Completeness) / float64(len(seeds))
		if v := offeredQuantile(r.TTFTMs, p); math.IsInf(v, 1) || math.IsNaN(v) {
			s.undef++
		} else {
			s.offered += v / float64(len(seeds))
		}
	}
	return s, true
}

// Glyphs: filled for a percentile over completed, the same shape hollow
// over offered; policies differ by colour and shape.
var (
	filledGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
	hollowGlyphs = []draw.GlyphDrawer{draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
)

// unlabelled is a ticker whose ticks carry no labels: the x axis of a
// panel above another that labels it.
type unlabelled struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	ts := u.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// panelHeight is the height of a latency panel; the completeness panel
// takes less.
const (
	panelHeight        = 7 * vg.Centimeter
	completenessHeight = 6 * vg.Centimeter
)

// newPanel is a figure for one panel of a stacked figure: no title, the
// x axis the sweep's (labelled only on the bottom panel).
func newPanel(ylabel string, g sweep.Grid, height vg.Length, bottom bool) *figure {
	axisName, axis := g.Axis()
	p := plot.New()
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = linTicks{integer: true}
	if bottom {
		p.X.Label.Text = axisLabel(axisName)
	} else {
		p.X.Tick.Marker = unlabelled{linTicks{integer: true}}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Padding = vg.Points(2)
	p.X.Min, p.X.Max = float64(axis[0])-0.5, float64(axis[len(axis)-1])+0.5
	if len(axis) == 1 {
		p.X.Min, p.X.Max = float64(axis[0])-1, float64(axis[0])+1
	}
	h := float64(height.Points()) - 20
	if bottom {
		h -= 30
	}
	return &figure{p: p, dataW: 480, dataH: h}
}

// TTFTCompletenessVsN draws, against the sweep's axis, TTFT p50 and p95
// over completed (solid, filled) and over offered (dashed, hollow) per
// policy, and under them completeness, every share of requests not served
// that stands out labelled: a policy that sheds load cannot look fast
// without the shedding in view.
func TTFTCompletenessVsN(rs []sweep.Result, g sweep.Grid, meta Meta) (Figure, error) {
	axisName, _ := g.Axis()
	fig := Figure{Title: "TTFT and completeness vs " + axisLabel(axisName) + ": latency over what was served, beside how much was served\n" + meta.subtitle()}
	note := fmt.Sprintf("means of %d seeds", g.Seeds)
	mTTFT, _ := sweep.MetricByName("ttft-p50", 0)
	mComp, _ := sweep.MetricByName("completeness", 0)
	switch {
	case g.Seeds == 1:
		note = "one seed"
	case sweep.SeedsIdentical(rs, g, mTTFT) && sweep.SeedsIdentical(rs, g, mComp):
		note = fmt.Sprintf("one replay (all %d seeds identical)", g.Seeds)
	}
	fig.Title += "\n" + note + "; over offered: a request not served (refused or failed) counts as ∞,\nso a percentile p is undefined (▲ at the top) once more than 1 − p of the requests were not served"
	for i, q := range []struct {
		key string
		p   float64
	}{{"p50", 0.5}, {"p95", 0.95}} {
		f := newPanel("TTFT "+q.key+" (ms, log)", g, panelHeight, false)
		if err := ttftPanel(f, rs, g, q.key, q.p, i == 0); err != nil {
			return Figure{}, err
		}
		fig.Panels = append(fig.Panels, Panel{f.p, panelHeight})
	}
	f := newPanel("completeness", g, completenessHeight, true)
	if err := completenessPanel(f, rs, g); err != nil {
		return Figure{}, err
	}
	fig.Panels = append(fig.Panels, Panel{f.p, completenessHeight})
	return fig, nil
}

// ttftPanel draws one TTFT percentile per policy into f: over completed
// and over offered; withLegend puts the legend in it.
func ttftPanel(f *figure, rs []sweep.Result, g sweep.Grid, key string, p float64, withLegend bool) error {
	_, axis := g.Axis()
	f.logY()
	type row struct {
		x int
		s ttftStat
	}
	stats := map[string][]row{}
	lo, hi := math.Inf(1), math.Inf(-1)
	undefined := false
	for _, pol := range g.Policies {
		for _, x := range axis {
			s, ok := ttftStats(rs, g, pol, x, key, p)
			if !ok {
				continue
			}
			stats[pol] = append(stats[pol], row{x, s})
			for _, v := range []float64{s.done, s.offered} {
				if finitePositive(v) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
			undefined = undefined || s.undef > 0
		}
	}
	if math.IsInf(lo, 0) {
		return nil
	}
	span := math.Log10(hi) - math.Log10(lo)
	f.p.Y.Min, f.p.Y.Max = math.Log10(lo)-0.08*span-0.02, math.Log10(hi)+0.08*span+0.02
	top := f.p.Y.Max
	if undefined {
		top = f.p.Y.Max + 0.1*(f.p.Y.Max-f.p.Y.Min)
		f.p.Y.Max = top + 0.06*(f.p.Y.Max-f.p.Y.Min)
	}
	var entries []string
	for i, pol := range g.Policies {
		c := plotutil.Color(i)
		var done plotter.XYs
		var offered []plotter.XYs // runs of defined points
		var cur plotter.XYs
		for _, r := range stats[pol] {
			if finitePositive(r.s.done) {
				done = append(done, f.pt(float64(r.x), r.s.done))
			}
			if r.s.undef > 0 {
				if len(cur) > 0 {
					offered, cur = append(offered, cur), nil
				}
				at := plotter.XY{X: float64(r.x), Y: top}
				sc, err := plotter.NewScatter(plotter.XYs{at})
				if err != nil {
					return err
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
				f.p.Add(sc)
				f.marks = append(f.marks, at)
				what := fmt.Sprintf("%s over offered undefined: %.1f %% not served", key, 100*r.s.notServed)
				if r.s.undef < r.s.seeds {
					what += fmt.Sprintf(" (in %d of %d seeds)", r.s.undef, r.s.seeds)
				}
				f.addLabel(at, pol+": "+what, c, labelSide(i), true)
				continue
			}
			cur = append(cur, f.pt(float64(r.x), r.s.offered))
		}
		if len(cur) > 0 {
			offered = append(offered, cur)
		}
		if len(done) > 0 {
			line, pts, err := plotter.NewLinePoints(done)
			if err != nil {
				return err
			}
			line.Color, pts.Color = c, c
			pts.Shape, pts.Radius = filledGlyphs[i%len(filledGlyphs)], vg.Points(2.5)
			f.p.Add(line, pts)
			f.addLine(done, true)
			f.p.Legend.Add(pol, line, pts)
			entries = append(entries, pol)
		}
		for _, run := range offered {
			line, pts, err := plotter.NewLinePoints(run)
			if err != nil {
				return err
			}
			line.Color, pts.Color = c, c
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			pts.Shape, pts.Radius = hollowGlyphs[i%len(hollowGlyphs)], vg.Points(4)
			f.p.Add(line, pts)
			f.addLine(run, true)
		}
	}
	if withLegend {
		black := color.Black
		solid, err := plotter.NewLine(plotter.XYs{})
		if err != nil {
			return err
		}
		solid.Color = black
		dot, _ := plotter.NewScatter(plotter.XYs{})
		dot.GlyphStyle = draw.GlyphStyle{Color: black, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		dashed, _ := plotter.NewLine(plotter.XYs{})
		dashed.Color, dashed.Dashes = black, []vg.Length{vg.Points(4), vg.Points(3)}
		ring, _ := plotter.NewScatter(plotter.XYs{})
		ring.GlyphStyle = draw.GlyphStyle{Color: black, Radius: vg.Points(4), Shape: draw.RingGlyph{}}
		f.p.Legend.Add("over completed", solid, dot)
		f.p.Legend.Add("over offered (not served = ∞)", dashed, ring)
		entries = append(entries, "over completed", "over offered (not served = ∞)")
		f.placeLegend(entries)
	} else {
		f.p.Legend = plot.NewLegend()
	}
	return nil
}

// labelSide alternates the side policies' labels prefer, so two policies
// at one x label away from each other.
func labelSide(i int) int {
	if i%2 == 1 {
		return -1
	}
	return 1
}

// completenessPanel draws completeness per policy into f, labelling every
// point whose share not served stands out (more than 0.1 points above the
// sweep's smallest, which requests too long for any worker set).
func completenessPanel(f *figure, rs []sweep.Result, g sweep.Grid) error {
	_, axis := g.Axis()
	f.p.Y.Tick.Marker = linTicks{percent: true}
	comp := byPolicyN(rs, g, func(r *sweep.Result) float64 { return r.Summary.Completeness })
	lowest, highest := 1.0, 0.0
	for _, pol := range g.Policies {
		for _, x := range axis {
			if v, ok := comp[pol][x]; ok {
				lowest, highest = math.Min(lowest, v[0]), math.Max(highest, v[0])
			}
		}
	}
	lo := math.Min(math.Floor((lowest-0.01)*100)/100, 0.95)
	f.p.Y.Min, f.p.Y.Max = math.Max(lo, 0), 1+0.08*(1-lo)
	var entries []string
	for i, pol := range g.Policies {
		c := plotutil.Color(i)
		var xys plotter.XYs
		var outl []int
		for _, x := range axis {
			v, ok := comp[pol][x]
			if !ok {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(x), Y: v[0]})
			if v[0] < highest-0.001 {
				outl = append(outl, len(xys)-1)
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color, pts.Color = c, c
		pts.Shape, pts.Radius = filledGlyphs[i%len(filledGlyphs)], vg.Points(2.5)
		f.p.Add(line, pts)
		f.addLine(xys, true)
		entries = append(entries, pol)
		for _, j := range outl {
			f.addLabel(xys[j], fmt.Sprintf("%.1f %% not served", 100*(1-xys[j].Y)), c, labelSide(i), true)
		}
	}
	return nil
}
