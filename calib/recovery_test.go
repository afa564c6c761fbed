package calib

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

// truthProfile is a plausible A100-40GB + Qwen3-8B profile the recovery
// test simulates from and must find again.
func truthProfile() *model.Profile {
	return &model.Profile{Name: "truth", GPU: "A100-SXM4-40GB", Model: "Qwen3-8B", TP: 1, Quant: model.BF16, Kind: "measured", Source: "test",
		StepBaseNs: 14e6, PrefillNsPerToken: 70e3, PrefillAttnNsPerTokenCtx: 2.0, DecodeNsPerSeq: 150e3, DecodeNsPerCtxToken: 130,
		FrontendNs: 5e6, HostOverheadNs: 5e6, PowerIdleW: 60, PowerBusyW: 380}
}

// startProfile is the truth perturbed by 25–60 %, where a fit starts.
func startProfile() *model.Profile {
	p := truthProfile()
	p.Name, p.Kind = "start", "roofline"
	p.StepBaseNs *= 1.4
	p.PrefillNsPerToken *= 0.75
	p.PrefillAttnNsPerTokenCtx *= 1.6
	p.DecodeNsPerSeq *= 0.6
	p.DecodeNsPerCtxToken *= 1.3
	p.FrontendNs *= 1.5
	p.HostOverheadNs *= 0.5
	p.PowerIdleW, p.PowerBusyW = 55, 400
	return p
}

func recoverySetups() map[string]scenario.Spec { return setupsOf(recoveryArms) }

type armLoad struct {
	pol  string
	n    int
	rate float64
}

// recoveryArms: a light arm (TTFT ≈ frontend + prefill, ITL ≈ a decode
// step) and a loaded one (queues, chunked prefill interleaved with
// decodes, and preemptions: a per-request regression needs varied batch
// shapes).
var recoveryArms = map[string]armLoad{"light-kv": {"kv", 8, 0.1}, "loaded-rr": {"round-robin", 2, 1.25}}

func setupsOf(arms map[string]armLoad) map[string]scenario.Spec {
	out := map[string]scenario.Spec{}
	for arm, c := range arms {
		s := scenario.Defaults()
		s.Trace, s.MaxISL, s.First, s.N, s.RateScale, s.Policy = "arxiv-window", 16384, 300, c.n, c.rate, c.pol
		out[arm] = s
	}
	return out
}

// writeSynthetic simulates each arm with the truth and writes its AIPerf
// records and nvidia-smi CSV, returning the spec path.
func writeSynthetic(t *testing.T, dir string, records bool) string {
	t.Helper()
	startPath := filepath.Join(dir, "start.json")
	sb, _ := json.Marshal(startProfile())
	os.WriteFile(startPath, sb, 0o644)
	return writeRuns(t, dir, records, truthProfile(), "start.json", recoverySetups())
}

