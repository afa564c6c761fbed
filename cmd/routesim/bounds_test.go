package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runCLIWithin is runCLI with a deadline: a command that would run away
// fails the test instead of hanging it.
func runCLIWithin(t *testing.T, d time.Duration, args ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, _, err := runCLI(args...); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%v: still running after %s", args, d)
		return nil
	}
}

// TestOutOfRangeFlagsNameTheFlag: a number outside what a flag can mean
// (an absurd worker count, a duration that would wrap the nanosecond
// clock, an engine limit whose memory arithmetic overflows, a NaN) is
// refused at parse time with exit 2, an error naming the flag the user
// typed (and not another one), and nothing written to --out.
func TestOutOfRangeFlagsNameTheFlag(t *testing.T) {
	const data = "../../testdata/mlenergy-h100-v3/"
	small := []string{"--trace", smallTrace, "--skip", "0", "--first", "10"}
	// Each case's arguments are a fresh slice (slices.Concat), never an
	// append onto a shared one.
	sweep := func(a ...string) []string {
		return slices.Concat([]string{"sweep", "--n", "2", "--seeds", "2", "--quiet"}, small, a)
	}
	plan := func(a ...string) []string {
		return slices.Concat([]string{"plan", "--n", "1..2", "--seeds", "1", "--policy", "round-robin", "--quiet", "--slo-ttft-p95", "1000"}, small, a)
	}
	run := func(a ...string) []string { return slices.Concat([]string{"run", "--n", "2"}, small, a) }
	mlenergy := func(a ...string) []string {
		return slices.Concat([]string{"calibrate", "--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B", "--quiet"}, a)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // the flag the error must name
		not  string // a flag it must not name
	}{
		// Worker counts: an absurd --jobs exhausted memory or could not
		// make its channel, after the lock and manifest were written.
		{"sweep jobs 1e11", sweep("--policy", "round-robin,kv", "--jobs", "100000000000"), "--jobs", ""},
		{"sweep jobs maxint", sweep("--policy", "round-robin,kv", "--jobs", "9223372036854775807"), "--jobs", ""},
		{"plan jobs maxint", plan("--jobs", "9223372036854775807"), "--jobs", ""},
		{"validate jobs maxint", []string{"validate", "--jobs", "9223372036854775807"}, "--jobs", ""},
		{"calibrate jobs maxint", mlenergy("--jobs", "9223372036854775807"), "--jobs", ""},
		{"calibrate max-evals maxint", []string{"calibrate", "--spec", "../../validate/data/h100-llama3.1-8b-inferencesim/fit.json", "--quiet", "--max-evals", "9223372036854775807"}, "--max-evals", ""},
		{"sweep bootstrap maxint", sweep("--policy", "round-robin,kv", "--bootstrap", "9223372036854775807"), "--bootstrap", ""},
		// Durations past the clock: the run failed naming no flag, with
		// the wrapped time in the message.
		{"kv-event-lag", run("--policy", "kv", "--kv-event-lag", "2562047h"), "--kv-event-lag", ""},
		{"metrics-lag", run("--policy", "llm-d", "--metrics-lag", "2562047h"), "--metrics-lag", ""},
		{"retry-backoff", run("--retry", "2", "--retry-backoff", "2562047h"), "--retry-backoff", ""},
		{"negative retry-backoff", run("--retry-backoff", "-1s"), "--retry-backoff", ""},
		{"sweep kv-event-lag", sweep("--kv-event-lag", "2562047h"), "--kv-event-lag", ""},
		// Engine limits, each under its own name.
		{"max-num-seqs maxint", run("--max-num-seqs", "9223372036854775807"), "--max-num-seqs", ""},
		{"max-num-batched-tokens maxint", run("--max-num-batched-tokens", "9223372036854775807"), "--max-num-batched-tokens", ""},
		{"max-num-batched-tokens -1", run("--max-num-batched-tokens", "-1"), "--max-num-batched-tokens", "--max-num-seqs"},
		{"num-gpu-blocks-override maxint", run("--num-gpu-blocks-override", "9223372036854775807"), "--num-gpu-blocks-override", "-64"},
		{"kv-cache-tokens maxint", run("--kv-cache-tokens", "9223372036854775807"), "--kv-cache-tokens", ""},
		{"tp 0", run("--tp", "0"), "--tp", ""},
		{"gpu-memory-utilization NaN", run("--gpu-memory-utilization", "NaN"), "--gpu-memory-utilization", ""},
		// Sweep's own settings, at parse time.
		{"sweep slo-ttft NaN", sweep("--policy", "round-robin,kv", "--metric", "goodput", "--slo-ttft", "NaN"), "--slo-ttft", ""},
		{"sweep slo-ttft Inf", sweep("--policy", "round-robin,kv", "--metric", "goodput", "--slo-ttft", "Inf"), "--slo-ttft", ""},
		{"sweep slo-ttft unused", sweep("--slo-ttft", "500"), "--slo-ttft", ""},
		{"sweep empty policy", sweep("--policy="), "--policy", ""},
		{"sweep unread policy flag", sweep("--policy", "round-robin", "--cache-threshold", "0.5"), "--cache-threshold", ""},
		{"sweep unread policy flag, two policies", sweep("--policy", "round-robin,kv", "--mean-load-factor", "150"), "--mean-load-factor", ""},
		// Plan's traffic multiplier is named as typed, not as --rate-scale.
		{"plan traffic-scale 1e308", plan("--traffic-scale", "1e308"), "--traffic-scale", "--rate-scale"},
		{"plan traffic-scale tiny", plan("--traffic-scale", "1e-300"), "--traffic-scale", "--rate-scale"},
		{"plan gpu-hour-cost", plan("--gpu-hour-cost", "1e308"), "--gpu-hour-cost", ""},
		{"plan setting field", plan("--setting", "max-num-seqs=-1"), "--max-num-seqs", "max_num_seqs"},
		{"plan setting timeout", plan("--setting", "request-timeout-seconds=NaN"), "--request-timeout-seconds", "request_timeout_s"},
		{"plan unread policy flag", plan("--cache-threshold", "0.5"), "--cache-threshold", ""},
		{"plan unread policy setting", plan("--setting", "cache-threshold=0.2,0.4"), "--cache-threshold", ""},
		{"plan too many searches", plan("--setting", "max-num-seqs=1,2,3,4,5,6,7,8,9,10", "--setting", "retry=0,1,2,3,4,5,6,7,8,9",
			"--setting", "block-size=16,32,64,128", "--setting", "max-num-batched-tokens=1024,2048,4096,8192,16384,32768,65536,131072",
			"--setting", "retry-backoff=1s,2s,3s,4s"), "--setting", ""},
		{"sweep too many runs", sweep("--n", "1..4096", "--seeds", "10000"), "--seeds", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append(append([]string{}, tc.args...), "--out", out)
			err := runCLIWithin(t, 20*time.Second, args...)
			if err == nil {
				t.Fatalf("%v: no error", args)
			}
			msg := withFlags(err).Error()
			if exitCode(err) != 2 || !strings.Contains(msg, tc.want) || (tc.not != "" && strings.Contains(msg, tc.not)) {
				t.Errorf("%v: %q (exit %d); want exit 2 and an error naming %s%s", args, msg, exitCode(err), tc.want,
					map[bool]string{true: ", not " + tc.not}[tc.not != ""])
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%v: --out %s exists after a parse error (%v)", args, out, err)
			}
		})
	}
}

// TestSubNanosecondTimeoutTimesOut: a positive --request-timeout-seconds
// below the clock's nanosecond is the shortest timeout there is, one
// nanosecond, never "wait forever" (0): every request times out, as with
// 1e-9.
func TestSubNanosecondTimeoutTimesOut(t *testing.T) {
	run := func(a ...string) []string {
		return slices.Concat([]string{"run", "--trace", smallTrace, "--skip", "0", "--first", "20", "--n", "2"}, a)
	}
	want, _, err := runCLI(run("--request-timeout-seconds", "1e-9")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, " 0 completed") {
		t.Fatalf("a 1 ns timeout completed requests:\n%s", want)
	}
	for _, v := range []string{"4e-10", "1e-300", "5e-10"} {
		got, _, err := runCLI(run("--request-timeout-seconds", v)...)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("--request-timeout-seconds %s differs from 1e-9:\n%s\nwant:\n%s", v, got, want)
		}
	}
}
