package plots

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// figure is a plot under construction with every data point drawn on it,
// so the legend can be put where it covers none.
//
// A log axis is drawn as a linear axis over log10 of the values, its
// ticks labelled with the values themselves (expTicks): gonum's LogScale
// pads the data area for the axis label as if the label sat at the
// arithmetic midpoint of the range, which on a log axis shrinks the plot
// by a third. Every coordinate goes through pt.
type figure struct {
	p          *plot.Plot
	pts        []plotter.XY
	xlog, ylog bool
	// marks and lines are the drawn markers and polylines (plotted
	// coordinates) point labels keep clear of; entries the legend's.
	marks   []plotter.XY
	lines   []plotter.XYs
	entries []string
	labels  *labelLayer
	// dataW, dataH approximate the data area's size in points.
	dataW, dataH float64
}

// pt is the plotted position of data point (x, y).
func (f *figure) pt(x, y float64) plotter.XY {
	if f.xlog {
		x = math.Log10(x)
	}
	if f.ylog {
		y = math.Log10(y)
	}
	return plotter.XY{X: x, Y: y}
}

// logY makes the y axis logarithmic.
func (f *figure) logY() {
	f.ylog = true
	f.p.Y.Tick.Marker = expTicks{span: vg.Points(f.dataH)}
}

// logX makes the x axis logarithmic.
func (f *figure) logX() {
	f.xlog = true
	f.p.X.Tick.Marker = expTicks{span: vg.Points(f.dataW), gap: vg.Points(40)}
}

// addLine records a drawn polyline, its vertices marked or not.
func (f *figure) addLine(xys plotter.XYs, marked bool) {
	f.lines = append(f.lines, xys)
	if marked {
		f.marks = append(f.marks, xys...)
	}
	f.pts = append(f.pts, xys...)
}

func (f *figure) add(xys ...plotter.XYs) {
	for _, xy := range xys {
		f.pts = append(f.pts, xy...)
	}
}

// Approximate size of a legend row and character, for placing the legend.
const (
	legendRow  = 14.0 // pt per entry
	legendChar = 6.0  // pt per character of the longest entry
	legendIcon = 30.0 // pt for the line/glyph sample and padding
)

// legendBox is the legend's approximate width and height as shares of
// the data area.
func (f *figure) legendBox(entries []string) (w, h float64) {
	longest := 0
	for _, e := range entries {
		longest = max(longest, len([]rune(e)))
	}
	w = math.Min(0.9, (legendIcon+legendChar*float64(longest))/f.dataW)
	h = math.Min(0.9, (legendRow*float64(len(entries))+4)/f.dataH)
	return w, h
}

// pointsIn counts the data points inside a w × h box (shares of the data
// area, with a small margin) at the left or right edge, its bottom at
// bottom.
func (f *figure) pointsIn(left bool, bottom, w, h float64) int {
	n := 0
	for _, xy := range f.pts {
		x, y := f.p.X.Norm(xy.X), f.p.Y.Norm(xy.Y)
		if math.IsNaN(x) || math.IsNaN(y) {
			continue
		}
		inX := x >= 1-w-0.02 && x <= 1.02
		if left {
			inX = x <= w+0.02 && x >= -0.02
		}
		if inX && y >= bottom-0.02 && y <= bottom+h+0.02 {
			n++
		}
	}
	return n
}

// placeLegend puts the legend in the corner of the data area that covers
// the fewest data points; when every corner holds some, it raises the top
// of the y range until the top corners are clear and puts it there.
func (f *figure) placeLegend(entries []string) {
	p := f.p
	if len(entries) == 0 {
		return
	}
	f.entries = entries
	w, h := f.legendBox(entries)
	type corner struct{ top, left bool }
	count := func(c corner) int {
		bottom := 0.0
		if c.top {
			bottom = 1 - h
		}
		return f.pointsIn(c.left, bottom, w, h)
	}
	best, bestN := corner{true, false}, math.MaxInt
	for _, c := range []corner{{true, false}, {true, true}, {false, false}, {false, true}} {
		if n := count(c); n < bestN {
			best, bestN = c, n
		}
	}
	if bestN > 0 {
		best = corner{true, false}
		// Headroom: the data must end below 1 − h of the new range.
		p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/(1-h-0.03)
	}
	p.Legend.Top, p.Legend.Left = best.top, best.left
	p.Legend.XOffs, p.Legend.YOffs = 0, 0
	if !best.left {
		p.Legend.XOffs = -vg.Points(4)
	}
}

// placeLegendInside is placeLegend for a figure whose y range must not
// grow (a share bounded by 100 %): it also considers the middle of the
// left and right edges, and takes the spot covering the fewest points.
func (f *figure) placeLegendInside(entries []string) {
	p := f.p
	if len(entries) == 0 {
		return
	}
	f.entries = entries
	w, h := f.legendBox(entries)
	type spot struct {
		left   bool
		bottom float64 // normalised y of the legend's bottom edge
	}
	count := func(s spot) int { return f.pointsIn(s.left, s.bottom, w, h) }
	best, bestN := spot{false, 1 - h}, math.MaxInt
	for _, s := range []spot{{false, 1 - h}, {true, 1 - h}, {false, 0}, {true, 0}, {false, 0.5 - h/2}, {true, 0.5 - h/2}} {
		if n := count(s); n < bestN {
			best, bestN = s, n
		}
	}
	p.Legend.Top, p.Legend.Left = false, best.left
	p.Legend.XOffs, p.Legend.YOffs = 0, vg.Points(best.bottom*f.dataH)
	if !best.left {
		p.Legend.XOffs = -vg.Points(4)
	}
}
