package validate

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

// TestEmbeddedSummaryMatchesCases: the embedded summary (written by
// routesim validate --summary) has an entry for every case validate runs
// and none for a case it does not, each with its case's regime, a
// deployment the catalogue knows and errors that are numbers; the
// trtllm-bench case has one entry per deployment it predicts. If this
// fails, regenerate: go run ./cmd/routesim validate --summary validate/summary.json
func TestEmbeddedSummaryMatchesCases(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if s.Command != SummaryCommand {
		t.Errorf("command %q, want %q", s.Command, SummaryCommand)
	}
	if !bytes.Equal(s.Marshal(), summaryJSON) {
		t.Error("summary.json is not as routesim validate --summary writes it")
	}
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Case{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	seen := map[string]int{}
	cat := model.DefaultCatalogue()
	for _, e := range s.Entries {
		c, ok := byName[e.Case]
		if !ok {
			t.Errorf("entry for %q, which is not a validation case", e.Case)
			continue
		}
		seen[e.Case]++
		if e.Regime != c.Regime {
			t.Errorf("%s: regime %q, the case says %q", e.Case, e.Regime, c.Regime)
		}
		if _, err := cat.GPU(e.GPU); err != nil {
			t.Errorf("%s: %v", e.Case, err)
		}
		if _, err := cat.Model(e.Model); err != nil {
			t.Errorf("%s: %v", e.Case, err)
		}
		if e.Statistics < 1 || !(e.MaxAbsErrPct >= e.MeanAbsErrPct) || e.Worst == "" || e.How == "" {
			t.Errorf("%s: %+v", e.Case, e)
		}
		want := "vllm"
		if c.TRTBench != nil {
			want = model.EngineTRTLLM
		}
		if e.Engine != want {
			t.Errorf("%s: engine %q, want %q", e.Case, e.Engine, want)
		}
	}
	for _, c := range cases {
		want := 1
		if c.TRTBench != nil {
			want += len(c.TRTBench.Transfer)
		}
		if seen[c.Name] != want {
			t.Errorf("%s: %d entries in summary.json, want %d (regenerate: %s)", c.Name, seen[c.Name], want, SummaryCommand)
		}
	}
}

// TestEmbeddedSummaryDeployments: each vLLM case's entry names the
// deployment its predicted runs were set up on (its predict spec's first
// run), the trtllm-bench case's entries its fitted and transferred ones.
func TestEmbeddedSummaryDeployments(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var want []string
		if tc := c.TRTBench; tc != nil {
			want = append(want, depKey(t, tc.GPU, tc.Model, tc.TP))
			for _, tr := range tc.Transfer {
				want = append(want, depKey(t, tr.GPU, tr.Model, tr.TP))
			}
		} else {
			dir, err := extract(c.Name)
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			spec, err := calib.LoadSpec(filepath.Join(dir, c.Predict))
			if err != nil {
				t.Fatal(err)
			}
			d, err := spec.Runs[0].Setup.Deployment()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, depKey(t, d.GPU.Name, d.Model.Name, max(d.TP, 1)))
		}
		var got []string
		for _, e := range s.Entries {
			if e.Case == c.Name {
				got = append(got, depKey(t, e.GPU, e.Model, e.TP))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: summary deployments %v, the case's %v", c.Name, got, want)
		}
	}
}

func depKey(t *testing.T, gpu, llm string, tp int) string {
	t.Helper()
	d := testDeploy(t, gpu, llm, tp)
	return fmt.Sprintf("%s/%s/tp%d", d.GPU.Name, d.Model.Name, tp)
}

