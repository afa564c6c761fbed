package calib

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

// benchCase is one load point of the recovery test's vLLM sweep.
type benchCase struct {
	name     string
	point    BenchPoint
	detailed bool
	light    bool
}

// recoveryBenchCases: two light points (one request at a time, mostly; a
// Poisson and a bursty client) to fit on, and two heavy ones to predict:
// every request at t = 0 behind a 12-request client bound, and a bursty
// 6 req/s stream saved without --save-detailed (its lengths re-drawn
// from the dataset settings given as --metadata).
func recoveryBenchCases() []benchCase {
	return []benchCase{
		{"light-long-in", BenchPoint{Requests: 40, RatePerS: 0.5, Burstiness: 1, Dataset: &RandomDataset{InputLen: 3000, OutputLen: 48, RangeRatio: 0.6}}, true, true},
		{"light-long-out", BenchPoint{Requests: 24, RatePerS: 0.3, Burstiness: 1, Dataset: &RandomDataset{InputLen: 200, OutputLen: 500, RangeRatio: 0.6}}, true, true},
		{"light-bursty", BenchPoint{Requests: 60, RatePerS: 3, Burstiness: 0.5, Dataset: &RandomDataset{InputLen: 800, OutputLen: 150, RangeRatio: 0.8}}, true, true},
		{"heavy-inf-c12", BenchPoint{Requests: 48, RatePerS: math.Inf(1), Burstiness: 1, MaxConcurrency: 12, Dataset: &RandomDataset{InputLen: 1500, OutputLen: 150, RangeRatio: 0.3}}, true, false},
		{"heavy-4rps", BenchPoint{Requests: 400, RatePerS: 4, Burstiness: 0.7, Dataset: &RandomDataset{InputLen: 1000, OutputLen: 120, RangeRatio: 0.5}}, false, false},
	}
}

// benchSetup is the deployment the sweep ran on: one A100-40GB worker
// serving Qwen3-8B (the CLI's defaults otherwise) on vLLM 0.13.0, the
// last release that schedules synchronously by default. Under async
// scheduling (0.14.0 on) this fit still recovers the two coefficients
// the data identify within 5 %, but lands decode_ns_per_seq 4.7× from
// the truth with a posterior 15 sds narrow of it (an open problem of the
// Laplace posterior there, recorded in the closing note of issue 36);
// the reader and its re-simulation, which this test is about, are the
// same under either.
func benchSetup() scenario.Spec {
	s := scenario.Defaults()
	s.N, s.Policy, s.VLLMVersion = 1, "round-robin", "0.13.0"
	return s
}

