package plots

import (
	"image/color"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/routesim/routesim/sweep"
)

// seedsAt returns every seed's result at (policy, axis value x), by seed.
func seedsAt(rs []sweep.Result, g sweep.Grid, pol string, x int) []*sweep.Result {
	var out []*sweep.Result
	for i := range rs {
		r := &rs[i]
		if r.Point.Policy == pol && g.AxisValue(r.Point) == x {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Point.Seed < out[j].Point.Seed })
	return out
}

// spread is the median and range of one quantity over seeds.
type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return spread{med, s[0], s[n-1]}
}

// medianBand draws a median line through xs's spreads with a translucent
// band from their minimum to maximum (the seeds' range); it returns the
// line for the legend.
func medianBand(f *figure, xs []float64, ys []spread, c color.Color, dashes int) (*plotter.Line, error) {
	var mid, band plotter.XYs
	for i := range xs {
		mid = append(mid, f.pt(xs[i], ys[i].med))
		band = append(band, f.pt(xs[i], ys[i].lo))
	}
	for i := len(xs) - 1; i >= 0; i-- {
		band = append(band, f.pt(xs[i], ys[i].hi))
	}
	if len(xs) > 1 {
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, err
		}
		poly.Color = translucent(c)
		poly.LineStyle.Width = 0
		f.p.Add(poly)
	}
	line, err := plotter.NewLine(mid)
	if err != nil {
		return nil, err
	}
	line.Color = c
	line.Dashes = plotutil.Dashes(dashes)
	f.p.Add(line)
	f.add(mid, band)
	return line, nil
}

func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
}