// TestSummarizeTakesCheckedStatistics: an entry's errors are over the
// case's checked statistics only, the worst named with its run.
func TestSummarizeTakesCheckedStatistics(t *testing.T) {
	c := Case{Name: "c", Regime: "unsaturated", Checked: []string{"ttft_ms_avg", "itl_ms_avg"}}
	d := testDeploy(t, "H100", "Llama-3.1-8B", 1)
	rows := []calib.PredRow{
		{Arm: "a", Stat: "ttft_ms_avg", ErrPct: -4},
		{Arm: "a", Stat: "itl_ms_avg", ErrPct: 12.34},
		{Arm: "b", Stat: "itl_ms_avg", ErrPct: 2},
		{Arm: "b", Stat: "ttft_ms_p99", ErrPct: 80}, // not checked
		{Arm: "b", Stat: "ttft_ms_avg", ErrPct: math.NaN()},
	}
	e := entry(c, d, "vllm", "fitted", rows)
	if e.Statistics != 3 || e.MaxAbsErrPct != 12.3 || e.Worst != "itl_ms_avg in run a" || e.MeanAbsErrPct != 6.1 {
		t.Errorf("entry %+v, want 3 statistics, max 12.3 (itl_ms_avg in run a), mean 6.1", e)
	}
	s := Summarize([]Result{{Pass: false, Summary: []Entry{e}}})
	if len(s.Entries) != 1 || s.Entries[0].Pass {
		t.Errorf("summary %+v: the case's verdict must carry over", s)
	}
}

