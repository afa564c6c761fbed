package calib

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

// guidellmCase is one benchmark of the fixture report: its strategy as
// GuideLLM writes it and the load point it makes.
type guidellmCase struct {
	strategy map[string]any
	point    BenchPoint
	light    bool
}

func guidellmCases() []guidellmCase {
	return []guidellmCase{
		{map[string]any{"type_": "synchronous", "worker_count": nil, "max_concurrency": nil},
			BenchPoint{Requests: 12, RatePerS: math.Inf(1), MaxConcurrency: 1, Dataset: &RandomDataset{InputLen: 1500, OutputLen: 80, RangeRatio: 0.5}}, true},
		{map[string]any{"type_": "constant", "worker_count": nil, "max_concurrency": nil, "rate": 1.5, "rampup_duration": 0.0},
			BenchPoint{Requests: 24, RatePerS: 1.5, Dataset: &RandomDataset{InputLen: 600, OutputLen: 120, RangeRatio: 0.5}}, true},
		{map[string]any{"type_": "concurrent", "worker_count": nil, "max_concurrency": nil, "streams": 12, "rampup_duration": 0.0},
			BenchPoint{Requests: 36, RatePerS: math.Inf(1), MaxConcurrency: 12, Dataset: &RandomDataset{InputLen: 1000, OutputLen: 100, RangeRatio: 0.3}}, false},
	}
}

// guidellmUnix is where the fixture's wall clock starts.
const guidellmUnix = 1780000000.0

// writeGuideLLM writes a reduced GuideLLM report (the keys routesim reads,
// under the names and nesting of GenerativeBenchmarksReport at
// vllm-project/guidellm@v0.7.3; not every field GuideLLM writes) of the
// cases simulated with truth.
func writeGuideLLM(t *testing.T, path string, truth *model.Profile, cases []guidellmCase) {
	t.Helper()
	var benchmarks []any
	for i, c := range cases {
		p := c.point
		p.File, p.Format = "fixture", "guidellm"
		if p.RatePerS < math.Inf(1) {
			p.SendS = make([]float64, p.Requests)
			for k := range p.SendS {
				p.SendS[k] = float64(k+1) / p.RatePerS
			}
		}
		setup := benchSetup()
		setup.Seed = 50 + uint64(i)
		a := &arm{spec: setup}
		a.spec.Workload, a.spec.Synthetic = "synthetic", benchPlaceholder
		b, err := a.spec.Build(truth)
		if err != nil {
			t.Fatal(err)
		}
		a.built = b
		if err := a.benchWorkload(&p); err != nil {
			t.Fatal(err)
		}
		res, err := a.run(b.Run(setup.Seed))
		if err != nil {
			t.Fatal(err)
		}
		var ok []any
		for _, r := range res.Records {
			if r.Status != sim.StatusOK {
				t.Fatalf("request %d failed", r.ID)
			}
			start, end := guidellmUnix+float64(r.Arrival)/1e9, guidellmUnix+float64(r.End)/1e9
			ok = append(ok, map[string]any{
				"type_": "generative_request_stats", "request_id": r.ID,
				"prompt_tokens": r.InputTokens, "output_tokens": r.OutputTokens,
				"time_to_first_token_ms": float64(r.TTFT()) / 1e6, "inter_token_latency_ms": r.ITL() / 1e6,
				"request_latency": float64(r.E2E()) / 1e9, "request_start_time": start, "request_end_time": end,
			})
		}
		benchmarks = append(benchmarks, map[string]any{
			"type_": "generative_benchmark",
			"config": map[string]any{"run_index": i, "strategy": c.strategy,
				"warmup":   map[string]any{"percent": nil, "value": nil, "mode": "prefer_duration"},
				"cooldown": map[string]any{"percent": nil, "value": nil, "mode": "prefer_duration"}},
			"metrics": map[string]any{"request_latency": map[string]any{
				"successful": map[string]any{"count": len(ok)}, "errored": map[string]any{"count": 0},
				"incomplete": map[string]any{"count": 0}, "total": map[string]any{"count": len(ok)}}},
			"requests": map[string]any{"successful": ok, "errored": []any{}, "incomplete": []any{}, "total": nil},
		})
	}
	rep := map[string]any{"metadata": map[string]any{"version": 2}, "config": map[string]any{}, "benchmarks": benchmarks}
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(want, b) {
		t.Fatalf("%s is not the writer's output (go test ./calib -update rewrites it): %v", path, err)
	}
}

