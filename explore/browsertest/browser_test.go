// Package browsertest drives routesim explore in headless Chromium: the
// page is loaded, N and the policies are changed, the numbers it shows
// are compared with what routesim run prints for the same configuration,
// the interaction latency is measured and a screenshot is checked. It is
// its own module so that the main one does not carry chromedp; it drives
// the built binary as a user would, so it imports nothing of routesim.
//
//	cd explore/browsertest && go test ./... -v
//
// It skips, saying why, when no Chromium is installed (explore/check
// installs Debian's). EXPLORE_SCREENSHOT=DIR keeps the screenshots.
package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browsers are the names a Chromium binary goes by on PATH.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell", "chrome"}

// findBrowser returns $CHROME or the first Chromium on PATH.
func findBrowser() (string, string) {
	if p := os.Getenv("CHROME"); p != "" {
		return p, ""
	}
	for _, b := range browsers {
		if p, err := exec.LookPath(b); err == nil {
			return p, ""
		}
	}
	return "", "no Chromium found (looked for $CHROME and " + strings.Join(browsers, ", ") + " on PATH): install Debian's chromium, as explore/check does"
}

// repoRoot is the main module's folder, two levels up.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "routesim")); err != nil {
		t.Fatalf("not inside the routesim repository: %v", err)
	}
	return root
}

// buildRoutesim builds the command from this checkout.
func buildRoutesim(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "routesim")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/routesim")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serve starts routesim explore on a free loopback port and returns its URL.
func serve(t *testing.T, bin string) string {
	cmd := exec.Command(bin, "explore", "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("routesim explore printed no address: %v", err)
	}
	_, rest, ok := strings.Cut(line, "serving ")
	url, _, _ := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("routesim explore: unexpected first line %q", line)
	}
	return url
}

// runNumbers runs routesim run with args and returns the completeness and
// the TTFT p50 over completed requests as it prints them.
func runNumbers(t *testing.T, bin string, args []string) (completeness, ttftP50 string) {
	out, err := exec.Command(bin, append([]string{"run"}, args...)...).Output()
	if err != nil {
		t.Fatalf("routesim run %s: %v", strings.Join(args, " "), err)
	}
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "offered" && f[2] == "completeness" && i+1 < len(lines) {
			completeness = strings.Fields(lines[i+1])[2]
		}
		if len(f) >= 3 && f[0] == "TTFT" && f[1] != "rejections" && !strings.HasSuffix(f[0], ",") {
			ttftP50 = f[2]
		}
	}
	if completeness == "" || ttftP50 == "" {
		t.Fatalf("routesim run: no completeness or TTFT in\n%s", out)
	}
	return completeness, ttftP50
}

// waitGeneration waits until the page has drawn the detail views of its
// gen-th request.
func waitGeneration(gen int) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`body[data-generation="%d"]`, gen)))
}

// setControl sets an input's value and fires the events a user's change
// fires.
func setControl(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("input", {bubbles: true})); })()`, sel, value))
}

// shown reads an element's text in one step ("" if it is missing).
func shown(sel string) chromedp.Action[string] {
	return chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel))
}

func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.checked = !e.checked; e.dispatchEvent(new Event("input", {bubbles: true})); })()`, sel))
}

