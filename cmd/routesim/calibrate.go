package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/inputerr"
)

// calibrateCmd fits a profile to measured runs described by a spec file.
func calibrateCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim calibrate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("spec", "", "calibration spec (JSON): the measured runs, their setups and files (see README)")
	out := fs.String("out", "routesim-calibration", "write profile.json, report.json and report.txt to this directory")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	maxEvals := fs.Int("max-evals", 1500, "loss evaluations of the search over summary statistics")
	params := fs.StringSlice("fit", nil, "coefficients to fit (profile JSON names; default: "+strings.Join(calib.KernelParams, ",")+" for a kernel profile, "+strings.Join(calib.DefaultParams, ",")+" for a linear one)")
	reg := fs.Float64("prior-weight", 1, "weight of the priors (1 = MAP with the documented priors; 0 = none, a plain least-squares fit)")
	modelErr := fs.Float64("model-error", 0.1, "relative error (log units) each headline statistic may carry: measurement noise plus model error")
	derive := fs.String("derive", "", "instead of fitting, write each run's measured statistics to DIR/RUN.json (a derived table with its --source, for data whose files may not be redistributed)")
	source := fs.String("source", "", "with --derive: the citation written into every derived file")
	noPost := fs.Bool("no-posterior", false, "skip the Laplace approximation of the coefficients' uncertainty (faster; the profile then gives no bands)")
	ml := addMLEnergyFlags(fs)
	tb := addTRTBenchFlags(fs)
	bf := addBenchFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim calibrate --spec FILE [--fit-points RUN,...] [--out DIR]\n       routesim calibrate --vllm-bench FILE... | --lmbench FILE... | --guidellm FILE... --setup SCENARIO [--fit-points NAME,...] [--out DIR]\n       routesim calibrate --mlenergy FILE --osl FILE --model NAME [--gpu H100] [--tp N] [--loo] [--out DIR]\n       routesim calibrate --trtllm-bench FILE --model NAME --gpu GPU --tp N [--fit-rows ISL/OSL,...] [--out DIR]\n\nFit a step-time profile to measured runs (AIPerf exports, NVML samples, vllm bench serve results, LMBench summaries, GuideLLM reports, ML.ENERGY steady states, published trtllm-bench throughput) by re-simulating them.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if err := tb.check(fs.Changed, ml); err != nil {
		return err
	}
	if err := bf.check(fs.Changed, *spec); err != nil {
		return err
	}
	if tb.file != "" {
		if *spec != "" || *derive != "" {
			return usageError{fmt.Errorf("calibrate: --trtllm-bench replaces --spec and --derive; give one")}
		}
		if err := specOnly(fs.Changed); err != nil {
			return err
		}
		if err := checkCalibrateDirs(*out, ""); err != nil {
			return err
		}
		return calibrateTRTBench(tb, ml, *out, *quiet, stdout, stderr)
	}
	if err := ml.check(fs.Changed); err != nil {
		return err
	}
	if err := checkCalibrateDirs(*out, *derive); err != nil {
		return err
	}
	if ml.file != "" {
		if *spec != "" || *derive != "" {
			return usageError{fmt.Errorf("calibrate: --mlenergy replaces --spec and --derive; give one")}
		}
		if err := specOnly(fs.Changed); err != nil {
			return err
		}
		return calibrateMLEnergy(ml, *out, *quiet, stdout, stderr)
	}
	if fs.Changed("gpu") {
		return usageError{fmt.Errorf("calibrate: --gpu needs --mlenergy")}
	}
	if *spec == "" && !bf.given() {
		return usageError{fmt.Errorf("calibrate: --spec (or --vllm-bench, --lmbench, --guidellm, --mlenergy, --trtllm-bench) is required")}
	}
	if fs.Changed("source") && *derive == "" {
		return usageError{fmt.Errorf("calibrate: --source needs --derive (it is the citation written into derived files)")}
	}
	if given := changedOf(fs.Changed, fitFlags); *derive != "" && len(given) > 0 {
		return usageError{fmt.Errorf("calibrate: %s: settings of a fit; --derive fits nothing", strings.Join(given, ", "))}
	}
	var fitFlag []string
	if fs.Changed("fit") {
		fitFlag = *params
	}
	if err := calib.CheckOptions(*maxEvals, fitFlag, *reg, *modelErr); err != nil {
		return usageError{optionError(err)}
	}
	var s *calib.Spec
	var err error
	if bf.given() {
		s, err = bf.benchSpec()
	} else {
		s, err = calib.LoadSpec(*spec)
	}
	if err != nil {
		return err
	}
	// The spec's options stand unless a flag says otherwise.
	{
		o := s.Options
		if o.MaxEvals > 0 && !fs.Changed("max-evals") {
			*maxEvals = o.MaxEvals
		}
		if len(o.Fit) > 0 && !fs.Changed("fit") {
			*params = o.Fit
		}
		if o.PriorWeight != nil && !fs.Changed("prior-weight") {
			*reg = *o.PriorWeight
		}
		if o.ModelError > 0 && !fs.Changed("model-error") {
			*modelErr = o.ModelError
		}
	}
	if *derive != "" {
		if *source == "" {
			return usageError{fmt.Errorf("calibrate: --derive needs --source (the citation of the measurements)")}
		}
		obs, err := s.Load()
		if err != nil {
			return err
		}
		if err := s.CheckSetups(obs); err != nil {
			return err
		}
		derived := calib.Derive(obs, *source)
		names := make([]string, len(derived))
		for i, m := range derived {
			names[i] = m.Run + ".json"
		}
		if err := checkFileNames("--derive", *derive, names); err != nil {
			return err
		}
		lock, err := claimDir(*derive, "--derive", "")
		if err != nil {
			return err
		}
		defer lock.Release()
		d, err := atomicfile.NewDir(*derive)
		if err != nil {
			return err
		}
		for _, m := range derived {
			w, err := d.Create(m.Run + ".json")
			if err == nil {
				err = writeJSON(w, m)
			}
			if err != nil {
				d.Abort()
				return err
			}
		}
		if err := d.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %d derived files to %s\n", len(obs), *derive)
		return nil
	}
	r := *reg
	if r == 0 {
		r = -1
	}
	var fit []string
	if fs.Changed("fit") || len(s.Options.Fit) > 0 {
		fit = *params
	}
	opts := calib.Options{MaxEvals: *maxEvals, Params: fit, Regularization: r, ModelError: *modelErr, NoPosterior: *noPost}
	if !*quiet {
		opts.Progress = fitProgress(stderr, *maxEvals)
	}
	return fitAndPredict(s, bf.fitPoints, opts, *out, stdout)
}

