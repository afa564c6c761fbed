package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/scenario"
)

// numericFlags are run's flags that take a number (sweep adds its own
// below): the fuzz target gives each random values.
func numericFlags() []string {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	spec := scenario.Defaults()
	registerSim(fs, &spec)
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Value.Type() {
		case "int", "int64", "uint64", "float64", "duration":
			out = append(out, f.Name)
		}
	})
	return out
}

// maxFuzzRepeat is the largest --repeat FuzzFlags runs: 20 requests ×
// 10,000 copies fit its 10 s, more is a long run asked for, not a runaway.
const maxFuzzRepeat = 10_000

// FuzzFlags: random values for every numeric flag of run and sweep (on a
// 20-request trace): an error or a result, never a panic or an internal
// error, and never a run longer than 10 s.
func FuzzFlags(f *testing.F) {
	flags := append(numericFlags(), "sweep:seeds", "sweep:seed", "sweep:n", "sweep:rate-scale", "sweep:bootstrap", "sweep:jobs", "sweep:slo-ttft",
		"plan:slo-ttft-p95", "plan:slo-itl-p95", "plan:slo-e2e-p95", "plan:min-completeness", "plan:min-goodput", "plan:confidence",
		"plan:traffic-scale", "plan:n", "plan:gpu-hour-cost", "plan:uncertainty", "plan:seeds", "plan:setting",
		"calibrate:iters", "calibrate:isl-cv", "calibrate:isl-mean", "calibrate:tp", "calibrate:jobs")
	for i := range flags {
		for _, v := range []string{"NaN", "Inf", "-1", "0", "1e300", "1e-300", "18446744073709551615", "2..3", "1..2147483648", "1..9223372036854775807:2"} {
			f.Add(uint16(i), v)
		}
	}
	out := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint16, value string) {
		flag := flags[int(which)%len(flags)]
		args := []string{"run", "--trace", smallTrace, "--skip", "0", "--first", "20", "--n", "2"}
		if name, ok := strings.CutPrefix(flag, "sweep:"); ok {
			args = []string{"sweep", "--trace", smallTrace, "--skip", "0", "--first", "20", "--n", "2", "--seeds", "1",
				"--policy", "round-robin", "--quiet", "--bootstrap", "10", "--out", out, "--force"}
			flag = name
		}
		if name, ok := strings.CutPrefix(flag, "plan:"); ok {
			args = []string{"plan", "--trace", smallTrace, "--skip", "0", "--first", "20", "--n", "1..3", "--seeds", "1",
				"--policy", "round-robin", "--quiet", "--slo-ttft-p95", "1000", "--out", filepath.Join(out, "plan")}
			flag = name
			if flag == "setting" {
				value = "max-num-seqs=" + value
			}
		}
		if name, ok := strings.CutPrefix(flag, "calibrate:"); ok {
			// H200 rows do not exist: the flags are checked, no fit runs.
			const data = "../../testdata/mlenergy-h100-v3/"
			args = []string{"calibrate", "--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B",
				"--gpu", "H200", "--quiet", "--out", filepath.Join(out, "calib")}
			flag = name
		}
		if v, err := strconv.ParseInt(value, 0, 64); err == nil && flag == "repeat" && v > maxFuzzRepeat {
			// Legitimate work that takes long: 20 requests × v copies
			// (a run's time grows with its requests; the bound on them is
			// tested in workload).
			t.Skipf("--repeat %d asks for %d requests", v, 20*v)
		}
		args = append(args, "--"+flag+"="+value)
		done := make(chan error, 1)
		go func() { _, _, err := runCLI(args...); done <- err }()
		select {
		case err := <-done:
			if err != nil && exitCode(err) == 3 {
				t.Fatalf("%v: internal error: %v", args, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: ran over 10 s", args)
		}
	})
}
