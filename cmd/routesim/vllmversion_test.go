package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVLLMVersionSetsTheEngine: --vllm-version takes its release's
// defaults (0.13.0 schedules synchronously and reserves the pre-0.17
// activations, so fewer KV blocks), --async-scheduling and vLLM's
// --no-async-scheduling override the release's default, a scenario
// file's async_scheduling reads like the flag, and an unknown release or
// the flag on a release without it is refused, naming the setting where
// it was given.
func TestVLLMVersionSetsTheEngine(t *testing.T) {
	run := []string{"run", "--trace", smallTrace, "--n", "2", "--first", "30", "--rate-scale", "4"}
	cli := func(args ...string) string {
		t.Helper()
		out, _, err := runCLI(append(append([]string{}, run...), args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	def, noAsync := cli(), cli("--no-async-scheduling")
	if def == noAsync {
		t.Error("--no-async-scheduling changed nothing on the default release (0.20.1 schedules asynchronously)")
	}
	if cli("--vllm-version", "v0.20.1", "--async-scheduling=false") != noAsync {
		t.Error("--async-scheduling=false on v0.20.1 is not --no-async-scheduling on the default")
	}
	old := cli("--vllm-version", "0.13.0")
	blocks := func(out string) int {
		var n int
		if i := strings.Index(out, "; KV "); i < 0 {
			t.Fatalf("no KV in %.300s", out)
		} else if _, err := fmt.Sscanf(out[i:], "; KV %d blocks", &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if blocks(old) >= blocks(def) {
		t.Errorf("0.13.0 reserves the pre-0.17 activations: %d KV blocks, not fewer than 0.20.1's %d", blocks(old), blocks(def))
	}
	if cli("--vllm-version", "0.13.0", "--async-scheduling") == old {
		t.Error("--async-scheduling on 0.13.0 changed nothing")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	if err := os.WriteFile(file, []byte("{\"description\": \"async off\",\n \"async_scheduling\": false}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cli("--scenario", file) != noAsync {
		t.Error("a scenario's async_scheduling: false is not --no-async-scheduling")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--vllm-version", "0.28.0"}, "--vllm-version \"0.28.0\" is not a supported vLLM release (supported: 0.8.5, 0.8.5.post1,"},
		{[]string{"--vllm-version", "0.9.2", "--async-scheduling"}, "--async-scheduling vLLM 0.9.2 has no --async-scheduling (it came in 0.10.0)"},
		{[]string{"--engine", "trtllm", "--async-scheduling"}, "--async-scheduling is vLLM's"},
	} {
		_, _, err := runCLI(append(append([]string{}, run...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want %q", tc.args, err, exitCode(err), tc.want)
		}
	}
}
