package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileBLIS: --profile blis (or "profile": "blis" in a scenario)
// runs the deployment's BLIS linear fit where one is shipped; the default
// for the same deployment is a kernel profile; elsewhere it is a usage
// error that names the deployment and lists those with a fit, and nothing
// runs.
func TestProfileBLIS(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "blis.json")
	if err := os.WriteFile(scen, []byte("{\"gpu\": \"A100-SXM4-80GB\", \"model\": \"Llama-3.1-8B\",\n \"profile\": \"blis\"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"gpu\": \"A100-SXM4-40GB\",\n \"profile\": \"blis\"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--trace", smallTrace, "--n", "2", "--rate-scale", "4"}
	for _, tc := range []struct {
		args     []string
		want     string // in the header's profile line, or the error
		wantCode int
	}{
		{[]string{"--gpu", "A100-80GB", "--model", "Llama-3.1-8B", "--profile", "blis"}, "profile a100-sxm4-80gb.llama-3.1-8b.tp1.blis [measured]", 0},
		{[]string{"--gpu", "A100-80GB", "--model", "Llama-3.1-8B", "--tp", "2", "--profile", "blis"}, "profile a100-sxm4-80gb.llama-3.1-8b.tp2.blis [measured]", 0},
		{[]string{"--gpu", "H100", "--model", "Llama-3.1-70B", "--tp", "4", "--profile", "blis"}, "profile h100-sxm5-80gb.llama-3.1-70b.tp4.blis [measured]", 0},
		{[]string{"--scenario", scen}, "profile a100-sxm4-80gb.llama-3.1-8b.tp1.blis [measured]", 0},
		{[]string{"--gpu", "A100-80GB", "--model", "Llama-3.1-8B"}, "profile A100-SXM4-80GB.Llama-3.1-8B.tp1.bf16.kernel-prior [transfer]", 0},
		{[]string{"--gpu", "H100", "--model", "Llama-3.1-8B", "--tp", "2"}, "profile h100-sxm5-80gb.llama-3.1-8b.tp2.bf16.transfer [transfer]", 0},
		{[]string{"--gpu", "A100-40GB", "--profile", "blis"}, "--profile: blis: model: no BLIS fit for A100-SXM4-40GB/Qwen3-8B/tp1/bf16; BLIS fits exist for A100-SXM4-80GB/Llama-3.1-8B/tp1/bf16, A100-SXM4-80GB/Llama-3.1-8B/tp2/bf16, H100-SXM5-80GB/Llama-3.1-70B/tp4/bf16, H100-SXM5-80GB/Llama-3.1-8B/tp2/bf16", 2},
		{[]string{"--gpu", "A100-80GB", "--model", "Llama-3.1-8B", "--quant", "fp8", "--profile", "blis"}, "no BLIS fit for A100-SXM4-80GB/Llama-3.1-8B/tp1/fp8", 2},
		{[]string{"--scenario", bad}, bad + ":2: profile: blis: model: no BLIS fit for A100-SXM4-40GB/Qwen3-8B/tp1/bf16", 2},
	} {
		out, _, err := runCLI(append(base, tc.args...)...)
		if tc.wantCode != 0 {
			if err == nil || exitCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: err %v (exit %d), want exit %d with %q", tc.args, err, exitCode(err), tc.wantCode, tc.want)
			}
			if out != "" {
				t.Errorf("%v: refused, yet printed %q", tc.args, out)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if lines := strings.SplitN(out, "\n", 3); len(lines) < 2 || !strings.HasPrefix(lines[1], tc.want) {
			t.Errorf("%v: header\n%s\nwant its profile line to start %q", tc.args, out[:min(len(out), 400)], tc.want)
		}
	}
}
