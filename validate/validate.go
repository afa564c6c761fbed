// Package validate runs routesim against measured vLLM runs it was not
// fitted on: each case calibrates a profile on the case's light runs (or
// takes a prior or the built-in profile), predicts the others with a
// posterior band, and checks the prediction against issue 10's acceptance
// (saturated: TTFT p50 and mean within a factor 1.5 and the 10–90 % band
// holding at least 2 of 3 saturated statistics; unsaturated: within 15 %).
// A trtllm-bench case (trtbench.go) does the same with NVIDIA's published
// TensorRT-LLM throughput: it fits the TensorRT-LLM efficiency terms on
// some ISL/OSL rows and predicts the others, each within 15 %.
// The measured data are embedded (data/, each case with its SOURCE.md),
// so validation runs on a fresh clone.
package validate

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/model"
)

//go:embed data
var dataFS embed.FS

// Case is one validation set, described by data/NAME/case.json.
type Case struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Regime is "saturated", "unsaturated" or "calibration" (the runs a
	// built-in profile was fitted on: reproduced, not predicted).
	Regime string `json:"regime"`
	Note   string `json:"note"`
	// Fit is a calibration spec of the runs to fit on ("" = none);
	// Predict the spec of the runs to predict.
	Fit     string `json:"fit,omitempty"`
	Predict string `json:"predict"`
	// Profile "built-in" predicts with the deployment's built-in profile;
	// otherwise the fit's result, or without a fit the kernel prior.
	Profile string `json:"profile,omitempty"`
	// Checked are the statistics the acceptance looks at; SaturatedStats
	// those the band must hold (2 of 3) in SaturatedRuns (default: every
	// predicted run).
	Checked        []string `json:"checked"`
	SaturatedStats []string `json:"saturated_stats,omitempty"`
	SaturatedRuns  []string `json:"saturated_runs,omitempty"`
	// TRTBench, if set, makes this a case on published trtllm-bench
	// throughput instead of measured serving runs (Fit, Predict and
	// Profile unused).
	TRTBench *TRTBenchCase `json:"trtllm_bench,omitempty"`
}

