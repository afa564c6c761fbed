package plots

import (
	"bytes"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// rateFixture is fixture() at three rate scales, load raising TTFTs and
// kv-admission's refusals, so the frontier figures are drawn.
func rateFixture() ([]sweep.Result, sweep.Grid) {
	base, g := fixture()
	g.RateScales = []float64{0.5, 1, 1.5}
	var rs []sweep.Result
	for _, rate := range g.RateScales {
		for _, r := range base {
			r.Point.RateScale = rate
			r.Key = r.Point.Key()
			r.Summary.Completeness = 1 - (1-r.Summary.Completeness)*rate
			ttft := make([]float64, len(r.TTFTMs))
			for i, t := range r.TTFTMs {
				ttft[i] = t
				if t > 0 {
					ttft[i] = t * rate
				}
			}
			r.TTFTMs = ttft
			r.Summary.TTFTMs = distOf(ttft)
			rs = append(rs, r)
		}
	}
	return rs, g
}

// allFigures is every figure of the fixtures: one rate scale and three.
func allFigures(t *testing.T) []Figure {
	t.Helper()
	m, _ := sweep.MetricByName("ttft-p50", 0)
	var out []Figure
	for _, fx := range []func() ([]sweep.Result, sweep.Grid){fixture, rateFixture} {
		rs, g := fx()
		figs, err := All(rs, g, m, Meta{Trace: "fixture", GPU: "GPU", Model: "Model", ProfileKind: "test"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, figs...)
	}
	return out
}

// svgBox is one text drawn in an SVG and the page box it covers (points,
// y up).
type svgBox struct {
	text string
	box  vg.Rectangle
}

var svgToken = regexp.MustCompile(`<g transform="rotate\(90\)">|</g>|<text x="([-0-9.e]+)" y="([-0-9.e]+)" transform="scale\(1, -1\)"\s*style="[^"]*font-size:([0-9.]+)px[^"]*">([^<]*)</text>`)

// svgTexts reads every text of an SVG drawn by gonum, with its box: its
// width from the font, its height the ink of Liberation Serif (capitals
// and digits rise 0.70 em above the baseline, descenders reach 0.22 em
// below; the font's ascent also holds room for accents, and gonum sets
// the lines of a title 1 em apart). Texts in a rotate(90) group turn
// with it.
func svgTexts(t *testing.T, svg string) []svgBox {
	t.Helper()
	var out []svgBox
	rotated := 0
	for _, m := range svgToken.FindAllStringSubmatch(svg, -1) {
		switch {
		case m[0] == `<g transform="rotate(90)">`:
			rotated++
			continue
		case m[0] == "</g>":
			if rotated > 0 {
				rotated--
			}
			continue
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		size, _ := strconv.ParseFloat(m[3], 64)
		s := unescape(m[4])
		sty := text.Style{Font: font.From(plot.DefaultFont, vg.Length(size)), Handler: plot.DefaultTextHandler}
		w := float64(sty.Width(s))
		asc, desc := 0.70*size, 0.22*size
		var b vg.Rectangle
		if rotated > 0 {
			b = vg.Rectangle{Min: vg.Point{X: vg.Length(y - asc), Y: vg.Length(x)}, Max: vg.Point{X: vg.Length(y + desc), Y: vg.Length(x + w)}}
		} else {
			b = vg.Rectangle{Min: vg.Point{X: vg.Length(x), Y: vg.Length(-y - desc)}, Max: vg.Point{X: vg.Length(x + w), Y: vg.Length(-y + asc)}}
		}
		out = append(out, svgBox{s, b})
	}
	return out
}

func unescape(s string) string {
	r := regexp.MustCompile(`&(amp|lt|gt|quot|#39);`)
	return r.ReplaceAllStringFunc(s, func(e string) string {
		return map[string]string{"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": `"`, "&#39;": "'"}[e]
	})
}

// TestFiguresReadable renders every figure and checks what a reader
// would: every PNG at least 1600 px wide, and in the SVG no text clipped
// at the page's edge and no two texts (titles, tick labels, legend
// entries, point labels) overlapping.
func TestFiguresReadable(t *testing.T) {
	for _, f := range allFigures(t) {
		t.Run(f.Name, func(t *testing.T) {
			var pngBuf, svgBuf bytes.Buffer
			if err := f.Render(&pngBuf, "png"); err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(&pngBuf)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Width < 1600 {
				t.Errorf("PNG %d px wide, want ≥ 1600", cfg.Width)
			}
			if err := f.Render(&svgBuf, "svg"); err != nil {
				t.Fatal(err)
			}
			w, h := f.Size()
			texts := svgTexts(t, svgBuf.String())
			if len(texts) < 10 {
				t.Fatalf("%d texts in the SVG: not read", len(texts))
			}
			const tol = 0.25 // pt
			for i, a := range texts {
				if a.box.Min.X < -tol || a.box.Min.Y < -tol || a.box.Max.X > w+tol || a.box.Max.Y > h+tol {
					t.Errorf("%q (%v) is clipped by the %v × %v page", a.text, a.box, w, h)
				}
				for _, b := range texts[i+1:] {
					in := a.box
					in.Min = in.Min.Add(vg.Point{X: tol, Y: tol})
					in.Max = in.Max.Sub(vg.Point{X: tol, Y: tol})
					if overlaps(in, b.box) {
						t.Errorf("%q %v overlaps %q %v", a.text, a.box, b.text, b.box)
					}
				}
			}
		})
	}
}

// TestPerPolicyFiguresShareAxes: the per-policy CDF figures span the same
// TTFTs, the decile figures the same TTFT range, so policies compare at a
// glance; the frontier figures of every N share both axes.
func TestPerPolicyFiguresShareAxes(t *testing.T) {
	rs, g := fixture()
	type span struct{ lo, hi float64 }
	cdf, dec := map[span]bool{}, map[span]bool{}
	for _, pol := range g.Policies {
		c, err := TTFTCDF(rs, g, pol, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := TTFTByDecile(rs, g, pol, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		cdf[span{c.X.Min, c.X.Max}] = true
		dec[span{d.Y.Min, d.Y.Max}] = true
	}
	if len(cdf) != 1 || len(dec) != 1 {
		t.Errorf("per-policy ranges differ: CDF x %v, decile y %v", cdf, dec)
	}
	rs, g = rateFixture()
	fr := map[[2]span]bool{}
	for _, n := range g.Ns {
		p, err := Frontier(rs, g, n, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		fr[[2]span{{p.X.Min, p.X.Max}, {p.Y.Min, p.Y.Max}}] = true
	}
	if len(fr) != 1 {
		t.Errorf("frontier axes differ across N: %v", fr)
	}
}

// TestOfferedQuantile: a percentile over offered requests counts each one
// not served (−1) as +Inf, so it is undefined (+Inf) once it lands on one.
func TestOfferedQuantile(t *testing.T) {
	cases := []struct {
		ttft []float64
		p    float64
		want float64
	}{
		{[]float64{100, -1, 200, 300}, 0.5, 250},
		{[]float64{100, -1, 200, 300}, 0.6, 280},
		{[]float64{100, -1, 200, 300}, 0.7, math.Inf(1)},
		{[]float64{300, 100, 200, 400}, 0.5, 250},
		{[]float64{-1, -1}, 0.5, math.Inf(1)},
	}
	for _, c := range cases {
		if got := offeredQuantile(c.ttft, c.p); got != c.want && !(math.IsInf(got, 1) && math.IsInf(c.want, 1)) {
			t.Errorf("offeredQuantile(%v, %g) = %g, want %g", c.ttft, c.p, got, c.want)
		}
	}
	if got := offeredQuantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("no requests: %g, want NaN", got)
	}
}

// TestLabelsThatMustShow: the labels a reader needs are drawn (placed
// without overlap, which TestFiguresReadable checks): in the fixture
// kv-admission refuses 30 % at N = 2, so its p95 over offered is undefined
// and its share not served is labelled; every curve's first point is
// labelled by its N.
func TestLabelsThatMustShow(t *testing.T) {
	want := map[string][]string{
		"ttft-completeness-vs-n":  {"kv-admission: p95 over offered undefined: 30.0 % not served", "30.0 % not served"},
		"metric-vs-n":             {"30.0 % not served"},
		"latency-vs-completeness": {"N = 2"},
		"frontier-n2":             {"×0.5", "×1.5"},
	}
	seen := map[string]bool{}
	for _, f := range allFigures(t) {
		texts, ok := want[f.Name]
		if !ok || seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		var buf bytes.Buffer
		if err := f.Render(&buf, "svg"); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, b := range svgTexts(t, buf.String()) {
			count[b.text]++
		}
		for _, s := range texts {
			if count[s] == 0 {
				t.Errorf("%s: no label %q", f.Name, s)
			}
		}
		if f.Name == "latency-vs-completeness" && count["N = 2"] != 2 {
			t.Errorf("latency-vs-completeness: %d labels N = 2, want one per policy", count["N = 2"])
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no figure %s", name)
		}
	}
}

// distOf summarises the completed (> 0) TTFTs.
func distOf(ttft []float64) sim.Dist {
	var done []float64
	for _, t := range ttft {
		if t > 0 {
			done = append(done, t)
		}
	}
	return sim.NewDist(done)
}
