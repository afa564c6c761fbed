package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A point label is placed when the figure is drawn, where the page
// geometry is known exactly: beside its point, on its preferred side, or
// failing that moved up or down (with a thin leader line back to the
// point) until its box overlaps no other label, no marker, no line of the
// figure, not the legend and not the data area's edge. A label that finds
// no such place within reach is left out rather than drawn over another.

// pointLabel is one label: its text, the plotted coordinates of its
// point, its colour and the side it prefers (+1 right, −1 left).
type pointLabel struct {
	at    plotter.XY
	text  string
	color color.Color
	side  int
	// lead lets the label move away from its point's height, with a
	// leader line; without it the label is drawn beside, above or below
	// its point or not at all.
	lead bool
}

// labelLayer is a plotter that draws a figure's point labels; add it
// last, after everything it must avoid.
type labelLayer struct {
	f      *figure
	labels []pointLabel
	size   vg.Length
	// placed and dropped record the last drawing: the boxes drawn, and
	// how many labels found no place.
	placed      []vg.Rectangle
	dropped     int
	droppedMust int
}

// addLabel queues a label for point (x, y) in plotted coordinates.
func (f *figure) addLabel(at plotter.XY, s string, c color.Color, side int, lead bool) {
	if f.labels == nil {
		f.labels = &labelLayer{f: f, size: vg.Points(9)}
		f.p.Add(f.labels)
	}
	f.labels.labels = append(f.labels.labels, pointLabel{at, s, c, side, lead})
}

// markRadius is the room a marker takes around its point.
const markRadius = vg.Length(4)

// Plot implements plot.Plotter.
func (l *labelLayer) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	page := func(xy plotter.XY) vg.Point { return vg.Point{X: trX(xy.X), Y: trY(xy.Y)} }
	var marks []vg.Rectangle
	for _, xy := range l.f.marks {
		pt := page(xy)
		marks = append(marks, vg.Rectangle{Min: pt.Sub(vg.Point{X: markRadius, Y: markRadius}), Max: pt.Add(vg.Point{X: markRadius, Y: markRadius})})
	}
	var segs [][2]vg.Point
	for _, line := range l.f.lines {
		for i := 1; i < len(line); i++ {
			segs = append(segs, [2]vg.Point{page(line[i-1]), page(line[i])})
		}
	}
	legend := legendRect(c, p, l.f.entries)
	l.placed, l.dropped, l.droppedMust = nil, 0, 0
	sty := text.Style{Font: p.Title.TextStyle.Font, Handler: p.Title.TextStyle.Handler}
	sty.Font.Size = l.size
	gap := vg.Points(3)
	h := sty.Height("0")
	inside := func(r vg.Rectangle) bool {
		return r.Min.X >= c.Min.X && r.Max.X <= c.Max.X && r.Min.Y >= c.Min.Y && r.Max.Y <= c.Max.Y
	}
	free := func(r vg.Rectangle, crossLines bool) bool {
		if !inside(r) || legend != nil && overlaps(r, *legend) {
			return false
		}
		for _, o := range l.placed {
			if overlaps(r, o) {
				return false
			}
		}
		for _, m := range marks {
			if overlaps(r, m) {
				return false
			}
		}
		if !crossLines {
			for _, s := range segs {
				if segmentHits(s[0], s[1], r) {
					return false
				}
			}
		}
		return true
	}
	// Labels that must be drawn are placed first; the others only where
	// no other point lies within half a label's height of their box, so a
	// label is never ambiguous between two points.
	order := make([]pointLabel, 0, len(l.labels))
	for _, must := range []bool{true, false} {
		for _, lb := range l.labels {
			if lb.lead == must {
				order = append(order, lb)
			}
		}
	}
	for _, lb := range order {
		pt := page(lb.at)
		w := sty.Width(lb.text)
		box := func(side int, dy float64) vg.Rectangle {
			y := pt.Y - h/2 + vg.Length(dy)*h*1.15
			x := pt.X + markRadius + gap
			if side < 0 {
				x = pt.X - markRadius - gap - w
			}
			return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
		}
		side := lb.side
		if side == 0 {
			side = 1
		}
		var cands []vg.Rectangle
		cands = append(cands, box(side, 0), box(-side, 0))
		above := vg.Rectangle{Min: vg.Point{X: pt.X - w/2, Y: pt.Y + markRadius + gap/2}}
		above.Max = above.Min.Add(vg.Point{X: w, Y: h})
		below := above
		below.Min.Y, below.Max.Y = pt.Y-markRadius-gap/2-h, pt.Y-markRadius-gap/2
		cands = append(cands, above, below)
		for k := 1; k <= 12 && lb.lead; k++ {
			for _, s := range []int{side, -side} {
				cands = append(cands, box(s, float64(k)), box(s, -float64(k)))
			}
		}
		chosen, ok := vg.Rectangle{}, false
		for _, crossLines := range []bool{false, true} {
			for _, r := range cands {
				if !lb.lead {
					wide := r
					wide.Min.Y, wide.Max.Y = r.Min.Y-h/2, r.Max.Y+h/2
					wide.Min.X, wide.Max.X = min(r.Min.X, pt.X), max(r.Max.X, pt.X)
					if crowded(wide, pt, marks) {
						continue
					}
				}
				if free(r, crossLines) {
					chosen, ok = r, true
					break
				}
			}
			if ok {
				break
			}
		}
		if !ok {
			l.dropped++
			if lb.lead {
				l.droppedMust++
			}
			continue
		}
		if chosen.Min.Y > pt.Y+markRadius || chosen.Max.Y < pt.Y-markRadius {
			// Moved off its point's height: a leader line to the box.
			end := vg.Point{X: chosen.Min.X, Y: (chosen.Min.Y + chosen.Max.Y) / 2}
			if chosen.Max.X < pt.X {
				end.X = chosen.Max.X
			} else if chosen.Min.X < pt.X {
				end = vg.Point{X: pt.X, Y: chosen.Min.Y}
				if chosen.Max.Y < pt.Y {
					end.Y = chosen.Max.Y
				}
			}
			c.StrokeLine2(draw.LineStyle{Color: lb.color, Width: vg.Points(0.4)}, pt.X, pt.Y, end.X, end.Y)
		}
		s := sty
		s.Color = lb.color
		off := sty.Rectangle(lb.text).Min
		c.FillText(s, chosen.Min.Sub(off), lb.text)
		l.placed = append(l.placed, chosen)
	}
}

