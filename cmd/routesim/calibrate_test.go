package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

func TestCalibrateBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	nanSummary := write("nan.json", `{"request_throughput":{"unit":"requests/sec","avg":NaN}}`)
	wrongSchema := write("wrong.json", `{"hello": "world"}`)
	run := func(summary string) string {
		return write(filepath.Base(summary)+".spec.json", `{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"`+filepath.Base(summary)+`","setup":{"first":50}}]}`)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no spec", []string{}, "--spec (or --vllm-bench, --lmbench, --guidellm, --mlenergy, --trtllm-bench) is required", 2},
		{"missing spec", []string{"--spec", filepath.Join(dir, "nope.json")}, "nope.json", 1},
		{"empty runs", []string{"--spec", write("empty.json", `{"name":"x","runs":[]}`)}, "no measured runs", 1},
		{"spec not JSON", []string{"--spec", write("bad.json", `{"runs": [`)}, "bad.json", 1},
		{"wrong schema", []string{"--spec", run(wrongSchema)}, "wrong.json: time_to_first_token: missing", 1},
		{"NaN", []string{"--spec", run(nanSummary)}, "nan.json: not a JSON object", 1},
		{"missing measured file", []string{"--spec", write("m.json", `{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"gone.json","setup":{}}]}`)}, "gone.json", 1},
		{"unknown coefficient", []string{"--spec", run(wrongSchema), "--fit", "warp_factor"}, `--fit: unknown coefficient "warp_factor"`, 2},
		{"bad evals", []string{"--spec", "x", "--max-evals", "0"}, "--max-evals 0", 2},
	} {
		t.Run(tc.name, func(t *testing.T) { calibrateFails(t, dir, tc.name, tc.args, tc.want, tc.code) })
	}
}

// TestCalibrateFromRunOutputs closes the loop: routesim run's AIPerf
// per-request export and nvidia-smi CSV calibrate back to a profile whose
// step coefficients match the one that produced them.
func TestCalibrateFromRunOutputs(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	if _, _, err := runCLI("run", "--trace", "arxiv-window", "--max-isl", "16384", "--first", "200", "--n", "4", "--rate-scale", "0.1", "--out", runDir); err != nil {
		t.Fatal(err)
	}
	spec := `{"name": "loop", "runs": [{"name": "r", "arm": "r",
		"setup": {"trace": "arxiv-window", "max_isl": 16384, "first": 200, "n": 4, "rate_scale": 0.1},
		"aiperf_records": "run/profile_export.jsonl", "nvidia_smi": "run/nvml.csv"}]}`
	os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644)
	out := filepath.Join(dir, "cal")
	stdout, _, err := runCLI("calibrate", "--spec", filepath.Join(dir, "spec.json"), "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "per-request regression") {
		t.Errorf("report does not say how it fitted:\n%s", stdout)
	}
	f, err := os.Open(filepath.Join(out, "profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := model.ReadProfile(f, "profile.json")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := model.FindProfile("A100-SXM4-40GB", "Qwen3-8B", 1)
	for _, c := range []struct {
		name   string
		g, w   float64
		relTol float64
	}{
		{"step_base_ns", got.StepBaseNs, want.StepBaseNs, 0.05},
		{"prefill_ns_per_token", got.PrefillNsPerToken, want.PrefillNsPerToken, 0.05},
		{"decode_ns_per_ctx_token", got.DecodeNsPerCtxToken, want.DecodeNsPerCtxToken, 0.05},
	} {
		if d := c.g/c.w - 1; d > c.relTol || d < -c.relTol {
			t.Errorf("%s: %.4g, produced by %.4g (%+.1f%%)", c.name, c.g, c.w, 100*d)
		}
	}
	var rep struct {
		Rows []struct{ Stat string }
	}
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) == 0 {
		t.Errorf("report.json: %v, %d rows", err, len(rep.Rows))
	}
}

