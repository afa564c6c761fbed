package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const benchFixtures = "../../calib/testdata/bench/"

// writeBenchSetup writes the scenario the calib fixtures were simulated
// on (one A100-SXM4-40GB worker serving Qwen3-8B).
func writeBenchSetup(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "setup.json")
	if err := os.WriteFile(p, []byte(`{"n": 1, "policy": "round-robin", "gpu": "A100-SXM4-40GB", "model": "Qwen3-8B", "tp": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCalibrateBenchFlags: the load-point flags are checked before any
// file is read, and a bad file fails with its position, exit 1 and no
// output directory.
func TestCalibrateBenchFlags(t *testing.T) {
	dir := t.TempDir()
	setup := writeBenchSetup(t, dir)
	light := benchFixtures + "vllm-light-1rps.json"
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"num_prompts\": 10,\n\"request_rate\": \"fast\"}"), 0o644)
	badCSV := filepath.Join(dir, "bad.csv")
	os.WriteFile(badCSV, []byte("prompt_tokens,generation_tokens,ttft,generation_time,user_id,question_id,launch_time,finish_time\n10,5,x,1,1,1,0,1\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no setup", []string{"--vllm-bench", light}, "--vllm-bench, --lmbench and --guidellm need --setup", 2},
		{"setup alone", []string{"--spec", "x.json", "--setup", setup}, "--setup needs --vllm-bench, --lmbench or --guidellm", 2},
		{"with spec", []string{"--vllm-bench", light, "--setup", setup, "--spec", "x.json"}, "replace --spec", 2},
		{"with derive", []string{"--lmbench", light, "--setup", setup, "--derive", dir, "--source", "x"}, "--derive does not go with", 2},
		{"fit points alone", []string{"--fit-points", "a"}, "--fit-points needs", 2},
		{"unknown fit point", []string{"--vllm-bench", light, "--setup", setup, "--fit-points", "nope"}, `calib: no run "nope" to fit on (runs: vllm-light-1rps)`, 2},
		{"bad JSON field", []string{"--vllm-bench", bad, "--setup", setup}, "bad.json:2: request_rate: \"fast\": want a number", 1},
		{"bad CSV cell", []string{"--lmbench", badCSV, "--setup", setup}, `bad.csv:2: ttft: column 3: "x" is not a finite number`, 1},
		{"missing file", []string{"--guidellm", filepath.Join(dir, "none.json"), "--setup", setup}, "none.json: no such file", 1},
	} {
		t.Run(tc.name, func(t *testing.T) { calibrateFails(t, dir, tc.name, tc.args, tc.want, tc.code) })
	}
}

// TestCalibrateVLLMBenchPredictsTheRest: calibrate --vllm-bench fits the
// points --fit-points names and writes the others' predictions, with
// bands, into report.json and report.txt.
func TestCalibrateVLLMBenchPredictsTheRest(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for a few seconds")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	files := benchFixtures + "vllm-light-1rps.json," + benchFixtures + "vllm-light-2rps-bursty.json," + benchFixtures + "vllm-heavy-inf-c8.json"
	stdout, _, err := runCLI("calibrate", "--vllm-bench", files, "--setup", writeBenchSetup(t, dir), "--fit-points", "vllm-light-1rps,vllm-light-2rps-bursty",
		"--max-evals", "100", "--quiet", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "predicted points (not fitted on; band: 10–90 % over 20 coefficient draws)") || !strings.Contains(stdout, "vllm-heavy-inf-c8") {
		t.Errorf("stdout lacks the predictions:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Fit       json.RawMessage `json:"fit"`
		Predicted []struct {
			Arm    string   `json:"arm"`
			BandLo *float64 `json:"band_lo"`
		} `json:"predicted"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Fit) == 0 || len(rep.Predicted) == 0 || rep.Predicted[0].Arm != "vllm-heavy-inf-c8" || rep.Predicted[0].BandLo == nil {
		t.Errorf("report.json: %s", b)
	}
}