// browser starts headless Chromium with a 1400 × 900 window; it stops
// with the test.
func browser(t *testing.T, chrome string) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.WindowSize(1400, 900),
		chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestExplorePage(t *testing.T) {
	chrome, why := findBrowser()
	if chrome == "" {
		t.Skip(why)
	}
	bin := buildRoutesim(t)
	url := serve(t, bin)
	ctx := browser(t, chrome)

	// The opening view, then its curves finish (every N cached).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900), chromedp.Navigate(url), waitGeneration(1),
		chromedp.WaitVisible(chromedp.CSS(`body[data-state="ready"]`))); err != nil {
		t.Fatalf("the page did not draw its opening view: %v", err)
	}
	// Move N to 4 (a size the curves already computed) and switch the
	// policies: least-loaded in, round-robin out.
	var latencies []time.Duration
	gen := 1
	step := func(name string, act chromedp.Action[chromedp.Void]) {
		gen++
		t0 := time.Now()
		if err := chromedp.Do(ctx, act, waitGeneration(gen)); err != nil {
			t.Fatalf("%s: the page did not update: %v", name, err)
		}
		wall := time.Since(t0)
		page, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("body"), "data-latency"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("interaction latency, %s: %s ms in the page (control change → figure drawn), %s seen from the test", name, page.Value, wall.Round(time.Millisecond))
		latencies = append(latencies, wall)
	}
	step("N 8 → 4 (cached point)", setControl("#n", "4"))
	step("policy least-loaded added (new points)", click("#pol-least-loaded"))
	step("policy round-robin removed", click("#pol-round-robin"))
	step("rate scale 0.7365 → 0.9013 (nothing cached)", setControl("#rate-range", "-0.15")) // 2^-0.15

	// Read once every point has come in: the tables are redrawn as the
	// curves' points arrive.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`body[data-state="ready"]`))); err != nil {
		t.Fatal(err)
	}
	rate, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#rate-scale")))
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []string{"kv", "least-loaded"} {
		comp, err := chromedp.Run(ctx, shown(fmt.Sprintf(`#fig-completeness tr[data-policy=%q] td.completeness`, pol)))
		if err != nil {
			t.Fatalf("%s: completeness not shown: %v", pol, err)
		}
		ttft, err := chromedp.Run(ctx, shown(fmt.Sprintf(`#fig-ttft tr[data-policy=%q] td.ttft-p50`, pol)))
		if err != nil {
			t.Fatalf("%s: TTFT not shown: %v", pol, err)
		}
		args := []string{"--trace", "arxiv-window", "--max-isl", "16384", "--skip", "60", "--first", "1000", "--max-model-len", "16384",
			"--rate-scale", rate, "--n", "4", "--policy", pol, "--seed", "0"}
		command, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll("#run-cmd div")].map(d => d.textContent).find(c => c.includes("--policy %s ")) || ""`, pol)))
		if err != nil {
			t.Fatal(err)
		}
		if want := "routesim run " + strings.Join(args, " "); command != want {
			t.Errorf("%s: the page's command\n  %s\nwant\n  %s", pol, command, want)
		}
		wantComp, wantTTFT := runNumbers(t, bin, args)
		t.Logf("%s at N=4, rate scale %s: page completeness %s, TTFT p50 %s ms; routesim run %s, %s ms", pol, rate, comp, ttft, wantComp, wantTTFT)
		if comp != wantComp || ttft != wantTTFT {
			t.Errorf("%s: the page shows completeness %s, TTFT p50 %s; routesim run prints %s, %s", pol, comp, ttft, wantComp, wantTTFT)
		}
	}
	for _, l := range latencies {
		if l > 5*time.Second { // a frozen page, not a slow machine
			t.Errorf("an interaction took %s to update the figures", l)
		}
	}

	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`body[data-state="ready"]`))); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	checkNonBlank(t, shot)
	dir := os.Getenv("EXPLORE_SCREENSHOT")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "explore-page.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
}

// checkNonBlank fails unless the screenshot is 1400 × 900 with drawn
// content: many colours, and a good share of pixels off the background.
func checkNonBlank(t *testing.T, b []byte) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	r := img.Bounds()
	if r.Dx() != 1400 || r.Dy() != 900 {
		t.Errorf("screenshot is %d × %d, want 1400 × 900", r.Dx(), r.Dy())
	}
	colours := map[[3]uint32]int{}
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			c := rgb(img, x, y)
			colours[c]++
		}
	}
	most := 0
	for _, n := range colours {
		most = max(most, n)
	}
	total := (r.Dx() / 2) * (r.Dy() / 2)
	if len(colours) < 50 || float64(most) > 0.9*float64(total) {
		t.Errorf("screenshot looks blank: %d colours, the commonest covers %.0f%%", len(colours), 100*float64(most)/float64(total))
	}
}

func rgb(img image.Image, x, y int) [3]uint32 {
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]uint32{r >> 8, g >> 8, b >> 8}
}