// writeBenchSweep simulates every case with truth as its client ran it
// (its own draw of send times and lengths: seed 99, not the fit's) and
// writes each as a vllm bench serve result, returning the spec's path.
func writeBenchSweep(t *testing.T, dir string, truth *model.Profile, cases []benchCase) string {
	t.Helper()
	spec := Spec{Name: "vllm-bench-recovery", Base: model.KernelPriorName}
	for _, c := range cases {
		p := c.point
		p.File, p.Format = c.name, "vllm-bench"
		setup := benchSetup()
		setup.Seed = 99
		a := &arm{name: c.name, spec: setup}
		a.spec.Workload, a.spec.Synthetic = "synthetic", benchPlaceholder
		b, err := a.spec.Build(truth)
		if err != nil {
			t.Fatal(err)
		}
		a.built = b
		if err := a.benchWorkload(&p); err != nil {
			t.Fatal(err)
		}
		sched := make([]float64, len(b.Work.Jobs))
		for i, j := range b.Work.Jobs {
			sched[i] = float64(j.Arrival) / 1e9
		}
		res, err := a.run(b.Run(setup.Seed))
		if err != nil {
			t.Fatal(err)
		}
		run := vllmRun{Point: &p, Scheduled: sched, Detailed: c.detailed}
		if !c.detailed {
			d := p.Dataset
			run.Metadata = [][2]string{{"random_input_len", strconv.Itoa(d.InputLen)}, {"random_output_len", strconv.Itoa(d.OutputLen)},
				{"random_range_ratio", strconv.FormatFloat(d.RangeRatio, 'g', -1, 64)}}
		}
		f, err := os.Create(filepath.Join(dir, c.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeVLLMBench(f, run, res); err != nil {
			t.Fatal(err)
		}
		f.Close()
		spec.Runs = append(spec.Runs, Run{Name: c.name, Arm: c.name, Setup: benchSetup(), VLLMBench: c.name + ".json"})
	}
	path := filepath.Join(dir, "spec.json")
	b, _ := json.MarshalIndent(spec, "", " ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// benchTruth is the A100/Qwen3-8B kernel prior with every fitted term
// moved 10–30 %: the coefficients the sweep is simulated from.
func benchTruth(t *testing.T) *model.Profile {
	s := benchSetup()
	dep, err := s.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	truth, _, err := model.KernelPrior(dep, model.DefaultCatalogue(), false)
	if err != nil {
		t.Fatal(err)
	}
	truth.Name, truth.Kind = "truth", "measured"
	truth.LinearScale = 1.12
	truth.StepBaseNs *= 1.25
	truth.HostOverheadNs *= 1.1
	truth.PrefillAttnNsPerPair *= 0.8
	truth.DecodeNsPerSeq *= 1.3
	truth.DecodeNsPerCtxToken *= 1.15
	truth.FrontendNs *= 0.7
	return truth
}

// TestRecoveryFromVLLMBench: known coefficients → a four-point sweep
// simulated as vllm bench serve runs it and written in its result format
// → calibrate on the two light points (MAP from the kernel prior) →
// every coefficient the light points identify (posterior sd ≤ 2.5 %)
// within 5 % of the truth, the truth within 3 posterior sds of every
// estimate, the terms left unidentified named by the report; then the
// two heavy points predicted with bands, TTFT and ITL within 10 %.
func TestRecoveryFromVLLMBench(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for several seconds")
	}
	truth := benchTruth(t)
	path := writeBenchSweep(t, t.TempDir(), truth, recoveryBenchCases())
	spec, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	var light []string
	for _, c := range recoveryBenchCases() {
		if c.light {
			light = append(light, c.name)
		}
	}
	fitSpec, heavy, err := spec.Split(light)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(fitSpec, Options{MaxEvals: 400, NoiseSigmas: []float64{0}, ModelError: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Report)
	post := res.Profile.Posterior
	if post == nil {
		t.Fatal("no posterior")
	}
	sd := post.SD()
	identified := 0
	for i, name := range post.Params {
		c, _ := model.CoefficientByName(name)
		want, got := *c.Field(truth), *c.Field(res.Profile)
		e := 100 * (got - want) / want
		z := math.Log(got/want) / sd[i]
		t.Logf("%-30s truth %-10.4g fitted %-10.4g (%+.1f%%, %+.1f posterior sd) identified=%v", name, want, got, e, z, post.Identified[i])
		if post.Identified[i] {
			identified++
			if math.Abs(e) > 5 {
				t.Errorf("%s is identified but recovered %.4g, truth %.4g: %+.1f%% (tolerance 5%%)", name, got, want, e)
			}
		}
		if math.Abs(z) > 3 {
			t.Errorf("%s: truth %.4g lies %.1f posterior sds from the estimate %.4g", name, want, z, got)
		}
	}
	if identified < 2 {
		t.Errorf("only %d coefficients identified by two light points", identified)
	}
	rows, err := Predict(heavy, res.Profile, post, 10, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	detailed := map[string]bool{}
	for _, c := range recoveryBenchCases() {
		detailed[c.name] = c.detailed
	}
	for _, r := range rows {
		t.Logf("%-14s %-14s measured %-9.4g predicted %-9.4g (%+.1f%%) band %.4g–%.4g in=%v", r.Arm, r.Stat, r.Measured, r.Predicted, r.ErrPct, *r.BandLo, *r.BandHi, r.InBand)
		// A point saved without --save-detailed is re-simulated on
		// another draw of its dataset and arrivals: its means are
		// held to the tolerance, its median (one draw's) is not.
		checked := r.Stat == "ttft_ms_avg" || r.Stat == "itl_ms_avg" || (r.Stat == "ttft_ms_p50" && detailed[r.Arm])
		if checked && math.Abs(r.ErrPct) > 10 {
			t.Errorf("%s %s predicted %+.1f%% off (tolerance 10%%)", r.Arm, r.Stat, r.ErrPct)
		}
	}
	if len(rows) == 0 {
		t.Error("no predictions for the heavy points")
	}
}

// TestBenchPointResimulatesTheRecordedSends: a detailed result's send
// times are recovered exactly (start_times − queue_times, from the
// benchmark's start), so the re-simulation replays the client's own
// arrivals; the lengths are the file's.
func TestBenchPointResimulatesTheRecordedSends(t *testing.T) {
	truth := benchTruth(t)
	dir := t.TempDir()
	cases := recoveryBenchCases()[2:4]
	writeBenchSweep(t, dir, truth, cases)
	for _, c := range cases {
		f, err := os.Open(filepath.Join(dir, c.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ReadVLLMBench(f, c.name)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := c.point
		want.File, want.Format = c.name, "vllm-bench"
		setup := benchSetup()
		setup.Seed = 99
		tr := want.Trace(sim.Stream(99, "bench"))
		got := p.Trace(sim.Stream(1, "bench"))
		for i := range tr.Requests {
			w, g := tr.Requests[i], got.Requests[i]
			if math.Abs(float64(w.ArrivalNs-g.ArrivalNs)) > 1e3 || w.InputTokens != g.InputTokens || w.OutputTokens != g.OutputTokens {
				t.Fatalf("%s request %d: re-simulated as %+v, sent as %+v", c.name, i, g, w)
			}
		}
	}
}