// TestNewFlagsRefuseBadValues: calibrate's prior and model-error flags,
// validate's and run's draw counts and the KV overrides reject NaN, Inf,
// negative, zero-where-meaningless and unknown values with exit 2.
func TestNewFlagsRefuseBadValues(t *testing.T) {
	spec := "../../validate/data/h100-llama3.1-8b-inferencesim/fit.json"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--spec", spec, "--model-error", "nan"}, "--model-error"},
		{[]string{"calibrate", "--spec", spec, "--model-error", "0"}, "--model-error"},
		{[]string{"calibrate", "--spec", spec, "--prior-weight", "inf"}, "--prior-weight"},
		{[]string{"calibrate", "--spec", spec, "--prior-weight", "-1"}, "--prior-weight"},
		{[]string{"calibrate", "--spec", spec, "--derive", t.TempDir()}, "--source"},
		{[]string{"validate", "--draws", "0"}, "--draws"},
		{[]string{"validate", "--case", "nope"}, "unknown case"},
		{[]string{"run", "--uncertainty", "-1"}, "--uncertainty"},
		{[]string{"run", "--uncertainty", "100000"}, "--uncertainty"},
		{[]string{"run", "--vllm-version", "x.y"}, "--vllm-version"},
		{[]string{"run", "--kv-cache-tokens", "-3"}, "--kv-cache-tokens"},
		{[]string{"run", "--num-gpu-blocks-override", "9999999999"}, "--num-gpu-blocks-override"},
		{[]string{"run", "--request-timeout-seconds", "nan"}, "--request-timeout-seconds"},
		{[]string{"run", "--request-timeout-seconds", "-5"}, "--request-timeout-seconds"},
		{[]string{"run", "--request-timeout-seconds", "1e300"}, "--request-timeout-seconds"},
		{[]string{"run", "--warmup", "inf"}, "--warmup"},
		{[]string{"sweep", "--n", "2", "--request-timeout-seconds", "inf"}, "--request-timeout-seconds"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want %q and exit 2", tc.args, err, exitCode(err), tc.want)
		}
	}
}

