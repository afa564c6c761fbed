package browsertest

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	for pol, want := range native {
		if wasm[pol] != want {
			t.Errorf("%s: the WebAssembly build's summary differs from the native one:\n%s\n%s", pol, wasm[pol], want)
		}
	}
	t.Logf("WebAssembly and native summaries identical for %d points (%s)", len(native), wasmRequest)

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
	comp, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#fig-completeness tr[data-policy="kv"] td.completeness`)))
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
