package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/crash"
)

// TestAbsurdInputsAreRefused: values that used to overflow the clock, run
// away, exhaust memory or produce a wrong answer silently (issue 12 items
// 6, 7, 9 and 10) are refused with a message naming the flag and exit 2,
// before anything runs.
func TestAbsurdInputsAreRefused(t *testing.T) {
	h100 := "../../model/data/profiles/h100-sxm5-80gb-llama-3.1-8b-tp1-calibrated.json"
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		// 9: clock overflows and a NaN memory fraction.
		{[]string{"run", "--workload", "synthetic", "--requests", "10", "--rate", "1e-300"}, "--rate"},
		{[]string{"run", "--workload", "synthetic", "--requests", "10", "--rate", "1", "--arrival", "gamma", "--arrival-cv", "1e-300"}, "--arrival-cv"},
		{[]string{"run", "--workload", "sessions", "--concurrency", "2", "--think-time", "1e12", "--sessions", "4"}, "--think-time"},
		{[]string{"run", "--workload", "sessions", "--concurrency", "2", "--duration", "1e12"}, "--duration"},
		{[]string{"run", "--gpu-memory-utilization", "NaN"}, "gpu-memory-utilization"},
		{[]string{"sweep", "--policy", ",", "--n", "2", "--out", out}, "--policy"},
		{[]string{"sweep", "--seeds", "100000000", "--n", "2", "--out", out}, "--seeds"},
		// 10: unbounded lengths and durations.
		{[]string{"run", "--workload", "synthetic", "--requests", "10", "--rate", "1", "--isl-mean", "1e12"}, "--isl-mean"},
		{[]string{"run", "--workload", "synthetic", "--requests", "10", "--rate", "1", "--prefix-groups", "2", "--prefix-tokens", "1000000000000"}, "--prefix-tokens"},
		{[]string{"run", "--workload", "sessions", "--concurrency", "2", "--sessions", "4", "--new-tokens", "1e12"}, "--new-tokens"},
		{[]string{"run", "--workload", "sessions", "--concurrency", "2", "--sessions", "4", "--output-tokens", "1e12"}, "--output-tokens"},
		{[]string{"run", "--workload", "sessions", "--concurrency", "2", "--duration", "inf"}, "--duration"},
		// 7: wrap-arounds and self-comparisons.
		{[]string{"run", "--warmup", "1e10"}, "--warmup"},
		{[]string{"sweep", "--seed", "18446744073709551615", "--seeds", "2", "--n", "2", "--out", out}, "--seed"},
		{[]string{"sweep", "--policy", "kv,kv", "--n", "2", "--out", out}, "listed twice"},
		{[]string{"sweep", "--rate-scale", "1,1", "--n", "2", "--out", out}, "listed twice"},
		// 6: one validation path for run and sweep.
		{[]string{"sweep", "--profile", h100, "--gpu", "A100-SXM4-40GB", "--n", "2", "--out", out}, "--profile"},
		{[]string{"run", "--profile", h100, "--gpu", "A100-SXM4-40GB"}, "--profile"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want an error naming %q, exit 2", tc.args, err, exitCode(err), tc.want)
		}
	}
}

// TestTraceScaledPastHorizon: a trace stretched past the engine's horizon
// by --rate-scale is refused with the flag named, not run.
func TestTraceScaledPastHorizon(t *testing.T) {
	_, _, err := runCLI("run", "--rate-scale", "1e-6")
	if err == nil || !strings.Contains(err.Error(), "--rate-scale") || !strings.Contains(err.Error(), "horizon") {
		t.Errorf("%v", err)
	}
}

// TestExitCodes: usage errors exit 2, input and run errors 1, internal
// errors (a recovered panic) 3.
func TestExitCodes(t *testing.T) {
	if _, _, err := runCLI("run", "--n", "0"); exitCode(err) != 2 {
		t.Errorf("usage error: exit %d", exitCode(err))
	}
	if _, _, err := runCLI("run", "--trace", "/no/such/trace.jsonl"); err == nil || exitCode(err) != 1 {
		t.Errorf("missing input file: %v, exit %d", err, exitCode(err))
	}
	err := withFlags(crash.Guard(func() error { panic("boom") }))
	if exitCode(err) != 3 || !strings.Contains(err.Error(), "internal error: boom") {
		t.Errorf("panic: %v, exit %d", err, exitCode(err))
	}
}

// TestHelpIsOutput: --help, -h and `help CMD` print the command's help on
// stdout (so it pipes into less), `--version` and `version` print versions.
func TestHelpIsOutput(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"help", "run"}, {"sweep", "-h"}, {"policies", "--help"}, {"profiles", "--help"}, {"plan", "--help"}} {
		out, errOut, err := runCLI(args...)
		if err != nil || !strings.HasPrefix(out, "Usage: routesim "+map[bool]string{true: args[1], false: args[0]}[args[0] == "help"]) || errOut != "" {
			t.Errorf("%v: stdout %.60q, stderr %.60q, %v", args, out, errOut, err)
		}
	}
	if out, _, _ := runCLI("sweep", "--help"); !strings.Contains(out, "--rate-scale x[,x…]") || strings.Contains(out, "float64Slice") {
		t.Errorf("sweep help shows raw types:\n%s", out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		if out, _, err := runCLI(args...); err != nil || !strings.HasPrefix(out, "routesim "+Version) {
			t.Errorf("%v: %q, %v", args, out, err)
		}
	}
}

