package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunSessions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, _, err := runCLI("run", "--workload", "sessions", "--concurrency", "8", "--sessions", "16", "--turns", "2..3",
		"--n", "2", "--policy", "kv", "--max-batch-size", "32", "--block-size", "32", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "closed-loop sessions") || !strings.Contains(out, "sessions: 16 started, 16 completed") {
		t.Errorf("summary:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "requests.csv")); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "sessions", "--concurrency", "4"}, "stopping rule"},
		{[]string{"--workload", "sessions", "--sessions", "4"}, "--concurrency 0"},
		{[]string{"--workload", "sessions", "--concurrency", "2", "--sessions", "2", "--turns", "5..2"}, "MIN..MAX"},
		{[]string{"--workload", "chats"}, "--workload \"chats\""},
	} {
		_, _, err := runCLI(append([]string{"run"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v, want %q (exit 2)", tc.args, err, tc.want)
		}
	}
}

func TestScenarioFileAndLoadSweep(t *testing.T) {
	h100 := "../../testdata/scenarios/h100-llama70b-fp8-4xtp2-chat.json"
	out, _, err := runCLI("run", "--scenario", h100, "--duration", "20", "--n", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 × H100-SXM5-80GB, Llama-3.1-70B tp2, policy kv") || !strings.Contains(out, "trtllm-bench [measured]") {
		t.Errorf("scenario not applied, or --n not overriding it:\n%s", out)
	}
	dir := filepath.Join(t.TempDir(), "load")
	out, _, err = runCLI("sweep", "--scenario", h100, "--duration", "20", "--concurrency", "10..30:10", "--policy", "round-robin,kv",
		"--seeds", "2", "--metric", "ttft-p95", "--bootstrap", "20", "--quiet", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "crossover along concurrency [10 20 30]") {
		t.Errorf("load sweep:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "metric-vs-n.png")); err != nil {
		t.Error(err)
	}
	if _, _, err := runCLI("sweep", "--concurrency", "10..30:10"); err == nil || !strings.Contains(err.Error(), "--workload sessions") {
		t.Errorf("--concurrency on a trace: %v", err)
	}
	if _, _, err := runCLI("run", "--scenario", filepath.Join(t.TempDir(), "none.json")); err == nil || exitCode(err) == 0 {
		t.Errorf("missing scenario: %v", err)
	}
}

func TestRunSyntheticOpenLoop(t *testing.T) {
	out, _, err := runCLI("run", "--workload", "synthetic", "--requests", "300", "--rate", "4", "--arrival", "gamma",
		"--prefix-groups", "2", "--prefix-tokens", "1024", "--n", "2", "--warmup", "10")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "synthetic(gamma 4 req/s)") {
		t.Errorf("summary:\n%s", out)
	}
	if _, _, err := runCLI("run", "--workload", "synthetic", "--requests", "10"); err == nil || !strings.Contains(err.Error(), "--rate 0") {
		t.Errorf("synthetic without a rate: %v", err)
	}
	if _, _, err := runCLI("run", "--warmup", "-1"); err == nil || exitCode(err) != 2 {
		t.Errorf("negative warm-up: %v", err)
	}
}

func TestRunTraceWithSessions(t *testing.T) {
	out, _, err := runCLI("run", "--trace", "../../testdata/traces/sessions_small.jsonl", "--n", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "trace sessions: 2 sessions, 4 later turns sent closed-loop, 0 never sent") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestRateSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rate")
	out, _, err := runCLI("sweep", "--workload", "synthetic", "--requests", "200", "--rate", "2..6:2", "--n", "2",
		"--policy", "round-robin,kv", "--seeds", "2", "--metric", "goodput", "--slo-ttft", "500", "--bootstrap", "20", "--quiet", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "crossover along rate [2 4 6]") {
		t.Errorf("rate sweep:\n%s", out)
	}
	for _, bad := range [][]string{
		{"sweep", "--rate", "2..6"},
		{"sweep", "--workload", "synthetic", "--requests", "10", "--rate", "2..6", "--n", "2..4"},
	} {
		if _, _, err := runCLI(bad...); err == nil || exitCode(err) != 2 {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
