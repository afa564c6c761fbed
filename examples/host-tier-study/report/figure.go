package main

import (
	"bytes"
	"fmt"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/routesim/routesim/plots"
)

// panel is one stacked plot of the figure: what it draws of a row.
type panel struct {
	label string
	log   bool
	pct   bool
	value func(row) float64
}

var panels = []panel{
	{"TTFT p50 (ms)", true, false, func(r row) float64 { return r.TTFTP50 }},
	{"TTFT p90 (ms)", true, false, func(r row) float64 { return r.TTFTP90 }},
	{"prefix hit rate", false, true, func(r row) float64 { return r.HitRate }},
	{"requests/s", false, false, func(r row) float64 { return r.ReqPerS }},
	{"completeness", false, true, func(r row) float64 { return r.Completeness }},
}

// drawFigure draws every panel against concurrency, one curve per arm
// (colour) and policy (round-robin dashed, others solid), means over
// seeds, and writes it as a PNG.
func drawFigure(path string, rows []row) error {
	type series struct{ arm, pol string }
	var order []series
	seen := map[series]bool{}
	armIdx := map[string]int{}
	for _, r := range rows {
		s := series{r.Arm, r.Policy}
		if !seen[s] {
			seen[s] = true
			order = append(order, s)
		}
		if _, ok := armIdx[r.Arm]; !ok {
			armIdx[r.Arm] = len(armIdx)
		}
	}
	fig := plots.Figure{Title: "Closed-loop sessions on 4 × A100-SXM4-40GB, Qwen3-8B (calibrated): " +
		"per-worker CPU KV tier (vLLM --kv-offloading-size) × routing · means of the seeds"}
	for pi, pn := range panels {
		p := plot.New()
		p.Y.Label.Text = pn.label
		p.X.Label.Text = "concurrent users"
		if pn.log {
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = logTicks{}
		}
		if pn.pct {
			p.Y.Tick.Marker = pctTicks{}
		}
		p.X.Scale = plot.LogScale{} // concurrency doubles: equal steps
		p.X.Tick.Marker = concTicks(rows)
		for _, s := range order {
			var xy plotter.XYs
			for _, r := range rows {
				if r.Arm == s.arm && r.Policy == s.pol {
					xy = append(xy, plotter.XY{X: float64(r.Concurrency), Y: pn.value(r)})
				}
			}
			l, sc, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("%s %s %s: %w", pn.label, s.arm, s.pol, err)
			}
			col := plotutil.Color(armIdx[s.arm])
			l.Color, sc.Color = col, col
			// Earlier arms drawn wider, so an arm that coincides with
			// one before it (a tier too small to matter) leaves it visible.
			l.Width = vg.Points(math.Max(1.2, 3.5-1.1*float64(armIdx[s.arm])))
			sc.Shape = draw.CircleGlyph{}
			if s.pol == "round-robin" {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				sc.Shape = draw.BoxGlyph{}
			}
			p.Add(l, sc)
			if pi == 0 {
				p.Legend.Add(s.arm+" · "+s.pol, l, sc)
			}
		}
		p.Legend.Top = true
		p.Legend.Left = true
		fig.Panels = append(fig.Panels, plots.Panel{Plot: p, Height: 6 * vg.Centimeter})
	}
	fig.Panels[0].Height = 10 * vg.Centimeter // room for the legend
	var buf bytes.Buffer
	if err := fig.Render(&buf, "png"); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// concTicks labels exactly the concurrencies the rows hold.
type concTicks []row

// Ticks implements plot.Ticker.
func (t concTicks) Ticks(lo, hi float64) []plot.Tick {
	seen := map[int]bool{}
	var out []plot.Tick
	for _, r := range t {
		if c := r.Concurrency; !seen[c] && float64(c) >= lo && float64(c) <= hi {
			seen[c] = true
			out = append(out, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
		}
	}
	return out
}

// pctTicks labels a fraction axis in percent, every 10 or 20 points.
type pctTicks struct{}

// Ticks implements plot.Ticker.
func (pctTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 0.1
	if hi-lo > 0.5 {
		step = 0.2
	} else if hi-lo < 0.15 {
		step = 0.02
	}
	var out []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+1e-9; k++ {
		v := k * step
		out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f%%", 100*v)})
	}
	return out
}

// logTicks labels a log axis at 1, 2 and 5 × 10^k.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = fmt.Sprintf("%g", v)
			}
			out = append(out, t)
		}
	}
	return out
}
