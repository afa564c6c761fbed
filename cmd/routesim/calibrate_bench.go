package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/scenario"
)

// benchFlags are calibrate's flags for benchmark clients' load points.
type benchFlags struct {
	vllm, lm, guide []string
	setup           string
	fitPoints       []string
}

func addBenchFlags(fs *pflag.FlagSet) *benchFlags {
	f := &benchFlags{}
	fs.StringSliceVar(&f.vllm, "vllm-bench", nil, "fit to `vllm bench serve --save-result` files, one load point each (named by the file's base name), instead of a spec; needs --setup")
	fs.StringSliceVar(&f.lm, "lmbench", nil, "fit to LMBench multi-round QA summary CSVs, one load point each (named by the file's base name), instead of a spec; needs --setup")
	fs.StringSliceVar(&f.guide, "guidellm", nil, "fit to GuideLLM JSON reports, one load point per benchmark (named FILE-INDEX-STRATEGY), instead of a spec; needs --setup")
	fs.StringVar(&f.setup, "setup", "", "with --vllm-bench, --lmbench or --guidellm: a scenario file giving the deployment and engine the server ran (gpu, model, tp, vllm_version, max_num_batched_tokens, …); the points replace its workload")
	fs.StringSliceVar(&f.fitPoints, "fit-points", nil, "with --vllm-bench, --lmbench, --guidellm or --spec: the runs to fit on (the light points); the others are predicted with 10–90 % bands over the fitted coefficients' posterior (default: fit on all)")
	return f
}

// check validates the bench flags; changed says which were given.
func (f *benchFlags) check(changed func(string) bool, spec string) error {
	var errs []string
	switch {
	case !f.given():
		if f.setup != "" {
			errs = append(errs, "--setup needs --vllm-bench, --lmbench or --guidellm")
		}
		if changed("fit-points") && spec == "" {
			errs = append(errs, "--fit-points needs --vllm-bench, --lmbench, --guidellm or --spec")
		}
	default:
		if spec != "" {
			errs = append(errs, "--vllm-bench, --lmbench and --guidellm replace --spec; give one")
		}
		if f.setup == "" {
			errs = append(errs, "--vllm-bench, --lmbench and --guidellm need --setup (a scenario file: the deployment and engine the server ran)")
		}
		for _, n := range []string{"derive", "source", "mlenergy", "trtllm-bench"} {
			if changed(n) {
				errs = append(errs, fmt.Sprintf("--%s does not go with --vllm-bench, --lmbench or --guidellm", n))
			}
		}
	}
	if changed("fit-points") && len(f.fitPoints) == 0 {
		errs = append(errs, "--fit-points names no run")
	}
	if len(errs) > 0 {
		return usageError{fmt.Errorf("calibrate: %s", strings.Join(errs, "; "))}
	}
	return nil
}

// given is whether load-point files were given.
func (f *benchFlags) given() bool { return len(f.vllm)+len(f.lm)+len(f.guide) > 0 }

// benchSpec builds the calibration of the --vllm-bench and --lmbench
// points.
func (f *benchFlags) benchSpec() (*calib.Spec, error) {
	base := scenario.Defaults()
	base.N, base.Policy = 1, "round-robin"
	setup, err := scenario.Load(f.setup, base)
	if err != nil {
		return nil, err
	}
	var files []calib.BenchFile
	for _, p := range f.vllm {
		files = append(files, calib.BenchFile{Field: "vllm_bench", Path: p})
	}
	for _, p := range f.lm {
		files = append(files, calib.BenchFile{Field: "lmbench", Path: p})
	}
	for _, p := range f.guide {
		files = append(files, calib.BenchFile{Field: "guidellm", Path: p})
	}
	return calib.BenchSpec(files, setup, "")
}

// fitAndPredict fits spec's fit points (all when points is empty) and
// predicts the others with bands, writing the profile and the report.
func fitAndPredict(s *calib.Spec, points []string, opts calib.Options, out string, stdout io.Writer) error {
	fitSpec, rest := s, (*calib.Spec)(nil)
	if len(points) > 0 {
		var err error
		if fitSpec, rest, err = s.Split(points); err != nil {
			return usageError{err}
		}
	}
	res, report, text, err := calib.FitPredict(fitSpec, rest, opts)
	if err != nil {
		return err
	}
	if out != "" {
		if err := writeFit(out, res.Profile, report, text); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "profile %s (%s)\n%s", res.Profile.Name, res.Profile.FitError, text)
	if out != "" {
		fmt.Fprintf(stdout, "wrote %s\n", strings.Join([]string{out + "/profile.json", "report.json", "report.txt"}, ", "))
	}
	return nil
}