func testDeploy(t *testing.T, gpu, llm string, tp int) model.Deployment {
	t.Helper()
	cat := model.DefaultCatalogue()
	g, err := cat.GPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.Model(llm)
	if err != nil {
		t.Fatal(err)
	}
	return model.Deployment{GPU: g, Model: m, TP: tp, Quant: model.BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
}

// trustSummary is a made-up summary with one case per relation a test
// needs.
var trustSummary = Summary{Entries: []Entry{
	{Case: "h100-8b", GPU: "H100-SXM5-80GB", Model: "Llama-3.1-8B", TP: 1, Quant: "bf16", Engine: "vllm", How: "fitted on its light runs", Statistics: 9, MaxAbsErrPct: 20.5, Worst: "itl_ms_avg at x", MeanAbsErrPct: 7, Pass: false},
	{Case: "a100-8b", GPU: "A100-SXM4-80GB", Model: "Llama-3.1-8B", TP: 1, Quant: "bf16", Engine: "vllm", How: "fitted on its light runs", Statistics: 12, MaxAbsErrPct: 9.6, Worst: "ttft_ms_p50 at y", MeanAbsErrPct: 4, Pass: true},
	{Case: "a100-qwen", GPU: "A100-SXM4-40GB", Model: "Qwen3-8B", TP: 1, Quant: "bf16", Engine: "vllm", How: "the built-in profile on the runs it was fitted to", Statistics: 10, MaxAbsErrPct: 10.6, Worst: "itl_ms_avg at rr", MeanAbsErrPct: 3, Pass: true},
	{Case: "h100-2-7b", GPU: "H100-SXM5-80GB", Model: "Llama-2-7B", TP: 1, Quant: "bf16", Engine: "vllm", How: "fitted on its light runs", Statistics: 5, MaxAbsErrPct: 37, Worst: "ttft_ms_p50 at r", MeanAbsErrPct: 15, Pass: true},
	{Case: "trt-h100", GPU: "H100-SXM5-80GB", Model: "Llama-3.1-70B", TP: 2, Quant: "fp8", Engine: "trtllm", How: "fitted on 5 other rows", Statistics: 5, MaxAbsErrPct: 6.5, Worst: "output_tok_s at z", MeanAbsErrPct: 4, Pass: true},
	{Case: "trt-h200", GPU: "H200-SXM-141GB", Model: "Llama-3.1-70B", TP: 1, Quant: "fp8", Engine: "trtllm", How: "transferred", Statistics: 10, MaxAbsErrPct: 9.2, Worst: "output_tok_s at w", MeanAbsErrPct: 5, Pass: true},
}}

// TestNearest: the nearest case by relation (same GPU and model, same
// model on the same architecture, same model, same architecture, any),
// among cases of the run's engine.
func TestNearest(t *testing.T) {
	for _, tc := range []struct {
		gpu, llm string
		tp       int
		engine   string
		want     string
		rel      Relation
	}{
		{"A100-80GB", "Llama-3.1-8B", 2, "vllm", "a100-8b", SameGPUAndModel},
		{"A100-40GB", "Llama-3.1-8B", 1, "vllm", "a100-8b", SameArchitectureAndModel},
		{"H200", "Llama-3.1-8B", 1, "vllm", "h100-8b", SameArchitectureAndModel},
		{"RTX-4090", "Llama-3.1-8B", 1, "vllm", "a100-8b", SameModel},      // a100-8b before h100-8b by name
		{"A100-80GB", "Qwen3-32B", 1, "vllm", "a100-8b", SameArchitecture}, // the same GPU first
		{"A100-40GB", "Qwen3-32B", 1, "vllm", "a100-qwen", SameArchitecture},
		{"H200", "Llama-3.1-70B", 4, "vllm", "h100-2-7b", SameArchitecture}, // the TensorRT-LLM cases are another engine
		{"RTX-4090", "Qwen3-8B", 1, "vllm", "a100-qwen", SameModel},
		{"RTX-4090", "Qwen3-32B", 1, "vllm", "a100-8b", Unrelated},
		{"H200", "Llama-3.1-70B", 2, "trtllm", "trt-h200", SameGPUAndModel},
		{"H100", "Llama-3.1-70B", 8, "trtllm", "trt-h100", SameGPUAndModel},
		{"A100-80GB", "Qwen3-8B", 1, "trtllm", "trt-h200", Unrelated}, // the nearest TP
	} {
		e, rel, ok := trustSummary.Nearest(testDeploy(t, tc.gpu, tc.llm, tc.tp), tc.engine)
		if !ok || e.Case != tc.want || rel != tc.rel {
			t.Errorf("%s/%s/tp%d %s: nearest %s (%s), want %s (%s)", tc.gpu, tc.llm, tc.tp, tc.engine, e.Case, rel, tc.want, tc.rel)
		}
	}
	if _, _, ok := (Summary{}).Nearest(testDeploy(t, "H100", "Qwen3-8B", 1), "vllm"); ok {
		t.Error("an empty summary has a nearest case")
	}
}

// TestTrustLine: a run on a profile not measured on its deployment gets
// one line with the profile's kind and the nearest case's error and
// relation; a measured profile (kernel or BLIS linear fit) gets none.
func TestTrustLine(t *testing.T) {
	cat := model.DefaultCatalogue()
	h200 := testDeploy(t, "H200", "Llama-3.1-8B", 1)
	a100 := testDeploy(t, "A100-80GB", "Llama-3.1-8B", 1)
	prior, _, err := model.KernelPrior(a100, cat, false)
	if err != nil {
		t.Fatal(err)
	}
	blis, err := model.BLISProfileFor(a100)
	if err != nil {
		t.Fatal(err)
	}
	meas, err := model.FindProfile("H100-SXM5-80GB", "Llama-3.1-8B", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *model.Profile
		d    model.Deployment
		want string
	}{
		{"transfer", model.ProfileFor(h200, false), h200,
			"trust: transfer of h100-sxm5-80gb.llama-3.1-8b.tp1.mlenergy, not measured on this deployment; nearest validation case (same model on a GPU of the same architecture): h100-8b, H100-SXM5-80GB Llama-3.1-8B TP1, fitted on its light runs: max |error| 20.5 % (itl_ms_avg at x), mean 7.0 % over 9 statistics; fails its acceptance"},
		{"kernel prior", prior, a100,
			"trust: kernel prior, not measured on this deployment; nearest validation case (same GPU and model): a100-8b, A100-SXM4-80GB Llama-3.1-8B TP1, fitted on its light runs: max |error| 9.6 % (ttft_ms_p50 at y), mean 4.0 % over 12 statistics; meets its acceptance"},
		{"roofline", model.Roofline(a100), a100, "trust: roofline, not measured on this deployment; nearest validation case (same GPU and model): a100-8b,"},
		{"measured", meas, testDeploy(t, "H100", "Llama-3.1-8B", 1), ""},
		{"BLIS", blis, a100, ""},
	} {
		got := trustSummary.TrustLine(tc.p, tc.d, "vllm")
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) || strings.Contains(got, "\n") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	h100 := testDeploy(t, "H100", "Llama-3.1-8B", 1)
	if got, want := trustSummary.TrustLine(meas, h100, model.EngineTRTLLM), "trust: measured vLLM profile, not measured on TensorRT-LLM; nearest validation case (another model on a GPU of the same architecture): trt-h100,"; !strings.HasPrefix(got, want) {
		t.Errorf("a TensorRT-LLM run on a measured vLLM profile: %q, want %q…", got, want)
	}
	if got := (Summary{}).TrustLine(prior, a100, "vllm"); got != "trust: kernel prior, not measured on this deployment; no validation case to compare (routesim validate)" {
		t.Errorf("no cases: %q", got)
	}
}
