package browsertest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"sort"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDocsScreenshot draws docs/img/explore.png: the explorer at 1.6 ×
// the arXiv window's rate on four workers, round-robin against Dynamo's
// KV router with and without its router queue. It runs only when
// EXPLORE_DOCS_SHOT names the file to write:
//
//	EXPLORE_DOCS_SHOT=$PWD/../../docs/img/explore.png go test -run TestDocsScreenshot
func TestDocsScreenshot(t *testing.T) {
	out := os.Getenv("EXPLORE_DOCS_SHOT")
	if out == "" {
		t.Skip("set EXPLORE_DOCS_SHOT=FILE to draw the documentation's screenshot")
	}
	chrome, why := findBrowser()
	if chrome == "" {
		t.Skip(why)
	}
	url := serve(t, buildRoutesim(t))
	ctx := browser(t, chrome)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900), chromedp.Navigate(url), waitGeneration(1),
		setControl("#rate-scale", "1.6"), waitGeneration(2),
		setControl("#n", "4"), waitGeneration(3),
		click("#pol-kv-admission"), waitGeneration(4),
		chromedp.WaitVisible(chromedp.CSS(`body[data-state="ready"]`))); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	checkNonBlank(t, shot)
	small, err := paletted(shot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, small, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes (%d as captured)", out, len(small), len(shot))
}

// paletted re-encodes a PNG with its 256 commonest colours (each other
// pixel takes its nearest), which keeps a page's flat colours and text
// legible at a third of the size.
func paletted(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := rgb(img, x, y)
			count[color.RGBA{uint8(c[0]), uint8(c[1]), uint8(c[2]), 255}]++
		}
	}
	cols := make([]color.RGBA, 0, len(count))
	for c := range count {
		cols = append(cols, c)
	}
	sort.Slice(cols, func(i, j int) bool {
		if count[cols[i]] != count[cols[j]] {
			return count[cols[i]] > count[cols[j]]
		}
		a, b := cols[i], cols[j]
		return a.R < b.R || (a.R == b.R && (a.G < b.G || (a.G == b.G && a.B < b.B)))
	})
	pal := make(color.Palette, 0, 256)
	for i := 0; i < len(cols) && i < 256; i++ {
		pal = append(pal, cols[i])
	}
	p := image.NewPaletted(r, pal)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p.Set(x, y, img.At(x, y))
		}
	}
	var buf bytes.Buffer
	err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, p)
	return buf.Bytes(), err
}
