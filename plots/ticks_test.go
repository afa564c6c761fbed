package plots

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/routesim/routesim/sweep"
)

// labelValue reads a tick label back as the value it names.
func labelValue(label string, percent bool) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(label, "%"), 64)
	if err != nil {
		return 0, false
	}
	if percent {
		v /= 100
	}
	return v, true
}

func TestTickersLabelTheValueTheyMark(t *testing.T) {
	cases := []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		pct    bool
		min    int // labelled ticks at least
	}{
		{"completeness up to 1.01", linTicks{percent: true}, 0.95, 1.01, true, 4},
		{"completeness from 0.908", linTicks{percent: true}, 0.908, 1.003, true, 4},
		{"share around 0", linTicks{percent: true}, -0.0001, 1, true, 4},
		{"N 2..16", linTicks{integer: true}, 2, 16, false, 7},
		{"N 2..3", linTicks{integer: true}, 2, 3, false, 2},
		{"fractional", linTicks{}, 0.0012, 0.0019, false, 3},
		{"log wide", logTicks{}, 130, 10859, false, 5},
		{"log narrow", logTicks{}, 66, 160, false, 3},
		{"log very narrow", logTicks{}, 101, 104, false, 3},
		// A mean over seeds that all gave the same value, up to rounding:
		// once a hang (steps of a few ULPs counted past 2^53).
		{"flat up to rounding", linTicks{}, 548.48, ulps(548.48, 4), false, 1},
		{"flat percent", linTicks{percent: true}, 0.85, ulps(0.85, 3), true, 1},
		{"flat log", logTicks{}, 548.48, ulps(548.48, 4), false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			labelled := 0
			for _, tk := range c.ticker.Ticks(c.lo, c.hi) {
				if tk.Value < c.lo-1e-9 || tk.Value > c.hi+1e-9 {
					t.Errorf("tick %v outside [%v, %v]", tk.Value, c.lo, c.hi)
				}
				if tk.Label == "" {
					continue
				}
				labelled++
				v, ok := labelValue(tk.Label, c.pct)
				if !ok || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(v)) || strings.HasPrefix(tk.Label, "-0") && v == 0 {
					t.Errorf("label %q at %v", tk.Label, tk.Value)
				}
			}
			if labelled < c.min {
				t.Errorf("%d labelled ticks, want ≥ %d", labelled, c.min)
			}
		})
	}
}

// ulps is v moved up by n representable steps.
func ulps(v float64, n int) float64 {
	for ; n > 0; n-- {
		v = math.Nextafter(v, math.Inf(1))
	}
	return v
}

// TestRenderWidensAFlatAxis: data equal up to rounding are drawn on a
// range around their value, not on a few ULPs.
func TestRenderWidensAFlatAxis(t *testing.T) {
	p := plot.New()
	line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 548.48}, {X: 2, Y: ulps(548.48, 4)}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(line)
	p.Y.Tick.Marker = linTicks{}
	var buf bytes.Buffer
	if err := Render(&buf, p, "svg"); err != nil {
		t.Fatal(err)
	}
	if p.Y.Max-p.Y.Min < 0.05*548.48 || p.Y.Min > 548.48 || p.Y.Max < 548.48 {
		t.Errorf("y axis [%v, %v]: want a range around 548.48", p.Y.Min, p.Y.Max)
	}
	if !strings.Contains(buf.String(), ">540<") || !strings.Contains(buf.String(), ">560<") {
		t.Errorf("no round tick labels either side of 548.48 in the SVG")
	}
}

var (
	svgText = regexp.MustCompile(`<text x="([-0-9.e]+)" y="([-0-9.e]+)" transform="scale\(1, -1\)"\s*style="[^"]*font-size:([0-9.]+)px">([^<]*)</text>`)
	svgLine = regexp.MustCompile(`<path d="M([-0-9.e]+),([-0-9.e]+)L([-0-9.e]+),([-0-9.e]+)" style="fill:none;stroke:#000000;stroke-width:0.5" />`)
)

