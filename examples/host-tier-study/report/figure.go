package main

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

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

// drawFigure draws a grid of small multiples, one row per panel (metric)
// and one column per arm, each with a curve per policy against
// concurrency (means over seeds); a row shares its y range. Written as a
// PNG at the plots package's resolution.
func drawFigure(path, workload string, rows []row) error {
	var arms, pols []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen["a"+r.Arm] {
			seen["a"+r.Arm] = true
			arms = append(arms, r.Arm)
		}
		if !seen["p"+r.Policy] {
			seen["p"+r.Policy] = true
			pols = append(pols, r.Policy)
		}
	}
	sort.SliceStable(pols, func(i, j int) bool { return policyLess(pols[i], pols[j]) })
	grid := make([][]*plot.Plot, len(panels))
	leg := plot.NewLegend()
	leg.Top = true
	for pi, pn := range panels {
		lo, hi := math.Inf(1), math.Inf(-1)
		for ai, arm := range arms {
			p := plot.New()
			if ai == 0 {
				p.Y.Label.Text = pn.label
			}
			if pi == len(panels)-1 {
				p.X.Label.Text = "concurrent users"
			}
			p.X.Scale = plot.LogScale{} // concurrency doubles: equal steps
			p.X.Tick.Marker = concTicks(rows)
			if pn.log {
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = logTicks{}
			}
			if pn.pct {
				p.Y.Tick.Marker = pctTicks{}
			}
			for k, pol := range pols {
				var xy plotter.XYs
				for _, r := range rows {
					if r.Arm == arm && r.Policy == pol {
						xy = append(xy, plotter.XY{X: float64(r.Concurrency), Y: pn.value(r)})
					}
				}
				if len(xy) == 0 {
					continue
				}
				l, sc, err := plotter.NewLinePoints(xy)
				if err != nil {
					return fmt.Errorf("%s %s %s: %w", pn.label, arm, pol, err)
				}
				l.Color, sc.Color = plotutil.Color(k), plotutil.Color(k)
				l.Width = vg.Points(1.5)
				l.Dashes = plotutil.Dashes(k)
				sc.Shape = plotutil.Shape(k)
				p.Add(l, sc)
				if pi == 0 && ai == 0 {
					leg.Add(pol, l, sc)
				}
			}
			lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
			grid[pi] = append(grid[pi], p)
		}
		for _, p := range grid[pi] {
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
	const rowH, titleH, headH = 5.2 * vg.Centimeter, 1.8 * vg.Centimeter, 0.7 * vg.Centimeter
	// 10 cm per arm keeps the concurrency labels of a column apart.
	w, h := max(30*vg.Centimeter, 10*vg.Centimeter*vg.Length(len(arms))), titleH+headH+vg.Length(len(panels))*rowH
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plots.PNGDPI))
	dc := draw.New(c)
	title := plot.New().Title.TextStyle
	title.XAlign, title.YAlign = draw.XLeft, draw.YTop
	dc.FillText(title, vg.Point{X: 3 * vg.Millimeter, Y: h - 2*vg.Millimeter},
		"Closed-loop sessions ("+workload+") on 4 × A100-SXM4-40GB, Qwen3-8B (calibrated profile)\n"+
			"one column per KV-tier arm (arms.tsv: vLLM's CPU tier or Dynamo KVBM per worker), one curve per router; means of the seeds")
	leg.Draw(draw.Crop(dc, 0, -3*vg.Millimeter, h-titleH, -vg.Millimeter))
	body := draw.Crop(dc, 0, 0, 0, -titleH-headH)
	tiles := draw.Tiles{Rows: len(panels), Cols: len(arms), PadX: vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := plot.Align(grid, tiles, body)
	head := plot.New().Title.TextStyle
	head.XAlign, head.YAlign = draw.XCenter, draw.YTop
	for i := range grid {
		for j, p := range grid[i] {
			p.Draw(canvases[i][j])
			if i == 0 { // column header over the data area, one baseline for all
				d := p.DataCanvas(canvases[i][j])
				dc.FillText(head, vg.Point{X: (d.Min.X + d.Max.X) / 2, Y: h - titleH}, arms[j])
			}
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, c.Image()); err != nil {
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

// logTicks labels a log axis at 1, 2 and 5 × 10^k, or only at powers
// of ten when it spans more than two decades.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	wide := hi/lo > 300
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || !wide && (m == 2 || m == 5) {
				t.Label = fmt.Sprintf("%g", v)
			}
			out = append(out, t)
		}
	}
	return out
}