// legendRect is where gonum draws the legend of entries in data canvas c
// (its own canvas is the data area before padding: a margin covers the
// difference); nil without entries.
func legendRect(c draw.Canvas, p *plot.Plot, entries []string) *vg.Rectangle {
	if len(entries) == 0 {
		return nil
	}
	sty := p.Legend.TextStyle
	var w, eh vg.Length
	for _, e := range entries {
		w = max(w, sty.Width(" "+e))
		eh = max(eh, sty.Rectangle(e).Max.Y)
	}
	w += p.Legend.ThumbnailWidth + sty.Width(" ")
	h := vg.Length(len(entries))*(eh+p.Legend.Padding) + sty.FontExtents().Descent
	const pad = vg.Length(8)
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X - pad, Y: c.Min.Y - pad}}
	if !p.Legend.Left {
		r.Min.X = c.Max.X - w - pad
	}
	if p.Legend.Top {
		r.Min.Y = c.Max.Y - h - pad
	}
	r.Min = r.Min.Add(vg.Point{X: p.Legend.XOffs, Y: p.Legend.YOffs})
	r.Max = r.Min.Add(vg.Point{X: w + 2*pad, Y: h + 2*pad})
	return &r
}

// crowded says whether any marker but the one at pt lies in r.
func crowded(r vg.Rectangle, pt vg.Point, marks []vg.Rectangle) bool {
	for _, m := range marks {
		c := vg.Point{X: (m.Min.X + m.Max.X) / 2, Y: (m.Min.Y + m.Max.Y) / 2}
		if c == pt {
			continue
		}
		if c.X >= r.Min.X && c.X <= r.Max.X && c.Y >= r.Min.Y && c.Y <= r.Max.Y {
			return true
		}
	}
	return false
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// segmentHits says whether the segment from p to q crosses rectangle r
// (Liang–Barsky clipping).
func segmentHits(p, q vg.Point, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(q.X-p.X), float64(q.Y-p.Y)
	for _, e := range [4][2]float64{
		{-dx, float64(p.X - r.Min.X)}, {dx, float64(r.Max.X - p.X)},
		{-dy, float64(p.Y - r.Min.Y)}, {dy, float64(r.Max.Y - p.Y)},
	} {
		if e[0] == 0 {
			if e[1] < 0 {
				return false
			}
			continue
		}
		t := e[1] / e[0]
		if e[0] < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}
