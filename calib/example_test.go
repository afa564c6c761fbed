package calib_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/scenario"
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
	// The "truth": the built-in kernel profile with four coefficients
	// changed.
	dep, _ := setup.Deployment()
	truth := *model.ProfileFor(dep, false)
	truth.StepBaseNs, truth.LinearScale, truth.DecodeNsPerCtxToken, truth.FrontendNs, truth.NoiseSigma = 22e6, 1.1, 140, 4e6, 0
	b, _ := setup.Build(&truth)
	res, _, _ := b.Run(setup.Seed).Exec()
	f, _ := os.Create(filepath.Join(dir, "profile_export.jsonl"))
	report.WriteAIPerfRecords(f, res.Records, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f.Close()

	// The spec names the run's setup and files; the fit starts from the
	// deployment's built-in profile, which is also the prior's centre.
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
	fmt.Printf("step base %.1f ms, layers at %.2f× their measured kernels, KV read %.0f ns/token, frontend %.1f ms\n",
		p.StepBaseNs/1e6, p.LinearScale, p.DecodeNsPerCtxToken, p.FrontendNs/1e6)
	// The MAP estimate sits between the prior (the built-in profile) and
	// the run; the posterior says how far each coefficient is pinned.
	for i, name := range p.Posterior.Params {
		if name == "step_base_ns" || name == "decode_ns_per_ctx_token" {
			fmt.Printf("%s: ±%.0f%% (prior ±%.0f%%)\n", name, 100*(math.Exp(p.Posterior.SD()[i])-1), 100*(math.Exp(p.Posterior.PriorSDLog[i])-1))
		}
	}
	// The truth is 22.0 ms, 1.10×, 140 ns, 4.0 ms.

	// Output:
	// step base 20.9 ms, layers at 1.03× their measured kernels, KV read 142 ns/token, frontend 5.5 ms
	// step_base_ns: ±11% (prior ±14%)
	// decode_ns_per_ctx_token: ±28% (prior ±28%)
}