// TestSVGTickLabelsSitAtTheirValues reads each figure's SVG and checks
// that every tick label is drawn where the value it names falls on the
// axis (the axis line spans Min to Max; log axes plot log10).
func TestSVGTickLabelsSitAtTheirValues(t *testing.T) {
	rs, g := fixture()
	m, _ := sweep.MetricByName("ttft-p50", 0)
	figs, err := All(rs, g, m, Meta{Trace: "fixture", GPU: "GPU", Model: "Model", ProfileKind: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// The case that once put "1" at 1.01: every point at completeness 1.
	full := append([]sweep.Result(nil), rs...)
	for i := range full {
		full[i].Summary.Completeness = 1
	}
	lc, err := LatencyVsCompleteness(full, g, Meta{Trace: "all complete"})
	if err != nil {
		t.Fatal(err)
	}
	figs = append(figs, Figure{Name: "all-complete", Plot: lc})
	rs, g = rateFixture()
	fr, err := Frontier(rs, g, 2, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	figs = append(figs, Figure{Name: "frontier", Plot: fr})
	for _, f := range figs {
		if f.Plot != nil {
			t.Run(f.Name, func(t *testing.T) { checkSVGTicks(t, f.Plot) })
			continue
		}
		for i, p := range f.Panels {
			t.Run(fmt.Sprintf("%s/panel%d", f.Name, i), func(t *testing.T) { checkSVGTicks(t, p.Plot) })
		}
	}
}

func checkSVGTicks(t *testing.T, p *plot.Plot) {
	var buf bytes.Buffer
	if err := Render(&buf, p, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	// The axis lines: the longest black horizontal and vertical lines.
	var xAxis, yAxis [4]float64
	var ticksY []float64 // y of horizontal tick marks (on the y axis)
	for _, mm := range svgLine.FindAllStringSubmatch(svg, -1) {
		var l [4]float64
		for i := range l {
			l[i], _ = strconv.ParseFloat(mm[i+1], 64)
		}
		switch {
		case l[1] == l[3] && l[2]-l[0] > xAxis[2]-xAxis[0]:
			xAxis = l
		case l[0] == l[2] && l[3]-l[1] > yAxis[3]-yAxis[1]:
			yAxis = l
		}
		if l[1] == l[3] {
			ticksY = append(ticksY, l[1])
		}
	}
	if xAxis[2] == 0 || yAxis[3] == 0 {
		t.Fatal("no axis lines found in the SVG")
	}
	pos := func(a *plot.Axis, v float64) float64 {
		if _, log := a.Tick.Marker.(expTicks); log {
			v = math.Log10(v)
		}
		if n, ok := a.Tick.Marker.(ninesTicks); ok {
			v = nines(v, n.floor)
		}
		return (v - a.Min) / (a.Max - a.Min)
	}
	pctX, pctY := isPercent(p.X.Tick.Marker), isPercent(p.Y.Tick.Marker)
	_, xBare := p.X.Tick.Marker.(unlabelled)
	size := p.X.Tick.Label.Font.Size.Points()
	nx, ny := 0, 0
	yOffset := math.NaN()
	for _, mm := range svgText.FindAllStringSubmatch(svg, -1) {
		fs, _ := strconv.ParseFloat(mm[3], 64)
		if fs != size {
			continue
		}
		x, _ := strconv.ParseFloat(mm[1], 64)
		y, _ := strconv.ParseFloat(mm[2], 64)
		y = -y // the text is drawn under scale(1, -1)
		label := mm[4]
		switch {
		case y < xAxis[1]: // below the x axis: an x tick label
			v, ok := labelValue(label, pctX)
			if !ok {
				t.Errorf("x tick label %q is not a number", label)
				continue
			}
			centre := x + p.X.Tick.Label.Width(label).Points()/2
			want := xAxis[0] + pos(&p.X, v)*(xAxis[2]-xAxis[0])
			if math.Abs(centre-want) > 1 {
				t.Errorf("x label %q centred at %.2f, its value is at %.2f", label, centre, want)
			}
			nx++
		case x < yAxis[0]: // left of the y axis: a y tick label
			v, ok := labelValue(label, pctY)
			if !ok {
				t.Errorf("y tick label %q is not a number", label)
				continue
			}
			want := yAxis[1] + pos(&p.Y, v)*(yAxis[3]-yAxis[1])
			if !nearAny(ticksY, want, 0.5) {
				t.Errorf("y label %q: no tick mark where its value falls (%.2f)", label, want)
			}
			if math.IsNaN(yOffset) {
				yOffset = want - y
			} else if math.Abs(want-y-yOffset) > 0.5 {
				t.Errorf("y label %q drawn %.2f from its value's height, others %.2f", label, want-y, yOffset)
			}
			ny++
		}
	}
	if nx < 3 && !xBare || ny < 3 || xBare && nx > 0 {
		t.Errorf("found %d x and %d y tick labels, want ≥ 3 each", nx, ny)
	}
}

func isPercent(m plot.Ticker) bool {
	if _, ok := m.(ninesTicks); ok {
		return true
	}
	l, ok := m.(linTicks)
	return ok && l.percent
}

func nearAny(xs []float64, v, tol float64) bool {
	for _, x := range xs {
		if math.Abs(x-v) <= tol {
			return true
		}
	}
	return false
}

// TestLegendAvoidsData: the legend goes to a corner without data; when
// there is none, the y range grows so the top is free.
func TestLegendAvoidsData(t *testing.T) {
	f := newFigure("t", "x", "y", Meta{})
	// Data along the top edge and the bottom-left: the free corner is
	// bottom-right.
	xys := plotter.XYs{{X: 0, Y: 10}, {X: 0.5, Y: 10}, {X: 1, Y: 10}, {X: 0, Y: 0}, {X: 0.1, Y: 1}}
	s, _ := plotter.NewScatter(xys)
	f.p.Add(s)
	f.add(xys)
	f.placeLegend([]string{"a", "b"})
	if f.p.Legend.Top || f.p.Legend.Left {
		t.Errorf("legend top=%v left=%v, want bottom-right", f.p.Legend.Top, f.p.Legend.Left)
	}
	// Data everywhere: headroom on top.
	g := newFigure("t", "x", "y", Meta{})
	var all plotter.XYs
	for i := 0; i <= 20; i++ {
		for j := 0; j <= 20; j++ {
			all = append(all, plotter.XY{X: float64(i), Y: float64(j)})
		}
	}
	s, _ = plotter.NewScatter(all)
	g.p.Add(s)
	g.add(all)
	g.placeLegend([]string{"a", "b", "c"})
	if !g.p.Legend.Top || g.p.Y.Max <= 20 {
		t.Errorf("crowded: legend top=%v, y max %v (want raised above 20)", g.p.Legend.Top, g.p.Y.Max)
	}
}
