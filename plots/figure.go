package plots

import (
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/routesim/routesim/internal/atomicfile"
)

// Figure is one figure and its file stem: a single plot (Plot), or
// panels stacked over one shared x axis under a common title (Panels,
// Title; Plot nil).
type Figure struct {
	Name   string
	Plot   *plot.Plot
	Title  string
	Panels []Panel
}

// Panel is one plot of a stacked figure and its height.
type Panel struct {
	Plot   *plot.Plot
	Height vg.Length
}

// Width and Height are a single-panel figure's size; a stacked figure is
// Width wide and as tall as its title and panels. PNGs are drawn at
// PNGDPI, so every PNG is at least 1600 px wide (20 cm at 204 dpi: 1606).
const (
	Width  = 20 * vg.Centimeter
	Height = 13 * vg.Centimeter
	PNGDPI = 204
)

// Save writes each figure as NAME.png and NAME.svg into dir.
func Save(dir string, figs []Figure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		for _, ext := range []string{"png", "svg"} {
			if err := atomicfile.WriteFile(filepath.Join(dir, f.Name+"."+ext), func(w io.Writer) error {
				return f.Render(w, ext)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Render writes one plot as a single-panel figure, as png or svg.
func Render(w io.Writer, p *plot.Plot, format string) error {
	return Figure{Plot: p}.Render(w, format)
}

// Size is the figure's width and height.
func (f Figure) Size() (w, h vg.Length) {
	if f.Plot != nil {
		return Width, Height
	}
	h = titleStyle().Height(wrapText(titleStyle(), f.Title, Width-2*margin)) + titleGap
	for _, p := range f.Panels {
		h += p.Height
	}
	return Width, h + 2*margin
}

// Render writes the figure as png or svg.
func (f Figure) Render(w io.Writer, format string) error {
	width, height := f.Size()
	switch format {
	case "png":
		// Encoded at png.BestSpeed: at this size, the default level spends
		// three times as long compressing as drawing, for files a fifth
		// smaller.
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI))
		f.draw(draw.New(c))
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, c.Image())
	case "svg":
		c := vgsvg.New(width, height)
		f.draw(draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("plots: unknown image format %q", format)
}

// margin is kept free around a figure's edge; titleGap under its title.
const (
	margin   = 1.5 * vg.Millimeter
	titleGap = 2 * vg.Millimeter
)

func titleStyle() text.Style { return plot.New().Title.TextStyle }

func (f Figure) draw(c draw.Canvas) {
	c = draw.Crop(c, margin, -margin, margin, -margin)
	if f.Plot != nil {
		preparePlot(f.Plot, c.Size().X)
		f.Plot.Draw(c)
		return
	}
	sty := titleStyle()
	title := wrapText(sty, f.Title, c.Size().X)
	if title != "" {
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y + sty.FontExtents().Descent}, title)
		c.Max.Y -= sty.Height(title) + titleGap
	}
	// Each panel's tile, top to bottom; then each is narrowed so every
	// data area spans the same x range on the page (the x axis is shared).
	tiles := make([]draw.Canvas, len(f.Panels))
	top := c.Max.Y
	var left, right vg.Length
	for i, p := range f.Panels {
		preparePlot(p.Plot, c.Size().X)
		tiles[i] = c
		tiles[i].Max.Y, tiles[i].Min.Y = top, top-p.Height
		top -= p.Height
		d := p.Plot.DataCanvas(tiles[i])
		left = max(left, d.Min.X-tiles[i].Min.X)
		right = max(right, tiles[i].Max.X-d.Max.X)
	}
	for i, p := range f.Panels {
		d := p.Plot.DataCanvas(tiles[i])
		t := draw.Crop(tiles[i], left-(d.Min.X-tiles[i].Min.X), -(right - (tiles[i].Max.X - d.Max.X)), 0, 0)
		p.Plot.Draw(t)
	}
}

// preparePlot readies a plot for drawing width wide: flat axes widened
// and its title wrapped to the width.
func preparePlot(p *plot.Plot, width vg.Length) {
	widenFlat(&p.X)
	widenFlat(&p.Y)
	p.Title.Text = wrapText(p.Title.TextStyle, p.Title.Text, width)
}

// wrapText breaks each line of s that is wider than width, at the last
// " · ", "; ", ", " or space that keeps it within the width, so no title
// is clipped at the figure's sides.
func wrapText(sty text.Style, s string, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for sty.Width(line) > width {
			cut := -1
			for _, sep := range []string{" · ", "; ", ", ", " "} {
				for i := strings.LastIndex(line, sep); i > 0; i = strings.LastIndex(line[:i], sep) {
					if sty.Width(line[:i+len(strings.TrimRight(sep, " "))]) <= width {
						cut = i
						break
					}
				}
				if cut > 0 {
					out = append(out, line[:cut+len(strings.TrimRight(sep, " "))])
					line = strings.TrimLeft(line[cut+len(strings.TrimRight(sep, " ")):], " ")
					break
				}
			}
			if cut <= 0 {
				break // one word wider than the figure: left as it is
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// widenFlat gives an axis whose values are all equal up to rounding (every
// seed of a point alike, a band of zero width) a range of ±5 % around
// them, so it is drawn with a labelled value instead of a few ULPs.
func widenFlat(a *plot.Axis) {
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || !(a.Max >= a.Min) || !flat(a.Min, a.Max) {
		return
	}
	mid := (a.Min + a.Max) / 2
	d := 0.05 * math.Abs(mid)
	if d == 0 {
		d = 1
	}
	a.Min, a.Max = mid-d, mid+d
}
