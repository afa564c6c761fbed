package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/validate"
)

// validateCmd predicts measured runs routesim was not fitted on and
// checks the predictions against the acceptance criteria.
func validateCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim validate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	cases := fs.StringSlice("case", nil, "cases to run (default: all; see --list)")
	list := fs.Bool("list", false, "list the cases and exit")
	draws := fs.Int("draws", 20, "coefficient draws from the posterior per band")
	jobs := fs.Int("jobs", runtime.NumCPU(), "simulations in parallel")
	out := fs.String("out", "", "write validation.json to this directory")
	strict := fs.Bool("strict", false, "exit 1 if any acceptance check fails")
	summary := fs.String("summary", "", "also write the summary runs quote to say how far to trust them (every case's deployment, how it was predicted, its errors) to this file; routesim embeds validate/summary.json, regenerated with --summary validate/summary.json")
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim validate [--case NAME,...] [--out DIR]\n\nCalibrate on measured light runs, predict measured saturated ones (embedded, with their sources), print measured vs predicted with the model-uncertainty band, and check issue 10's acceptance.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("validate: unexpected arguments %q", fs.Args())}
	}
	if *draws < 1 || *draws > 1000 {
		return usageError{fmt.Errorf("--draws %d must be in [1, 1000]", *draws)}
	}
	if err := checkJobs(*jobs); err != nil {
		return usageError{err}
	}
	if *summary != "" && len(*cases) > 0 {
		return usageError{fmt.Errorf("--summary summarises every case: drop --case")}
	}
	if *list {
		all, err := validate.Cases()
		if err != nil {
			return err
		}
		for _, c := range all {
			fmt.Fprintf(stdout, "%-36s %-12s %s\n", c.Name, c.Regime, c.Title)
		}
		return nil
	}
	if *out != "" {
		lock, err := claimDir(*out, "--out", "")
		if err != nil {
			return err
		}
		defer lock.Release()
		if err := checkWritable(*out); err != nil {
			return err
		}
	}
	opt := validate.Options{Cases: *cases, Draws: *draws, Jobs: *jobs}
	if !*quiet {
		opt.Progress = func(s string) { fmt.Fprintln(stderr, s) }
	}
	res, err := validate.Run(opt)
	if err != nil {
		if strings.Contains(err.Error(), "unknown case") {
			return usageError{err}
		}
		return err
	}
	if err := printValidation(stdout, res); err != nil {
		return err
	}
	if *out != "" {
		d, err := atomicfile.NewDir(*out)
		if err != nil {
			return err
		}
		w, err := d.Create("validation.json")
		if err == nil {
			err = writeJSON(w, res)
		}
		if err != nil {
			d.Abort()
			return err
		}
		if err := d.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s/validation.json\n", *out)
	}
	if *summary != "" {
		sum := validate.Summarize(res)
		if err := atomicfile.WriteFile(*summary, func(w io.Writer) error { _, err := w.Write(sum.Marshal()); return err }); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", *summary)
	}
	if *strict {
		for _, r := range res {
			if !r.Pass {
				return fmt.Errorf("validate: case %s fails its acceptance", r.Case.Name)
			}
		}
	}
	return nil
}

func printValidation(w io.Writer, res []validate.Result) error {
	for _, r := range res {
		fmt.Fprintf(w, "== %s [%s]\n   %s\n   profile %s\n", r.Case.Name, r.Case.Regime, r.Case.Title, r.Profile)
		var not []string
		for _, c := range r.Coefs {
			if c.Fitted && !c.Identified {
				not = append(not, c.Name)
			}
		}
		switch {
		case len(r.Terms) > 0:
			fmt.Fprintf(w, "   fitted (%s):\n", r.Posterior)
			for _, t := range append(append([]string(nil), r.Terms...), r.FitNotes...) {
				fmt.Fprintf(w, "     %s\n", t)
			}
		case len(r.Coefs) > 0:
			fmt.Fprintf(w, "   fitted on the light runs; not pinned by them: %s\n", strings.Join(not, ", "))
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "run\tstatistic\tmeasured\tpredicted\tband 10%\tband 90%\terror\tin band\t\n")
		for _, row := range r.Rows {
			lo, hi, in := "-", "-", "-"
			if row.BandLo != nil {
				lo, hi, in = fmt.Sprintf("%.4g", *row.BandLo), fmt.Sprintf("%.4g", *row.BandHi), "no"
				if row.InBand {
					in = "yes"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s\t%s\t%+.1f%%\t%s\t\n", row.Arm, row.Stat, row.Measured, row.Predicted, lo, hi, row.ErrPct, in)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, c := range r.Checks {
			mark := "PASS"
			if !c.Pass {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "   %s  %-28s %s\n", mark, c.Name, c.What)
		}
		verdict := "meets its acceptance"
		if !r.Pass {
			verdict = "FAILS its acceptance"
		}
		fmt.Fprintf(w, "   → %s %s\n   note: %s\n\n", r.Case.Name, verdict, r.Case.Note)
	}
	return nil
}
