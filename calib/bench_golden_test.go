package calib

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

var update = flag.Bool("update", false, "rewrite calib's golden files and writer-emitted fixtures in testdata/")

// fixtureCases are the small vllm bench serve fixtures in
// testdata/bench: written by writeVLLMBench from the recovery test's
// truth (no public result file with a licence that allows shipping it
// was found): two light points saved with --save-detailed, and a heavy
// one saved without it, its dataset given as --metadata.
func fixtureCases() []benchCase {
	return []benchCase{
		{"vllm-light-1rps", BenchPoint{Requests: 16, RatePerS: 1, Burstiness: 1, Dataset: &RandomDataset{InputLen: 1024, OutputLen: 64, RangeRatio: 0.5}}, true, true},
		{"vllm-light-2rps-bursty", BenchPoint{Requests: 20, RatePerS: 2, Burstiness: 0.5, Dataset: &RandomDataset{InputLen: 512, OutputLen: 128, RangeRatio: 0.5}}, true, true},
		{"vllm-heavy-inf-c8", BenchPoint{Requests: 24, RatePerS: math.Inf(1), Burstiness: 1, MaxConcurrency: 8, Dataset: &RandomDataset{InputLen: 1024, OutputLen: 96, RangeRatio: 0.25}}, false, false},
	}
}

// TestBenchFixturesAreTheWritersOutput: the fixtures are what the
// writer emits today (go test ./calib -update rewrites them).
func TestBenchFixturesAreTheWritersOutput(t *testing.T) {
	dir := t.TempDir()
	writeBenchSweep(t, dir, benchTruth(t), fixtureCases())
	for _, c := range fixtureCases() {
		got, err := os.ReadFile(filepath.Join(dir, c.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "bench", c.name+".json")
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./calib -run TestBenchFixtures -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the writer's output changed (go test ./calib -update rewrites it)", golden)
		}
	}
}

// TestBenchReportGolden: the calibration report of the vllm bench serve
// fixtures (fit on the light points, the heavy one predicted with bands)
// matches testdata/bench/vllm-report.golden.
func TestBenchReportGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for a few seconds")
	}
	var files []BenchFile
	var light []string
	for _, c := range fixtureCases() {
		files = append(files, BenchFile{"vllm_bench", filepath.Join("testdata", "bench", c.name+".json")})
		if c.light {
			light = append(light, c.name)
		}
	}
	spec, err := BenchSpec(files, benchSetup(), model.KernelPriorName)
	if err != nil {
		t.Fatal(err)
	}
	fit, rest, err := spec.Split(light)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(fit, Options{MaxEvals: 200, NoiseSigmas: []float64{0}, ModelError: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Predict(rest, res.Profile, res.Profile.Posterior, 8, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Report.String() + "\npredicted points:\n" + PredictionTable(rows)
	checkGolden(t, filepath.Join("testdata", "bench", "vllm-report.golden"), got)
}

// checkGolden compares got with the golden file (rewritten by -update).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./calib -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./calib -update rewrites it):\n%s", path, diffLines(string(want), got))
	}
}

// diffLines lists the first lines that differ.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := 0; i < max(len(w), len(g)) && len(out) < 10; i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			out = append(out, "- "+a, "+ "+b)
		}
	}
	return strings.Join(out, "\n")
}
