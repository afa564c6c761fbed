package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/validate"
)

// TestTrustLineInHeaders: run, sweep and plan on a deployment without a
// measured profile print one trust line under their header — the
// profile's kind and the nearest validation case's error as validate's
// embedded summary has it; on a measured profile they print none.
func TestTrustLineInHeaders(t *testing.T) {
	sum, err := validate.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var llmd validate.Entry
	for _, e := range sum.Entries {
		if e.Case == "llmd-llama3.1-8b-lmbench" {
			llmd = e
		}
	}
	if llmd.Case == "" {
		t.Fatal("no llm-d case in the summary")
	}
	want := fmt.Sprintf("trust: kernel prior, not measured on this deployment; nearest validation case (same GPU and model): llmd-llama3.1-8b-lmbench, A100-SXM4-80GB Llama-3.1-8B TP1, %s: max |error| %.1f %% (%s)",
		llmd.How, llmd.MaxAbsErrPct, llmd.Worst)
	dir := t.TempDir()
	a100 := []string{"--trace", smallTrace, "--gpu", "A100-80GB", "--model", "Llama-3.1-8B"}
	for _, tc := range []struct {
		name string
		args []string
		line int    // the trust line's index in stdout
		want string // "" = no trust line at all
	}{
		{"run", append([]string{"run", "--n", "2"}, a100...), 2, want},
		{"sweep", append([]string{"sweep", "--n", "1..2", "--seeds", "1", "--policy", "round-robin", "--out", filepath.Join(dir, "s")}, a100...), 1, want},
		{"plan", append([]string{"plan", "--n", "1..2", "--seeds", "1", "--policy", "round-robin", "--slo-ttft-p95", "100000", "--out", filepath.Join(dir, "p")}, a100...), 1, want},
		{"run, measured", []string{"run", "--trace", smallTrace, "--n", "2"}, 0, ""},
		{"sweep, measured", []string{"sweep", "--trace", smallTrace, "--n", "1..2", "--seeds", "1", "--policy", "round-robin", "--out", filepath.Join(dir, "s2")}, 0, ""},
	} {
		out, _, err := runCLI(tc.args...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		lines := strings.Split(out, "\n")
		if tc.want == "" {
			if strings.Contains(out, "trust:") {
				t.Errorf("%s: a measured profile's run printed a trust line:\n%s", tc.name, out)
			}
			continue
		}
		if len(lines) <= tc.line || !strings.HasPrefix(lines[tc.line], tc.want) {
			t.Errorf("%s: stdout\n%s\nwant line %d to start %q", tc.name, out, tc.line+1, tc.want)
		}
		if n := strings.Count(out, "trust:"); n != 1 {
			t.Errorf("%s: %d trust lines, want 1", tc.name, n)
		}
	}
}

// TestValidateSummaryNeedsEveryCase: --summary writes the digest of every
// case, so a --case subset is refused before anything runs.
func TestValidateSummaryNeedsEveryCase(t *testing.T) {
	f := filepath.Join(t.TempDir(), "summary.json")
	_, _, err := runCLI("validate", "--summary", f, "--case", "rtx4090-llama3.1-8b-llmservingsim")
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--summary summarises every case") {
		t.Errorf("err %v (exit %d), want a usage error", err, exitCode(err))
	}
}
