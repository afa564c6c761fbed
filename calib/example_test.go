package calib_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sim/export"
	"github.com/routesim/routesim/sim/scenario"
)

// Fitting a profile from a directory of AIPerf exports: describe each
// measured run (its setup and files) in a spec, then Fit. Here the
// "measured" run is simulated, so the fit can be checked against the
// coefficients that produced it.
func ExampleFit() {
	dir, _ := os.MkdirTemp("", "calib-example")
	defer os.RemoveAll(dir)

	// A measured run: 200 arXiv-trace requests on 4 workers, exported by
	// AIPerf as profile_export.jsonl (here: by routesim, from known truth).
	setup := scenario.Defaults()
	setup.Trace, setup.MaxISL, setup.First, setup.N, setup.RateScale = "arxiv-window", 16384, 200, 4, 0.1
	// The "truth": the built-in profile with four coefficients changed.
	dep, _ := setup.Deployment()
	truth := *model.ProfileFor(dep)
	truth.StepBaseNs, truth.PrefillNsPerToken, truth.DecodeNsPerCtxToken, truth.FrontendNs, truth.NoiseSigma = 15e6, 70e3, 120, 4e6, 0
	b, _ := setup.Build(&truth)
	pol, _ := setup.NewPolicy()
	res, _ := sim.Run(b.Config, b.Work, pol)
	f, _ := os.Create(filepath.Join(dir, "profile_export.jsonl"))
	export.WriteAIPerfRecords(f, res.Records)
	f.Close()

	// The spec names the run's setup and files; the fit starts from the
	// deployment's built-in profile.
	spec := fmt.Sprintf(`{"name": "example", "runs": [{"name": "run1", "arm": "rr",
		"setup": {"trace": "arxiv-window", "max_isl": 16384, "first": 200, "n": 4, "rate_scale": 0.1},
		"aiperf_records": "profile_export.jsonl"}]}`)
	os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644)

	s, err := calib.LoadSpec(filepath.Join(dir, "spec.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fit, err := calib.Fit(s, calib.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := fit.Profile
	fmt.Printf("step base %.1f ms, prefill %.0f µs/token, KV read %.0f ns/token, frontend %.1f ms\n",
		p.StepBaseNs/1e6, p.PrefillNsPerToken/1e3, p.DecodeNsPerCtxToken, p.FrontendNs/1e6)
	// Output:
	// step base 15.0 ms, prefill 70 µs/token, KV read 120 ns/token, frontend 4.0 ms
}