// TestUpstreamSpellings: every alias is accepted, lands on its flag and is
// shown in run's and sweep's help; --router-mode maps Dynamo's modes.
func TestUpstreamSpellings(t *testing.T) {
	run := []string{"run", "--trace", smallTrace, "--n", "2", "--first", "10"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tensor-parallel-size", "1"}, "tp1"},
		{[]string{"-tp", "1"}, "tp1"},
		{[]string{"--quantization", "bf16"}, "tp1"},
		{[]string{"--kv-cache-block-size", "32"}, "× 32 tokens"},
		{[]string{"--max-batch-size", "7"}, "max-num-seqs 7"},
		{[]string{"--max-num-tokens", "1024"}, "max-num-batched-tokens 1024"},
		{[]string{"--router-mode", "kv"}, "policy kv,"},
		{[]string{"--router-mode=random"}, "policy random"},
		{[]string{"--router-mode", "kv", "--router-kv-overlap-score-credit", "0.5", "--busy-threshold", "0.9"}, "policy kv,"},
		{[]string{"--router-mode", "kv", "--kv-overlap-score-weight", "2"}, "policy kv,"},
		{[]string{"--no-enable-prefix-caching"}, "prefix-cache hit rate 0.0%"},
	} {
		out, _, err := runCLI(append(append([]string{}, run...), tc.args...)...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("%v: %v; want %q in:\n%.400s", tc.args, err, tc.want, out)
		}
	}
	if _, _, err := runCLI("run", "--router-mode", "smart"); err == nil || exitCode(err) != 2 {
		t.Errorf("--router-mode smart: %v", err)
	}
	for _, cmd := range []string{"run", "sweep"} {
		help, _, _ := runCLI(cmd, "--help")
		for _, al := range flagAliases {
			if !strings.Contains(help, "--"+al.alias) {
				t.Errorf("%s --help does not show --%s", cmd, al.alias)
			}
		}
	}
}

// TestIgnoredFlagsAreErrors: a flag the chosen workload or policy does not
// read is an error naming it; a load axis without --n sweeps at one N.
func TestIgnoredFlagsAreErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--workload", "sessions", "--concurrency", "4", "--sessions", "8", "--rate-scale", "2"}, "--rate-scale has no effect with --workload sessions"},
		{[]string{"run", "--workload", "sessions", "--concurrency", "4", "--sessions", "8", "--skip", "5"}, "--skip has no effect with --workload sessions"},
		{[]string{"run", "--requests", "10"}, "--requests has no effect with --workload trace"},
		{[]string{"run", "--policy", "kv-admission", "--metrics-lag", "5ms"}, "--metrics-lag has no effect"},
		{[]string{"sweep", "--workload", "sessions", "--concurrency", "4", "--sessions", "8", "--skip", "5", "--out", t.TempDir()}, "--skip has no effect"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, _, err := runCLI("run", "--policy", "kv-admission", "--active-decode-blocks-threshold", "0.8", "--metrics-lag", "5ms", "--first", "10"); err != nil {
		t.Errorf("--metrics-lag with a decode threshold under 1 (the engine's kv_used_blocks can trip it): %v", err)
	}
	out, _, err := runCLI("sweep", "--workload", "sessions", "--concurrency", "2..4:2", "--sessions", "6", "--seeds", "1", "--policy", "round-robin", "--quiet", "--out", t.TempDir())
	if err != nil || !strings.Contains(out, "N [8]") {
		t.Errorf("a concurrency sweep without --n: %v\n%.300s", err, out)
	}
}

// TestDynamoVersionSetsTheOverloadCode: busy rejections answer 503 by
// default (v1.2) and 529 from v1.3 (--dynamo-version 1.4.0, PR #10941);
// an unmodelled release is an error naming the supported ones.
func TestDynamoVersionSetsTheOverloadCode(t *testing.T) {
	for _, tc := range []struct {
		version string
		code    string
	}{{"", "503"}, {"1.2.0", "503"}, {"1.4", "529"}, {"v1.4.0", "529"}} {
		dir := t.TempDir()
		args := []string{"run", "--trace", smallTrace, "--n", "1", "--policy", "kv-admission", "--active-decode-blocks-threshold", "0.02", "--out", dir}
		if tc.version != "" {
			args = append(args, "--dynamo-version", tc.version)
		}
		if _, _, err := runCLI(args...); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "requests.csv"))
		if !strings.Contains(string(b), ",rejected-busy,"+tc.code+",") {
			t.Errorf("--dynamo-version %q: no rejected-busy row with HTTP %s", tc.version, tc.code)
		}
	}
	if _, _, err := runCLI("run", "--dynamo-version", "one"); err == nil || !strings.Contains(err.Error(), "--dynamo-version") {
		t.Errorf("bad version: %v", err)
	}
	if _, _, err := runCLI("run", "--dynamo-version", "1.3.0"); err == nil || !strings.Contains(err.Error(), "--dynamo-version") || !strings.Contains(err.Error(), "0.9.0, 1.2.0, 1.4.0") {
		t.Errorf("an unmodelled release: %v", err)
	}
}
