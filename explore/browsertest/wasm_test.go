package browsertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// wasmRequest is one view: two policies at one size, one seed.
const wasmRequest = `{"flags":{"rate-scale":"1.6"},"n":4,"ns":"4","policies":["kv","round-robin"],"seed":3,"seeds":1}`

// summaries runs routesim explore --request through run (the native
// binary, or node with the WebAssembly build) and returns each point's
// summary and command by policy.
func summaries(t *testing.T, name string, cmd *exec.Cmd) map[string]string {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, stderr.String())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev struct {
			Type  string `json:"type"`
			Point *struct {
				Policy  string          `json:"policy"`
				Command string          `json:"command"`
				Summary json.RawMessage `json:"summary"`
			} `json:"point"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v in %q", name, err, sc.Text())
		}
		if ev.Type == "point" {
			got[ev.Point.Policy] = ev.Point.Command + "\n" + string(ev.Point.Summary)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%s: %d points, want 2:\n%s", name, len(got), out)
	}
	return got
}

// TestWasmMatchesNative exports the page (routesim explore --export),
// runs its WebAssembly simulator under node on one view and checks every
// summary is the native binary's byte for byte; with Chromium, it also
// loads the exported page and checks the numbers it shows.
func TestWasmMatchesNative(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH: it runs the WebAssembly build")
	}
	bin := buildRoutesim(t)
	dir := filepath.Join(t.TempDir(), "site")
	export := exec.Command(bin, "explore", "--export", dir)
	export.Dir = repoRoot(t)
	if out, err := export.CombinedOutput(); err != nil {
		t.Fatalf("routesim explore --export: %v\n%s", err, out)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	runner := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec_node.js")
	if _, err := os.Stat(runner); err != nil {
		runner = filepath.Join(strings.TrimSpace(string(goroot)), "misc", "wasm", "wasm_exec_node.js")
	}
	native := summaries(t, "native", exec.Command(bin, "explore", "--request", wasmRequest))
	wasm := summaries(t, "wasm", exec.Command(node, runner, filepath.Join(dir, "routesim.wasm"), "explore", "--request", wasmRequest))
	ulps := 0
	for pol, want := range native {
		n, err := sameSummary(wasm[pol], want)
		if err != nil {
			t.Errorf("%s: the WebAssembly build's summary differs from the native one: %v\n%s\n%s", pol, err, wasm[pol], want)
		}
		ulps += n
	}
	t.Logf("WebAssembly and native summaries equal for %d points (%s); %d means or standard deviations differ in the last bits (gonum's SIMD sum on amd64)", len(native), wasmRequest, ulps)

	chrome, why := findBrowser()
	if chrome == "" {
		t.Skip("the exported page is not loaded: " + why)
	}
	site := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer site.Close()
	ctx := browser(t, chrome)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL), waitGeneration(1)); err != nil {
		t.Fatalf("the exported page did not draw its opening view: %v", err)
	}
	comp, err := chromedp.Run(ctx, shown(`#fig-completeness tr[data-policy="kv"] td.completeness`))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := runNumbers(t, bin, []string{"--trace", "arxiv-window", "--max-isl", "16384", "--skip", "60", "--first", "1000",
		"--max-model-len", "16384", "--rate-scale", "0.7365", "--n", "8", "--policy", "kv", "--seed", "0"})
	if comp != want {
		t.Errorf("the exported page shows kv's completeness %s, routesim run prints %s", comp, want)
	}
	lat, _ := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("body"), "data-latency"))
	t.Logf("exported page: kv completeness %s at N=8 (routesim run: %s); opening view drawn in %s ms", comp, want, lat.Value)
}

// sameSummary compares two points (command line, then summary JSON):
// every count, quantile, minimum, maximum, sum and rate must be
// identical. The values sim computes with gonum's stat.PopMeanStdDev (a
// distribution's avg and std, the fleet's GPU utilisation mean and skew,
// and the power at that mean) may differ in their last bits and are
// compared to 1e-14 relative: gonum sums with SIMD assembly on amd64
// (internal/asm/f64/sum_amd64.s) and in order elsewhere, so the same
// values give means a few ulps apart. It returns how many such values
// differ.
func sameSummary(a, b string) (int, error) {
	ca, ja, _ := strings.Cut(a, "\n")
	cb, jb, _ := strings.Cut(b, "\n")
	if ca != cb {
		return 0, fmt.Errorf("command %q, want %q", ca, cb)
	}
	var va, vb any
	if err := json.Unmarshal([]byte(ja), &va); err != nil {
		return 0, err
	}
	if err := json.Unmarshal([]byte(jb), &vb); err != nil {
		return 0, err
	}
	n := 0
	var walk func(path string, x, y any) error
	walk = func(path string, x, y any) error {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok || len(xv) != len(yv) {
				return fmt.Errorf("%s: %v vs %v", path, x, y)
			}
			for k := range xv {
				if err := walk(path+"."+k, xv[k], yv[k]); err != nil {
					return err
				}
			}
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				return fmt.Errorf("%s: %v vs %v", path, x, y)
			}
			for i := range xv {
				if err := walk(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i]); err != nil {
					return err
				}
			}
		case float64:
			yv, ok := y.(float64)
			if ok && xv == yv {
				return nil
			}
			if ok && gonumMean(path) && math.Abs(xv-yv) <= 1e-14*math.Abs(yv) {
				n++
				return nil
			}
			return fmt.Errorf("%s: %v vs %v", path, x, y)
		default:
			if x != y {
				return fmt.Errorf("%s: %v vs %v", path, x, y)
			}
		}
		return nil
	}
	return n, walk("summary", va, vb)
}

// gonumMean says whether the summary field at path comes from gonum's
// stat.PopMeanStdDev (sim/quantile.go, sim/nvml.go).
func gonumMean(path string) bool {
	switch path {
	case "summary.gpu.util_mean", "summary.gpu.util_skew", "summary.gpu.power_mean_w":
		return true
	}
	return strings.HasSuffix(path, ".avg") || strings.HasSuffix(path, ".std")
}