// TestCalibrateMLEnergyBadInput: the ML.ENERGY flags and files are
// checked before any fit, with the flag or the file, line and field named,
// and nothing is written.
func TestCalibrateMLEnergyBadInput(t *testing.T) {
	const data = "../../testdata/mlenergy-h100-v3/"
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("task,model_id\nlm-arena-chat,x\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no osl", []string{"--mlenergy", data + "runs.csv", "--model", "Qwen3-8B"}, "--mlenergy needs --osl", 2},
		{"no model", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json"}, "--mlenergy needs --model", 2},
		{"osl without mlenergy", []string{"--spec", "x.json", "--osl", "y.json"}, "--osl needs --mlenergy", 2},
		{"gpu without mlenergy", []string{"--spec", "x.json", "--gpu", "H200"}, "--gpu needs --mlenergy", 2},
		{"both", []string{"--spec", "x.json", "--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B"}, "give one", 2},
		{"bad iters", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B", "--iters", "0"}, "--iters 0", 2},
		{"bad isl cv", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B", "--isl-cv", "nan"}, "--isl-cv NaN", 2},
		{"bad isl mean", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B", "--isl-mean", "-5"}, "--isl-mean -5", 2},
		{"nan isl mean", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B", "--isl-mean", "nan"}, "--isl-mean NaN", 2},
		{"isl mean without mlenergy", []string{"--spec", "x.json", "--isl-mean", "300"}, "--isl-mean needs --mlenergy", 2},
		{"ambiguous tp", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-32B"}, "pick one with --tp", 2},
		{"no rows", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B", "--gpu", "H200"}, "0 lm-arena-chat rows", 2},
		{"unknown model", []string{"--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Mistral-7B"}, "Mistral-7B", 2},
		{"malformed file", []string{"--mlenergy", bad, "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B"}, "bad.csv:1: gpu_model: missing column", 1},
		{"missing osl file", []string{"--mlenergy", data + "runs.csv", "--osl", filepath.Join(dir, "nope.json"), "--model", "Qwen3-8B"}, "nope.json", 1},
	} {
		t.Run(tc.name, func(t *testing.T) { calibrateFails(t, dir, tc.name, tc.args, tc.want, tc.code) })
	}
}

// calibrateFails runs calibrate with args and checks that it fails with
// want in its message and exit code, writing nothing.
func calibrateFails(t *testing.T, dir, name string, args []string, want string, code int) {
	t.Helper()
	out := filepath.Join(dir, "out-"+strings.ReplaceAll(name, " ", "-"))
	_, _, err := runCLI(append([]string{"calibrate", "--out", out}, args...)...)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if exitCode(err) != code {
		t.Errorf("exit %d, want %d", exitCode(err), code)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out %s exists after a failed calibration", out)
	}
}

// TestCalibrateMLEnergyIsDeterministic: an ML.ENERGY fit with its
// leave-one-out folds writes byte-identical files whether the folds run
// on one goroutine or two (three rows cut to 128 requests each, one
// iteration: the mechanics, not the fit).
func TestCalibrateMLEnergyIsDeterministic(t *testing.T) {
	const data = "../../testdata/mlenergy-h100-v3/"
	dir := t.TempDir()
	csv := smallMLEnergyRuns(t, dir)
	var outs []string
	for _, jobs := range []string{"1", "2"} {
		out := filepath.Join(dir, "jobs"+jobs)
		if _, _, err := runCLI("calibrate", "--mlenergy", csv, "--osl", data+"osl-qwen3-32b.json", "--model", "Qwen3-32B",
			"--iters", "1", "--loo", "--jobs", jobs, "--quiet", "--out", out); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	for _, f := range []string{"profile.json", "report.json", "report.txt"} {
		a, _ := os.ReadFile(filepath.Join(outs[0], f))
		b, _ := os.ReadFile(filepath.Join(outs[1], f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between --jobs 1 and 2 (or is empty)", f)
		}
	}
	if rep, _ := os.ReadFile(filepath.Join(outs[0], "report.txt")); !strings.Contains(string(rep), "leave-one-out") {
		t.Errorf("report.txt has no leave-one-out table:\n%s", rep)
	}
}

// smallMLEnergyRuns writes Qwen3-32B's three TP 1 rows, cut to 128
// requests each, as dir/runs.csv: enough for the mechanics of a fit.
func smallMLEnergyRuns(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/mlenergy-h100-v3/runs.csv")
	if err != nil {
		t.Fatal(err)
	}
	var small []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "task,") || strings.Contains(l, "Qwen/Qwen3-32B,H100,1,1,") {
			f := strings.Split(l, ",")
			if !strings.HasPrefix(l, "task,") {
				f[len(f)-1] = "128"
			}
			small = append(small, strings.Join(f, ","))
		}
	}
	if len(small) != 4 {
		t.Fatalf("%d lines, want a header and Qwen3-32B's three TP 1 rows", len(small))
	}
	csv := filepath.Join(dir, "runs.csv")
	if err := os.WriteFile(csv, []byte(strings.Join(small, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return csv
}

// TestCalibrateMLEnergyKeepsAGivenPromptLength: with --isl-mean the fit
// keeps the prompts' mean length instead of fitting it, and every output
// says it was given.
func TestCalibrateMLEnergyKeepsAGivenPromptLength(t *testing.T) {
	dir := t.TempDir()
	csv := smallMLEnergyRuns(t, dir)
	out := filepath.Join(dir, "fit")
	if _, _, err := runCLI("calibrate", "--mlenergy", csv, "--osl", "../../testdata/mlenergy-h100-v3/osl-qwen3-32b.json",
		"--model", "Qwen3-32B", "--isl-mean", "321", "--iters", "1", "--quiet", "--out", out); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		ISLMean     float64            `json:"isl_mean"`
		PosteriorSD map[string]float64 `json:"posterior_log_sd"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if _, fitted := rep.PosteriorSD["isl_mean"]; rep.ISLMean != 321 || fitted || len(rep.PosteriorSD) != 4 {
		t.Errorf("report.json: isl_mean %g, posterior sds %v; want 321 and the four coefficients only", rep.ISLMean, rep.PosteriorSD)
	}
	txt, _ := os.ReadFile(filepath.Join(out, "report.txt"))
	prof, _ := os.ReadFile(filepath.Join(out, "profile.json"))
	if !strings.Contains(string(txt), "prompt mean length (given) 321 tokens") || !strings.Contains(string(prof), "was given, not fitted: 321 tokens") {
		t.Errorf("the outputs do not say the prompt length was given:\n%s", txt)
	}
}
