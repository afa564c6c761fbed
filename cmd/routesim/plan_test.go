package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/routesim/routesim/plan"
	"github.com/routesim/routesim/sim"
)

// offeredStats reads a run's requests.csv: TTFT p95 over offered requests
// (a request that did not complete is +∞) and completeness, computed here
// independently of package plan.
func offeredStats(t *testing.T, dir string) (p95, completeness float64) {
	t.Helper()
	rows := readCSVRows(t, filepath.Join(dir, "requests.csv"))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var ttft []float64
	ok := 0
	for _, r := range rows[1:] {
		v := math.Inf(1)
		if r[col["status"]] == "ok" {
			ok++
			var err error
			if v, err = strconv.ParseFloat(r[col["ttft_ms"]], 64); err != nil {
				t.Fatal(err)
			}
		}
		ttft = append(ttft, v)
	}
	slices.Sort(ttft)
	return sim.Quantile7(ttft, 0.95), float64(ok) / float64(len(ttft))
}

// The acceptance: on the default workload with --slo-ttft-p95 2000
// --min-completeness 0.99, each policy's planned N meets the objectives in
// routesim run at that N for every seed, and N−1 fails for at least one
// seed; the search runs at most ⌈log₂ range⌉ + 2 sizes.
func TestPlanMinimumNMeetsTheSLOAndOneLessDoesNot(t *testing.T) {
	out := t.TempDir()
	const seeds = 3
	if _, _, err := runCLI("plan", "--slo-ttft-p95", "2000", "--min-completeness", "0.99", "--seeds", fmt.Sprint(seeds), "--quiet", "--out", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var o plan.Output
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Plans) != 2 {
		t.Fatalf("%d plans, want one per default policy", len(o.Plans))
	}
	window := []string{"--trace", "arxiv-window", "--max-isl", "16384", "--skip", "60", "--first", "1000", "--rate-scale", "0.7365", "--max-model-len", "16384"}
	for _, p := range o.Plans {
		if !p.Met || p.MinN < 2 {
			t.Fatalf("%s: plan %+v; the default workload needs more than one A100 for these objectives", p.Policy, p)
		}
		if p.Evaluations > plan.MaxSteps(16) {
			t.Errorf("%s: %d sizes run, bound %d", p.Policy, p.Evaluations, plan.MaxSteps(16))
		}
		failedBelow := false
		for _, n := range []int{p.MinN, p.MinN - 1} {
			for s := 0; s < seeds; s++ {
				dir := filepath.Join(t.TempDir(), "run")
				args := append([]string{"run", "--policy", p.Policy, "--n", fmt.Sprint(n), "--seed", fmt.Sprint(s), "--out", dir}, window...)
				if _, _, err := runCLI(args...); err != nil {
					t.Fatal(err)
				}
				p95, comp := offeredStats(t, dir)
				met := p95 <= 2000 && comp >= 0.99
				if n == p.MinN && !met {
					t.Errorf("%s at its planned N = %d, seed %d: TTFT p95 over offered %.0f ms, completeness %.3f", p.Policy, n, s, p95, comp)
				}
				failedBelow = failedBelow || (n < p.MinN && !met)
			}
		}
		if !failedBelow {
			t.Errorf("%s: N − 1 = %d meets the objectives for every seed; the plan's N is not the smallest", p.Policy, p.MinN-1)
		}
	}
}

func TestPlanIsDeterministicAndResumes(t *testing.T) {
	args := []string{"plan", "--slo-ttft-p95", "1500", "--min-completeness", "0.99", "--policy", "round-robin,kv", "--seeds", "2",
		"--traffic-scale", "1,1.5", "--setting", "max-num-seqs=64,256", "--n", "2..12", "--gpu-hour-cost", "2.5", "--quiet"}
	a, c := t.TempDir(), t.TempDir()
	outA, _, err := runCLI(append(args, "--out", a)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(append(args, "--out", c, "--jobs", "1")...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plan.json", "plan.csv", "plots/slo-attainment-0.png", "plots/slo-attainment-3.svg"} {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(c, f))
		if err1 != nil || err2 != nil || string(x) != string(y) {
			t.Errorf("%s differs between two runs (or is missing: %v %v)", f, err1, err2)
		}
	}
	// A second run over the same --out reuses every run: same answer.
	outB, _, err := runCLI(append(args, "--out", a)...)
	if err != nil || strings.ReplaceAll(outB, a, "") != strings.ReplaceAll(outA, a, "") {
		t.Errorf("resumed plan differs: %v\n%s\n%s", err, outA, outB)
	}
	var o plan.Output
	b, _ := os.ReadFile(filepath.Join(a, "plan.json"))
	if err := json.Unmarshal(b, &o); err != nil || len(o.Plans) != 8 {
		t.Fatalf("plan.json: %v, %d plans (want 2 policies × 2 settings × 2 traffic scales)", err, len(o.Plans))
	}
	for _, p := range o.Plans {
		if p.Settings["max-num-seqs"] == "" || (p.Met && (p.CostPerMillion == nil || *p.CostPerMillion <= 0)) {
			t.Errorf("plan %+v lacks its setting or its cost", p)
		}
	}
}

func TestPlanRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "no objective"},
		{[]string{"plan", "--slo-ttft-p95", "-3"}, "slo-ttft-p95"},
		{[]string{"plan", "--min-completeness", "2"}, "min-completeness"},
		{[]string{"plan", "--slo-e2e-p95", "NaN"}, "slo-e2e-p95"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--confidence", "0"}, "--confidence"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--traffic-scale", "0"}, "--traffic-scale"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--setting", "bogus-flag=1"}, "bogus-flag"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--setting", "max-num-seqs"}, "FLAG=v1,v2"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--setting", "max-num-seqs=abc"}, "max-num-seqs=abc"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--policy", "nope"}, "unknown policy"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--n", "5..2"}, "--n"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--n", "1..100000000"}, "values must be in [1, 4096]"},
		{[]string{"plan", "--slo-ttft-p95", "1000", "--gpu-hour-cost", "-1"}, "--gpu-hour-cost"},
	} {
		_, _, err := runCLI(append(c.args, "--out", t.TempDir())...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
		if err != nil && exitCode(err) != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", c.args, exitCode(err))
		}
	}
}

