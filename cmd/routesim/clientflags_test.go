package main

import (
	"strings"
	"testing"
)

// TestClientFlagsMeanRoutesimFlags: a load generator's spelling gives the
// same run, byte for byte, as routesim's own flags it stands for.
func TestClientFlagsMeanRoutesimFlags(t *testing.T) {
	deploy := []string{"--gpu", "H100", "--model", "Llama-3.1-8B", "--n", "2"}
	for _, tc := range []struct {
		name         string
		client, same []string
	}{
		{"vllm bench synthetic",
			[]string{"--workload", "synthetic", "--request-rate", "6", "--num-prompts", "40", "--burstiness", "4", "--seed", "3"},
			[]string{"--workload", "synthetic", "--rate", "6", "--requests", "40", "--arrival", "gamma", "--arrival-cv", "0.5", "--seed", "3"}},
		{"burstiness 1 is Poisson",
			[]string{"--workload", "synthetic", "--rate", "6", "--requests", "30", "--burstiness", "1"},
			[]string{"--workload", "synthetic", "--rate", "6", "--requests", "30", "--arrival", "poisson"}},
		{"AIPerf trace replay",
			[]string{"--input-file", smallTrace, "--request-count", "25", "--random-seed", "5"},
			[]string{"--trace", smallTrace, "--first", "25", "--seed", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, err := runCLI(append(append([]string{"run"}, deploy...), tc.client...)...)
			if err != nil {
				t.Fatal(err)
			}
			b, _, err := runCLI(append(append([]string{"run"}, deploy...), tc.same...)...)
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("%v and %v differ:\n%s\n---\n%s", tc.client, tc.same, a, b)
			}
		})
	}
}

// TestClientFlagsRefusedWithPointer: where a client flag has no routesim
// meaning for the workload, or its routesim flag is set too, the error
// names it and says what to use.
func TestClientFlagsRefusedWithPointer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-rate", "4"}, "--request-rate (vllm bench serve, AIPerf): a trace replays its own arrival times: scale them with --rate-scale"},
		{[]string{"--workload", "synthetic", "--request-rate", "inf"}, "inf (every request at once)"},
		{[]string{"--workload", "sessions", "--request-rate", "4"}, "its load is --concurrency"},
		{[]string{"--max-concurrency", "8"}, "--workload sessions --concurrency N"},
		{[]string{"--goodput", "ttft:200"}, "routesim plan --slo-ttft-p95"},
		{[]string{"--num-prompts", "10", "--first", "5"}, "--num-prompts (vllm bench serve): --first is set too"},
		{[]string{"--burstiness", "2"}, "--workload synthetic only"},
		{[]string{"--workload", "synthetic", "--rate", "3", "--burstiness", "-1"}, "want a positive number"},
		{[]string{"--workload", "sessions", "--concurrency", "4", "--num-prompts", "10"}, "counts conversations (--sessions)"},
	} {
		_, _, err := runCLI(append([]string{"run"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d); want a usage error with %q", tc.args, err, exitCode(err), tc.want)
		}
	}
	// The sweep and the plan take them too.
	for _, args := range [][]string{{"sweep", "--dry-run"}, {"plan", "--dry-run", "--slo-ttft-p95", "1"}} {
		cmd := args[0]
		_, _, err := runCLI(append(args, "--max-concurrency", "8")...)
		if err == nil || !strings.Contains(err.Error(), "--max-concurrency") {
			t.Errorf("%s: %v; want --max-concurrency refused", cmd, err)
		}
	}
}

// TestUnknownFlagSuggestsNearest: a mistyped flag (or engine alias) gets
// a "did you mean", a far one does not.
func TestUnknownFlagSuggestsNearest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-num-seq", "4"}, "did you mean --max-num-seqs?"},
		{[]string{"sweep", "--polcy", "kv"}, "did you mean --policy?"},
		{[]string{"plan", "--slo-ttft-p9", "1"}, "did you mean --slo-ttft-p95?"},
		{[]string{"run", "--tensor-parallel-siz", "2"}, "did you mean --tensor-parallel-size?"},
		{[]string{"run", "--num-prompt", "2"}, "did you mean --num-prompts?"},
		{[]string{"calibrate", "--trtlm-bench", "x"}, "did you mean --trtllm-bench?"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
	}
	_, _, err := runCLI("run", "--zzzzqqq", "1")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("--zzzzqqq: %v; want no suggestion", err)
	}
}

// TestHelpGroupedAndWrapped: run, sweep and plan --help list every flag
// once under its group, wrapped to $COLUMNS (only unbreakable words run
// over).
func TestHelpGroupedAndWrapped(t *testing.T) {
	t.Setenv("COLUMNS", "90")
	for _, cmd := range []string{"run", "sweep", "plan"} {
		out, _, err := runCLI(cmd, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, title := range []string{"Workload:", "Client flags", "Deployment:", "Engine (vLLM, TensorRT-LLM):", "Router:", "Outputs and run control:"} {
			if !strings.Contains(out, "\n"+title) {
				t.Errorf("%s --help has no group %q", cmd, title)
			}
		}
		seen := map[string]int{}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "--") && strings.HasPrefix(line, "      --") {
				seen[f[0]]++
			}
			if !strings.HasPrefix(line, " ") || len([]rune(line)) <= 90 {
				continue
			}
			long := false
			for _, w := range strings.Fields(line) {
				long = long || len(w) >= 30
			}
			if !long {
				t.Errorf("%s --help: line of %d columns > 90: %q", cmd, len([]rune(line)), line)
			}
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("%s --help lists %s %d times", cmd, name, n)
			}
		}
		for _, f := range []string{"--gpu", "--policy", "--request-rate", "--max-num-seqs", "--out"} {
			if seen[f] != 1 {
				t.Errorf("%s --help lacks %s", cmd, f)
			}
		}
	}
}
