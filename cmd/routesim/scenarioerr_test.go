package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEngineErrorsNameTheScenarioLine: a setting the engine refuses
// after the scenario file is parsed (the cluster's own checks) is named
// where the user gave it: file:line: field for a value from the file,
// --flag for one from a flag (which overrides the file), in run, sweep and
// plan alike; a mention in the message follows the same rule.
func TestEngineErrorsNameTheScenarioLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	retry := write("retry.json", "{\"description\": \"retry\",\n \"n\": 2,\n \"retry\": -1}")
	mml := write("mml.json", "{\"description\": \"max_model_len\",\n \"max_model_len\": 10000000}")
	backoff := write("backoff.json", "{\"retry\": 2,\n \"retry_backoff\": 0}")
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--scenario", retry, "--first", "10"}, retry + ":3: retry: -1 must be in [0, 100]"},
		{[]string{"run", "--scenario", retry, "--first", "10", "--retry", "101"}, "--retry 101 must be in [0, 100]"},
		{[]string{"run", "--scenario", mml, "--first", "10"}, mml + ":2: max_model_len: 10000000 exceeds Qwen3-8B's max_position_embeddings 40960"},
		{[]string{"run", "--scenario", mml, "--first", "10", "--max-model-len", "15000000"}, "--max-model-len 15000000 exceeds"},
		{[]string{"run", "--scenario", backoff, "--first", "10"}, backoff + ":2: retry_backoff: must be > 0 when retry is set"},
		{[]string{"run", "--scenario", backoff, "--first", "10", "--retry", "3"}, backoff + ":2: retry_backoff: must be > 0 when --retry is set"},
		{[]string{"sweep", "--scenario", retry, "--first", "10", "--n", "2", "--seeds", "1", "--policy", "round-robin", "--out", out},
			retry + ":3: retry: -1 must be in [0, 100]"},
		{[]string{"plan", "--scenario", mml, "--first", "10", "--n", "1..2", "--seeds", "1", "--policy", "round-robin", "--slo-ttft-p95", "1000", "--out", out},
			mml + ":2: max_model_len: 10000000 exceeds"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || !slices.ContainsFunc(strings.Split(err.Error(), "\n"), func(l string) bool { return strings.HasPrefix(l, tc.want) }) {
			t.Errorf("%v:\n%v\nwant a line starting %q", tc.args, err, tc.want)
			continue
		}
		if exitCode(err) != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, exitCode(err))
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused sweep or plan wrote %s", out)
	}
}