// Shards fill the run cache; a final unsharded plan over the same --out
// reuses every run and prints the plan an unsharded run would.
func TestPlanShardsThenJoin(t *testing.T) {
	args := []string{"plan", "--slo-ttft-p95", "2000", "--policy", "round-robin,kv,least-loaded", "--seeds", "2", "--n", "2..8", "--quiet"}
	direct, joined := t.TempDir(), t.TempDir()
	want, _, err := runCLI(append(args, "--out", direct)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"0/2", "1/2"} {
		out, _, err := runCLI(append(args, "--out", joined, "--shard", sh)...)
		if err != nil || !strings.Contains(out, "shard "+sh) {
			t.Fatalf("shard %s: %v\n%s", sh, err, out)
		}
		if _, err := os.Stat(filepath.Join(joined, "plan.json")); err == nil {
			t.Fatalf("shard %s wrote plan.json", sh)
		}
	}
	got, _, err := runCLI(append(args, "--out", joined)...)
	if err != nil || strings.ReplaceAll(got, joined, "OUT") != strings.ReplaceAll(want, direct, "OUT") {
		t.Errorf("joined plan differs: %v\n%s\nwant\n%s", err, got, want)
	}
	a, _ := os.ReadFile(filepath.Join(direct, "plan.json"))
	b, _ := os.ReadFile(filepath.Join(joined, "plan.json"))
	if string(a) != string(b) {
		t.Error("plan.json differs between a direct and a sharded-then-joined plan")
	}
}

// With --uncertainty every posterior draw is a run towards --confidence.
func TestPlanCountsPosteriorDraws(t *testing.T) {
	out := t.TempDir()
	text, _, err := runCLI("plan", "--slo-ttft-p95", "2000", "--policy", "round-robin", "--seeds", "2", "--uncertainty", "2", "--n", "2..6", "--quiet", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "of 6 runs per size (2 seeds × (the fitted profile + 2 coefficient draws))") {
		t.Errorf("plan does not count seeds × (1 + draws) runs:\n%s", text)
	}
	var o plan.Output
	b, _ := os.ReadFile(filepath.Join(out, "plan.json"))
	if err := json.Unmarshal(b, &o); err != nil || o.Draws != 2 || len(o.Plans) != 1 {
		t.Fatalf("plan.json: %v %+v", err, o)
	}
	for _, s := range o.Plans[0].Evaluated {
		if k := s.Attainment * 6; math.Abs(k-math.Round(k)) > 1e-9 {
			t.Errorf("attainment %g at N = %d is not a count of 6 runs", s.Attainment, s.N)
		}
	}
}

// --scan runs every size and reuses a bisecting plan's runs.
func TestPlanScanRunsEverySize(t *testing.T) {
	out := t.TempDir()
	args := []string{"plan", "--slo-ttft-p95", "2000", "--min-completeness", "0.99", "--policy", "round-robin", "--seeds", "2", "--n", "2..6", "--quiet", "--out", out}
	bisect, _, err := runCLI(args...)
	if err != nil {
		t.Fatal(err)
	}
	scan, _, err := runCLI(append(args, "--scan")...)
	if err != nil {
		t.Fatal(err)
	}
	var o plan.Output
	b, _ := os.ReadFile(filepath.Join(out, "plan.json"))
	if err := json.Unmarshal(b, &o); err != nil || len(o.Plans) != 1 {
		t.Fatal(err)
	}
	p := o.Plans[0]
	if p.Evaluations != 5 || p.MaxEvaluations != 5 || !p.Met {
		t.Errorf("--scan over 2..6: %d of %d sizes, met %v", p.Evaluations, p.MaxEvaluations, p.Met)
	}
	minN := func(text string) string {
		f := strings.Fields(text[strings.Index(text, "\n  round-robin"):])
		return f[2]
	}
	if minN(bisect) != minN(scan) || minN(scan) != fmt.Sprint(p.MinN) {
		t.Errorf("bisection found N = %s, the scan N = %s (plan.json %d)", minN(bisect), minN(scan), p.MinN)
	}
}

func TestPlanDryRunWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan")
	text, _, err := runCLI("plan", "--slo-ttft-p95", "1000", "--traffic-scale", "1,2", "--dry-run", "--out", out)
	if err != nil || !strings.Contains(text, "4 searches (shard 0/1), at most 120 runs; nothing written") {
		t.Fatalf("%v\n%s", err, text)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--dry-run created %s (%v)", out, err)
	}
}
