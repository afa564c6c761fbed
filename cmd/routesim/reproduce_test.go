package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var reproduce = flag.Bool("reproduce", false, "refit the shipped calibrated profiles from their specs and compare byte for byte (minutes; .ci/run sets it)")

// shippedFits are the calibrated profiles routesim ships, each with the
// calibrate arguments that make it (paths from the repository's root) and
// the report saved beside its data.
var shippedFits = []struct {
	args            []string
	profile, report string
}{
	{[]string{"--spec", "validate/data/a100-qwen3-8b-n8/calib.json"}, "model/data/profiles/a100-sxm4-40gb-qwen3-8b-tp1-calibrated.json", "validate/data/a100-qwen3-8b-n8/calibration-report.txt"},
	{[]string{"--spec", "validate/data/h100-llama3.1-8b-inferencesim/calib.json"}, "model/data/profiles/h100-sxm5-80gb-llama-3.1-8b-tp1-calibrated.json", "validate/data/h100-llama3.1-8b-inferencesim/calibration-report.txt"},
	mlenergyFit("Qwen3-8B", 1),
	mlenergyFit("Qwen3-32B", 1),
	mlenergyFit("Qwen3-32B", 2),
	mlenergyFit("Llama-3.1-8B", 1),
	mlenergyFit("Llama-3.1-70B", 4),
	{[]string{"--trtllm-bench", "validate/data/h100-llama3.3-70b-trtllm-bench/rows.csv", "--gpu", "H100", "--model", "Llama-3.1-70B", "--tp", "2"},
		"model/data/profiles/h100-sxm5-80gb-llama-3.1-70b-tp2-trtllm-bench.json", "validate/data/h100-llama3.3-70b-trtllm-bench/calibration-report.txt"},
}

// mlenergyFit is the shipped ML.ENERGY fit of one H100 deployment, on its
// model's own output-length histogram.
func mlenergyFit(llm string, tp int) struct {
	args            []string
	profile, report string
} {
	name := fmt.Sprintf("h100-sxm5-80gb-%s-tp%d-mlenergy", strings.ToLower(llm), tp)
	const dir = "testdata/mlenergy-h100-v3/"
	return struct {
		args            []string
		profile, report string
	}{[]string{"--mlenergy", dir + "runs.csv", "--osl", dir + "osl-" + strings.ToLower(llm) + ".json", "--model", llm, "--tp", fmt.Sprint(tp)},
		"model/data/profiles/" + name + ".json", dir + name + "-report.txt"}
}

// TestShippedProfilesReproduce: `routesim calibrate --spec SPEC --out DIR`
// writes exactly the shipped profile (and the saved report). With -update
// it rewrites them.
func TestShippedProfilesReproduce(t *testing.T) {
	shipped, _ := filepath.Glob("../../model/data/profiles/*-calibrated.json")
	ml, _ := filepath.Glob("../../model/data/profiles/*-mlenergy.json")
	trt, _ := filepath.Glob("../../model/data/profiles/*-trtllm-bench.json")
	shipped = append(append(shipped, ml...), trt...)
	if len(shipped) != len(shippedFits) {
		t.Fatalf("%d calibrated profiles shipped, %d with a spec here", len(shipped), len(shippedFits))
	}
	if !*reproduce {
		t.Skip("refitting takes minutes: go test ./cmd/routesim -run TestShippedProfilesReproduce -reproduce")
	}
	for _, c := range shippedFits {
		t.Run(filepath.Base(c.profile), func(t *testing.T) {
			t.Parallel() // each fit is one goroutine: use every core
			out := filepath.Join(t.TempDir(), "fit")
			args := []string{"calibrate"}
			for i, a := range c.args {
				if i > 0 && (c.args[i-1] == "--spec" || c.args[i-1] == "--mlenergy" || c.args[i-1] == "--osl" || c.args[i-1] == "--trtllm-bench") {
					a = filepath.Join("..", "..", a)
				}
				args = append(args, a)
			}
			if _, _, err := runCLI(append(args, "--out", out, "--quiet")...); err != nil {
				t.Fatal(err)
			}
			files := []struct{ got, want string }{{"profile.json", c.profile}, {"report.txt", c.report}}
			if j := strings.TrimSuffix(c.report, ".txt") + ".json"; exists(filepath.Join("..", "..", j)) {
				files = append(files, struct{ got, want string }{"report.json", j})
			}
			for _, f := range files {
				got, err := os.ReadFile(filepath.Join(out, f.got))
				if err != nil {
					t.Fatal(err)
				}
				want := filepath.Join("..", "..", f.want)
				if *update {
					if err := os.WriteFile(want, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if old, err := os.ReadFile(want); err != nil || !bytes.Equal(got, old) {
					t.Errorf("%s differs from what its spec gives (%v); if intended: go test ./cmd/routesim -run TestShippedProfilesReproduce -reproduce -update", f.want, err)
				}
			}
		})
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