// fitFlags are calibrate's settings of a spec fit, which neither an
// ML.ENERGY fit nor --derive uses.
var fitFlags = []string{"max-evals", "fit", "prior-weight", "model-error", "no-posterior", "fit-points"}

// changedOf lists, as flags, the names of flags that changed says were
// given.
func changedOf(changed func(string) bool, names []string) []string {
	var given []string
	for _, f := range names {
		if changed(f) {
			given = append(given, "--"+f)
		}
	}
	return given
}

// specOnly refuses spec-fit settings (and --source) given to an ML.ENERGY
// or trtllm-bench fit; changed says which flags were given.
func specOnly(changed func(string) bool) error {
	given := changedOf(changed, append(fitFlags[:len(fitFlags):len(fitFlags)], "source"))
	if len(given) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("calibrate: %s: settings of a --spec fit; --mlenergy and --trtllm-bench do not use them (see --iters, --isl-cv, --isl-mean)", strings.Join(given, ", "))}
}

// optionFlags are the flags of calib.CheckOptions' fields.
var optionFlags = map[string]string{"max_evals": "--max-evals", "fit": "--fit", "prior_weight": "--prior-weight", "model_error": "--model-error"}

// optionError renders calib.CheckOptions' problems with calibrate's flag
// names, one line each.
func optionError(err error) error {
	text := inputerr.Render(err, func(f string) string {
		if flag, ok := optionFlags[f]; ok {
			return flag
		}
		return f
	})
	return errors.New("calibrate: " + strings.ReplaceAll(text, "\n", "\ncalibrate: "))
}

// fitProgress reports a calibration's advance on w at most every two
// seconds: the stage, the simulations so far and the elapsed time.
func fitProgress(w io.Writer, maxEvals int) func(int, string) {
	start, last := time.Now(), time.Now()
	return func(evals int, stage string) {
		if time.Since(last) < 2*time.Second {
			return
		}
		last = time.Now()
		bound := ""
		if stage == "search" && maxEvals > 0 {
			bound = fmt.Sprintf(" of at most %d", maxEvals)
		}
		fmt.Fprintf(w, "calibrate: %s, %d simulations%s, %s elapsed\n", stage, evals, bound, time.Since(start).Round(time.Second))
	}
}

// writeFit writes a calibration's outputs to dir, all or nothing:
// profile.json, report.json and report.txt.
func writeFit(dir string, profile, report any, text string) error {
	lock, err := claimDir(dir, "--out", "")
	if err != nil {
		return err
	}
	defer lock.Release()
	d, err := atomicfile.NewDir(dir)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"profile.json", profile}, {"report.json", report}} {
		w, err := d.Create(f.name)
		if err == nil {
			err = writeJSON(w, f.v)
		}
		if err != nil {
			d.Abort()
			return err
		}
	}
	w, err := d.Create("report.txt")
	if err == nil {
		_, err = io.WriteString(w, text)
	}
	if err != nil {
		d.Abort()
		return err
	}
	return d.Commit()
}