var guidellmFixture = filepath.Join("testdata", "bench", "guidellm-report.json")

// TestGuideLLMFixture: the fixture is the writer's output, and reads back
// as its strategies ran.
func TestGuideLLMFixture(t *testing.T) {
	writeGuideLLM(t, guidellmFixture, benchTruth(t), guidellmCases())
	f, err := os.Open(guidellmFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	points, err := ReadGuideLLM(f, "g.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		label string
		conc  int
		rate  float64
	}{{"synchronous", 1, math.Inf(1)}, {"constant@1.50", 0, 1.5}, {"concurrent@12", 12, math.Inf(1)}}
	for i, w := range want {
		p := points[i].Point
		if points[i].Label != w.label || p.MaxConcurrency != w.conc || p.RatePerS != w.rate || p.Requests != guidellmCases()[i].point.Requests {
			t.Errorf("benchmark %d: %s %+v", i, points[i].Label, p)
		}
	}
	if s := points[1].Point.SendS; len(s) != 24 || s[0] != 1/1.5 || s[23] != 16 {
		t.Errorf("constant@1.5 send times %v", s)
	}
}

func TestReadGuideLLMRejectsBadFiles(t *testing.T) {
	good, err := os.ReadFile(guidellmFixture)
	if err != nil {
		t.Fatal(err)
	}
	g := string(good)
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "{", "g.json:1: not valid JSON"},
		{"YAML", "benchmarks:\n- config: {}\n", "g.json:1: not valid JSON"},
		{"no benchmarks", `{"benchmarks": []}`, "g.json:1: benchmarks: missing or empty"},
		{"benchmarks not a list", `{"benchmarks": 3}`, "g.json:1: benchmarks: json: cannot unmarshal"},
		{"unknown strategy", strings.Replace(g, `"type_": "synchronous"`, `"type_": "trace"`, 1), `benchmarks[0].config.strategy.type_: "trace": routesim re-simulates`},
		{"rate text", strings.Replace(g, `"rate": 1.5`, `"rate": "fast"`, 1), "benchmarks[1].config.strategy.rate: json: cannot unmarshal string"},
		{"rate zero", strings.Replace(g, `"rate": 1.5`, `"rate": 0`, 1), "benchmarks[1].config.strategy.rate: 0 must be a positive number"},
		{"fractional streams", strings.Replace(g, `"streams": 12`, `"streams": 12.5`, 1), "benchmarks[2].config.strategy.streams: 12.5 must be a positive number ≤ 1e+07 and whole"},
		{"ramp-up", strings.Replace(g, `"rampup_duration": 0`, `"rampup_duration": 5`, 1), "benchmarks[1].config.strategy.rampup_duration: 5 s: a ramp-up is not re-simulated"},
		{"warm-up or cool-down", strings.Replace(g, `"percent": null`, `"percent": 0.1`, 1), "benchmarks[0].config.cooldown: set:"},
		{"sampled", strings.Replace(g, `"count": 12`, `"count": 100`, 1), "benchmarks[0].requests.successful: 12 requests listed of the 100 measured"},
		{"fractional tokens", strings.Replace(g, `"prompt_tokens": 1`, `"prompt_tokens": 1.5`, 1), "is not a token count"},
		{"no start", strings.Replace(g, `"request_start_time"`, `"request_begin"`, 1), "benchmarks[0].requests.successful.request_start_time: missing or not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadGuideLLM(strings.NewReader(tc.in), "g.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestGuideLLMReportGolden: the calibration report of the fixture (fit
// on the synchronous and constant@1.5 benchmarks, concurrent@12
// predicted with bands) matches testdata/bench/guidellm-report.golden.
func TestGuideLLMReportGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for a few seconds")
	}
	spec, err := BenchSpec([]BenchFile{{"guidellm", guidellmFixture}}, benchSetup(), model.KernelPriorName)
	if err != nil {
		t.Fatal(err)
	}
	fit, rest, err := spec.Split([]string{"guidellm-report-0-synchronous", "guidellm-report-1-constant@1.50"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(fit, Options{MaxEvals: 150, NoiseSigmas: []float64{0}, ModelError: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Predict(rest, res.Profile, res.Profile.Posterior, 8, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "bench", "guidellm-report.golden"), res.Report.String()+"\npredicted points:\n"+PredictionTable(rows))
}

// FuzzReadGuideLLM: the GuideLLM reader never panics; what it refuses it
// refuses with an error naming the file; what it accepts re-simulates
// every listed request.
func FuzzReadGuideLLM(f *testing.F) {
	if b, err := os.ReadFile(guidellmFixture); err == nil {
		f.Add(b)
		g := string(b)
		for _, bad := range [][2]string{{`"rate": 1.5`, `"rate": -1`}, {`"streams": 12`, `"streams": 1e300`}, {`"count": 12`, `"count": 1e9`},
			{`"type_": "synchronous"`, `"type_": "trace"`}, {`"prompt_tokens": 1`, `"prompt_tokens": -1`}} {
			f.Add([]byte(strings.Replace(g, bad[0], bad[1], 1)))
		}
	}
	for _, s := range []string{`{"benchmarks": []}`, `{"benchmarks": [{}]}`, `{"benchmarks": [{"config": {"strategy": {"type_": "throughput"}}, "requests": {"successful": [{"prompt_tokens": 5, "output_tokens": 2, "request_start_time": 1, "request_end_time": 2, "time_to_first_token_ms": 10, "request_latency": 0.5}]}}]}`, `{`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		points, err := ReadGuideLLM(bytes.NewReader(b), "g.json")
		if err != nil {
			var pe *inputerr.Error
			if !errors.As(err, &pe) || pe.File != "g.json" {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		for _, gp := range points {
			p := gp.Point
			if p.promptVolume() > 1e8 || (p.RatePerS < math.Inf(1) && float64(p.Requests)/p.RatePerS > 1e6) {
				continue
			}
			tr := p.Trace(benchRNG())
			if len(tr.Requests) != p.Requests {
				t.Fatalf("%d requests for %d listed", len(tr.Requests), p.Requests)
			}
			for i, r := range tr.Requests {
				if r.InputTokens < 1 || r.OutputTokens < 1 || (i > 0 && r.ArrivalNs < tr.Requests[i-1].ArrivalNs) {
					t.Fatalf("request %d: %+v", i, r)
				}
			}
		}
	})
}

// TestSpecLoadPointFields: a spec's load-point fields are checked with
// the others, each problem at its line; a guidellm_benchmark past the
// report's benchmarks names both.
func TestSpecLoadPointFields(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"two sources", "{\"name\": \"x\", \"runs\": [\n{\"name\": \"a\", \"arm\": \"a\", \"setup\": {},\n\"vllm_bench\": \"v.json\", \"aiperf_summary\": \"s.json\"}]}",
			"spec.json:3: runs[0].vllm_bench: is a load point's measurements"},
		{"two formats", "{\"name\": \"x\", \"runs\": [\n{\"name\": \"a\", \"arm\": \"a\", \"setup\": {},\n\"lmbench\": \"l.csv\",\n\"guidellm\": \"g.json\"}]}",
			"spec.json:3: runs[0].lmbench: is a load point's measurements"},
		{"index without report", "{\"name\": \"x\", \"runs\": [\n{\"name\": \"a\", \"arm\": \"a\", \"setup\": {}, \"measured\": \"m.json\",\n\"guidellm_benchmark\": 2}]}",
			"spec.json:3: runs[0].guidellm_benchmark: 2: the index (from 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSpec([]byte(tc.spec), "spec.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	g, _ := os.ReadFile(guidellmFixture)
	os.WriteFile(filepath.Join(dir, "g.json"), g, 0o644)
	spec := `{"name": "x", "runs": [{"name": "a", "arm": "a", "setup": {"n": 1}, "guidellm": "g.json", "guidellm_benchmark": 5}]}`
	os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644)
	s, err := LoadSpec(filepath.Join(dir, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err == nil || !strings.Contains(err.Error(), "g.json: benchmarks: 3 benchmarks, but run a asks for benchmark 5") {
		t.Fatalf("got %v", err)
	}
}