// Cases lists the embedded cases, sorted by name.
func Cases() ([]Case, error) {
	entries, err := dataFS.ReadDir("data")
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := dataFS.ReadFile(path.Join("data", e.Name(), "case.json"))
		if err != nil {
			return nil, fmt.Errorf("validate: case %s: %w", e.Name(), err)
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("validate: %s/case.json: %w", e.Name(), err)
		}
		if c.Name != e.Name() {
			return nil, fmt.Errorf("validate: %s/case.json names %q", e.Name(), c.Name)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Options tune a validation run. The zero value is sensible.
type Options struct {
	// Cases names the cases to run (default: all).
	Cases []string
	// Draws is the number of coefficient sets per band (default 20).
	Draws int
	// Seeds averages the point prediction over seeds when the profile has
	// service noise (default 3).
	Seeds int
	// Jobs runs cases in parallel (default: all cores).
	Jobs int
	// MaxEvals bounds each fit's search (default 250).
	MaxEvals int
	// Progress, if set, hears what is being done.
	Progress func(string)
}

// Check is one acceptance criterion and whether it holds.
type Check struct {
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	What string `json:"what"`
}

// Result is one case's outcome.
type Result struct {
	Case      Case            `json:"case"`
	Profile   string          `json:"profile"`
	Coefs     []calib.Coef    `json:"coefficients,omitempty"`
	FitNotes  []string        `json:"fit_notes,omitempty"`
	Rows      []calib.PredRow `json:"rows"`
	Checks    []Check         `json:"checks"`
	Pass      bool            `json:"pass"`
	Posterior string          `json:"posterior"`
	// Terms describe the fitted terms against their priors, where the
	// case's kind reports them (trtllm-bench).
	Terms []string `json:"terms,omitempty"`
	// Summary is what the case says about each deployment it predicted
	// (Summarize, Trust).
	Summary []Entry `json:"summary"`
}

// Run validates every selected case.
func Run(opt Options) ([]Result, error) {
	if opt.Draws == 0 {
		opt.Draws = 20
	}
	if opt.Seeds == 0 {
		opt.Seeds = 3
	}
	if opt.MaxEvals == 0 {
		opt.MaxEvals = 250
	}
	all, err := Cases()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range opt.Cases {
		want[n] = true
	}
	var names []string
	for _, c := range all {
		names = append(names, c.Name)
	}
	for n := range want {
		found := false
		for _, c := range all {
			found = found || c.Name == n
		}
		if !found {
			return nil, fmt.Errorf("validate: unknown case %q (known: %s)", n, strings.Join(names, ", "))
		}
	}
	var todo []Case
	for _, c := range all {
		if len(want) == 0 || want[c.Name] {
			todo = append(todo, c)
		}
	}
	// Cases are independent: run them on up to Jobs goroutines; results
	// keep case order, so the output does not depend on Jobs.
	jobs := opt.Jobs
	if jobs < 1 {
		jobs = runtime.GOMAXPROCS(0)
	}
	if opt.Progress != nil {
		var mu sync.Mutex
		say := opt.Progress
		opt.Progress = func(s string) { mu.Lock(); defer mu.Unlock(); say(s) }
	}
	out := make([]Result, len(todo))
	var g errgroup.Group
	g.SetLimit(jobs)
	for i, c := range todo {
		g.Go(func() error {
			return crash.Guard(func() error {
				r, err := runCase(c, opt)
				if err != nil {
					return fmt.Errorf("validate: %s: %w", c.Name, err)
				}
				out[i] = *r
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func (o Options) say(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
}

func runCase(c Case, opt Options) (*Result, error) {
	dir, err := extract(c.Name)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if c.TRTBench != nil {
		return runTRTBenchCase(c, dir, opt)
	}
	pred, err := calib.LoadSpec(filepath.Join(dir, c.Predict))
	if err != nil {
		return nil, err
	}
	res := &Result{Case: c}
	var prof *model.Profile
	var post *model.Posterior
	how := "the kernel prior, nothing fitted"
	switch {
	case c.Fit != "":
		how = "fitted on its light runs"
		spec, err := calib.LoadSpec(filepath.Join(dir, c.Fit))
		if err != nil {
			return nil, err
		}
		opt.say("%s: calibrating on %d runs", c.Name, len(spec.Runs))
		fit, err := calib.Fit(spec, calib.Options{MaxEvals: opt.MaxEvals})
		if err != nil {
			return nil, err
		}
		prof, post = fit.Profile, fit.Profile.Posterior
		res.Coefs, res.FitNotes = fit.Report.Coefs, fit.Report.Notes
	default:
		setup := pred.Runs[0].Setup
		if c.Profile != "built-in" {
			setup.Profile = model.KernelPriorName
		} else {
			how = "the built-in profile on the runs it was fitted to"
		}
		b, err := setup.Build(nil)
		if err != nil {
			return nil, err
		}
		prof = b.Profile
		if post, err = b.Posterior(); err != nil {
			return nil, err
		}
	}
	res.Profile = prof.Name
	if post != nil {
		res.Posterior = post.Method
	}
	opt.say("%s: predicting %d runs (%d coefficient draws)", c.Name, len(pred.Runs), opt.Draws)
	rows, err := calib.Predict(pred, prof, post, opt.Draws, opt.Seeds, 0)
	if err != nil {
		return nil, err
	}
	res.Rows = rows
	setup := pred.Runs[0].Setup
	dep, err := setup.Deployment()
	if err != nil {
		return nil, err
	}
	res.Summary = []Entry{entry(c, dep, engineName(setup.Engine), how, rows)}
	res.Checks = accept(c, rows)
	res.Pass = true
	for _, ch := range res.Checks {
		res.Pass = res.Pass && ch.Pass
	}
	return res, nil
}

// engineName is a setup's engine as summaries name it.
func engineName(engine string) string {
	if engine == "" {
		return "vllm"
	}
	return engine
}

// extract copies a case's embedded files to a fresh temporary directory,
// where specs find their traces and measured tables by relative path.
func extract(name string) (string, error) {
	dir, err := os.MkdirTemp("", "routesim-validate-"+name+"-")
	if err != nil {
		return "", err
	}
	root := path.Join("data", name)
	err = fs.WalkDir(dataFS, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := dataFS.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, root+"/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