// writeRuns simulates every recovery arm with truth and writes the spec,
// whose fit starts from base.
func writeRuns(t *testing.T, dir string, records bool, truth *model.Profile, base string, setups map[string]scenario.Spec) string {
	t.Helper()
	spec := Spec{Name: "recovery"}
	arms := make([]string, 0, len(setups))
	for arm := range setups {
		arms = append(arms, arm)
	}
	sort.Strings(arms)
	for _, arm := range arms {
		setup := setups[arm]
		b, err := setup.Build(truth)
		if err != nil {
			t.Fatal(err)
		}
		r := b.Run(setup.Seed)
		r.Config.NVML.Series = true // nvml.csv below
		res, _, err := r.Exec()
		if err != nil {
			t.Fatal(err)
		}
		sum := sim.Summarize(res)
		run := Run{Name: arm, Arm: arm, Setup: setup}
		write := func(name string, fn func(*os.File) error) string {
			f, err := os.Create(filepath.Join(dir, arm+"-"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := fn(f); err != nil {
				t.Fatal(err)
			}
			return arm + "-" + name
		}
		if records {
			run.AIPerfRecords = write("profile_export.jsonl", func(f *os.File) error { return report.WriteAIPerfRecords(f, res.Records, epoch) })
		} else {
			run.AIPerfSummary = write("profile_export_aiperf.json", func(f *os.File) error {
				return report.WriteAIPerf(f, res.Records, &sum, report.AIPerfRun{Generator: "test", Start: epoch})
			})
		}
		run.NvidiaSmi = write("nvml.csv", func(f *os.File) error {
			return report.WriteNvidiaSmiCSV(f, report.NVML{Samples: res.GPU, TP: 1, PowerW: truth.PowerAt, MemUsedBytes: b.Deploy.NVMLMemoryUsedBytes()}, epoch)
		})
		spec.Runs = append(spec.Runs, run)
	}
	spec.Base = base
	path := filepath.Join(dir, "spec.json")
	b, _ := json.MarshalIndent(spec, "", " ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type coefCheck struct {
	name        string
	want, value float64
}

func coefChecks(truth, got *model.Profile) []coefCheck {
	return []coefCheck{
		{"step_base_ns", truth.StepBaseNs, got.StepBaseNs},
		{"prefill_ns_per_token", truth.PrefillNsPerToken, got.PrefillNsPerToken},
		{"prefill_attn_ns_per_token_ctx", truth.PrefillAttnNsPerTokenCtx, got.PrefillAttnNsPerTokenCtx},
		{"decode_ns_per_seq", truth.DecodeNsPerSeq, got.DecodeNsPerSeq},
		{"decode_ns_per_ctx_token", truth.DecodeNsPerCtxToken, got.DecodeNsPerCtxToken},
		{"frontend_ns", truth.FrontendNs, got.FrontendNs},
		{"host_overhead_ns", truth.HostOverheadNs, got.HostOverheadNs},
		{"power_idle_w", truth.PowerIdleW, got.PowerIdleW},
		{"power_busy_w", truth.PowerBusyW, got.PowerBusyW},
	}
}

// TestRecoveryFromPerRequestRecords: runs simulated from known
// coefficients, exported as AIPerf per-request JSONL and nvidia-smi CSV,
// are fitted back from a start 25–60 % off: every coefficient within 5 %,
// TTFT p50 and ITL mean within 3 %.
func TestRecoveryFromPerRequestRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for several seconds")
	}
	path := writeSynthetic(t, t.TempDir(), true)
	spec, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(spec, Options{Regularization: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Report)
	for _, c := range coefChecks(truthProfile(), res.Profile) {
		e := 100 * (c.value - c.want) / c.want
		t.Logf("%-30s truth %-10.4g fitted %-10.4g (%+.1f%%)", c.name, c.want, c.value, e)
		if math.Abs(e) > 5 {
			t.Errorf("%s recovered %.4g, truth %.4g: %+.1f%% (tolerance 5%%)", c.name, c.value, c.want, e)
		}
	}
	for _, arm := range []string{"light-kv", "loaded-rr"} {
		for _, stat := range []string{"ttft_ms_p50", "itl_ms_avg"} {
			row, ok := res.Report.Find(arm, stat)
			if !ok || math.Abs(row.ErrPct) > 3 {
				t.Errorf("%s %s: %+v (tolerance 3%%)", arm, stat, row)
			}
		}
	}
}

// TestRecoveryFromSummaries: the same runs, but only AIPerf summary
// exports: the statistics are reproduced within 10 %; the coefficients'
// errors are logged (summaries constrain them less).
func TestRecoveryFromSummaries(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for several seconds")
	}
	path := writeSynthetic(t, t.TempDir(), false)
	spec, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(spec, Options{Regularization: -1, MaxEvals: 800})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Report)
	for _, c := range coefChecks(truthProfile(), res.Profile) {
		t.Logf("%-30s truth %-10.4g fitted %-10.4g (%+.1f%%)", c.name, c.want, c.value, 100*(c.value-c.want)/c.want)
	}
	for _, arm := range []string{"light-kv", "loaded-rr"} {
		for _, stat := range []string{"ttft_ms_p50", "ttft_ms_avg", "itl_ms_avg", "requests_per_s", "gpu_util_mean"} {
			row, ok := res.Report.Find(arm, stat)
			if !ok || math.Abs(row.ErrPct) > 10 {
				t.Errorf("%s %s: %+v (tolerance 10%%)", arm, stat, row)
			}
		}
	}
}

// TestRecoveryWithPriors: a kernel profile with known coefficients (the
// A100/Qwen3-8B kernel prior moved 8–30 % on every fitted term) simulates
// four arms, exported as AIPerf per-request JSONL and nvidia-smi CSV; the
// MAP fit starts from the kernel prior. Every coefficient the runs identify
// (posterior sd ≤ 2.5 %) is recovered within 5 %; the rest are reported as
// partly or not identified, and the truth lies within 3 posterior sds of
// every estimate.
func TestRecoveryWithPriors(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for tens of seconds")
	}
	s := scenario.Defaults()
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
	truth.PowerIdleW, truth.PowerBusyW = 60, 380
	// Four loads, from one request at a time to queues with preemption.
	arms := map[string]armLoad{"light-kv": {"kv", 8, 0.1}, "single-rr": {"round-robin", 1, 0.25},
		"mid-rr": {"round-robin", 4, 0.8}, "loaded-rr": {"round-robin", 2, 1.25}}
	path := writeRuns(t, t.TempDir(), true, truth, model.KernelPriorName, setupsOf(arms))
	spec, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	// The runs come from the model itself, noise-free: the statistics may
	// carry 2 % of error, not the 10 % a real deployment's may.
	res, err := Fit(spec, Options{MaxEvals: 700, NoiseSigmas: []float64{0}, ModelError: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Report)
	post := res.Profile.Posterior
	if post == nil {
		t.Fatal("no posterior")
	}
	identified := 0
	sd := post.SD()
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
	// Four arms pin the step base and the compute scale; attention,
	// per-sequence decode and KV reads come out narrowed to 5–11 %.
	if identified < 2 {
		t.Errorf("only %d coefficients identified by four arms of per-request records", identified)
	}
	var notes string
	for _, n := range res.Report.Notes {
		notes += n
	}
	for i, name := range post.Params {
		if !post.Identified[i] && !strings.Contains(notes, name) && !strings.Contains(res.Report.String(), name) {
			t.Errorf("%s is not identified but the report does not say so", name)
		}
	}
}

// epoch is where the synthetic exports' wall clock starts (not 1970, so the
// readers are checked on real-looking timestamps).
var epoch = time.Date(2026, 6, 5, 21, 58, 30, 828733000, time.UTC)
