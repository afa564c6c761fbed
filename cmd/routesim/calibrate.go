package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/sim/export"
)

// calibrateCmd fits a profile to measured runs described by a spec file.
func calibrateCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim calibrate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("spec", "", "calibration spec (JSON): the measured runs, their setups and files (see README)")
	out := fs.String("out", "", "write profile.json, report.json and report.txt to this directory")
	maxEvals := fs.Int("max-evals", 1500, "loss evaluations of the search over summary statistics")
	params := fs.StringSlice("fit", calib.DefaultParams, "coefficients to fit (profile JSON names)")
	reg := fs.Float64("regularization", 0.01, "weight of log(θ/θ_start)² per coefficient (0 = none)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim calibrate --spec FILE [--out DIR]\n\nFit a step-time profile to measured runs (AIPerf exports, NVML samples) by re-simulating them.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *spec == "" {
		return usageError{fmt.Errorf("calibrate: --spec is required")}
	}
	if *maxEvals < 1 {
		return usageError{fmt.Errorf("calibrate: --max-evals %d must be ≥ 1", *maxEvals)}
	}
	s, err := calib.LoadSpec(*spec)
	if err != nil {
		return err
	}
	r := *reg
	if r == 0 {
		r = -1
	}
	res, err := calib.Fit(s, calib.Options{MaxEvals: *maxEvals, Params: *params, Regularization: r})
	if err != nil {
		return err
	}
	if *out != "" {
		d, err := export.NewDir(*out)
		if err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			v    any
		}{{"profile.json", res.Profile}, {"report.json", res.Report}} {
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
			_, err = io.WriteString(w, res.Report.String())
		}
		if err != nil {
			d.Abort()
			return err
		}
		if err := d.Commit(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "profile %s (%s)\n%s", res.Profile.Name, res.Profile.FitError, res.Report)
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %s\n", strings.Join([]string{*out + "/profile.json", "report.json", "report.txt"}, ", "))
	}
	return nil
}
