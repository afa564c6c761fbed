package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

// mlenergyFlags are calibrate's flags for ML.ENERGY rows.
type mlenergyFlags struct {
	file, osl, model, gpu, task string
	tp, iters, jobs             int
	islCV, islMean              float64
	loo                         bool
}

func addMLEnergyFlags(fs *pflag.FlagSet) *mlenergyFlags {
	f := &mlenergyFlags{}
	fs.StringVar(&f.file, "mlenergy", "", "fit to ML.ENERGY Benchmark rows instead of a spec: llm_runs_flat.csv or a leaderboard tasks/<task>.json")
	fs.StringVar(&f.osl, "osl", "", "with --mlenergy: the task's output-length distribution (a leaderboard models/<model>__<task>.json, or {\"bins\",\"counts\"})")
	fs.StringVar(&f.model, "model", "", "with --mlenergy or --trtllm-bench: the model to fit (catalogue name; Hugging Face id with --mlenergy)")
	fs.StringVar(&f.gpu, "gpu", "H100", "with --mlenergy or --trtllm-bench: the GPU whose rows to fit")
	fs.IntVar(&f.tp, "tp", 0, "with --mlenergy or --trtllm-bench: the TP degree whose rows to fit (--mlenergy: 0 = the only one present)")
	fs.StringVar(&f.task, "task", "lm-arena-chat", "with --mlenergy: the benchmark task whose rows to fit")
	fs.Float64Var(&f.islCV, "isl-cv", 1, "with --mlenergy: coefficient of variation of the (unpublished) prompt lengths")
	fs.Float64Var(&f.islMean, "isl-mean", 0, "with --mlenergy: the prompts' mean length in tokens, if known (0 = fit it as a nuisance parameter)")
	fs.IntVar(&f.iters, "iters", 20, "with --mlenergy or --trtllm-bench: Levenberg–Marquardt iterations of the fit (each simulates every row about 12 times; a leave-one-out refit runs at most 6 from the full fit)")
	fs.BoolVar(&f.loo, "loo", false, "with --mlenergy: also refit without each row and predict it (leave-one-out over max_num_seqs)")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "with --mlenergy --loo: leave-one-out folds run in parallel")
	return f
}

// check validates the ML.ENERGY flags; changed says which were given.
func (f *mlenergyFlags) check(changed func(string) bool) error {
	var errs []string
	if f.file == "" {
		for _, n := range []string{"osl", "model", "tp", "task", "isl-cv", "isl-mean", "iters", "loo", "jobs"} {
			if changed(n) {
				errs = append(errs, fmt.Sprintf("--%s needs --mlenergy", n))
			}
		}
		if len(errs) > 0 {
			return usageError{fmt.Errorf("calibrate: %s", strings.Join(errs, "; "))}
		}
		return nil
	}
	if f.osl == "" {
		errs = append(errs, "--mlenergy needs --osl (the output-length distribution)")
	}
	if f.model == "" {
		errs = append(errs, "--mlenergy needs --model")
	}
	if f.tp < 0 || f.tp > 64 {
		errs = append(errs, fmt.Sprintf("--tp %d must be in [0, 64]", f.tp))
	}
	if !(f.islCV > 0 && f.islCV <= 10) {
		errs = append(errs, fmt.Sprintf("--isl-cv %g must be in (0, 10]", f.islCV))
	}
	if !(f.islMean >= 0 && f.islMean <= 16384) {
		errs = append(errs, fmt.Sprintf("--isl-mean %g must be in [0, 16384] (0 = fit it)", f.islMean))
	}
	if f.iters < 1 || f.iters > 1000 {
		errs = append(errs, fmt.Sprintf("--iters %d must be in [1, 1000]", f.iters))
	}
	if err := checkJobs(f.jobs); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return usageError{fmt.Errorf("calibrate: %s", strings.Join(errs, "; "))}
	}
	return nil
}

// calibrateMLEnergy fits a profile to ML.ENERGY rows and writes it.
func calibrateMLEnergy(f *mlenergyFlags, out string, quiet bool, stdout, stderr io.Writer) error {
	rows, err := readWith(f.file, calib.ReadMLEnergy)
	if err != nil {
		return err
	}
	osl, err := readWith(f.osl, calib.ReadOSLHistogram)
	if err != nil {
		return err
	}
	sel := calib.MLEnergySelect{Model: f.model, GPU: f.gpu, TP: f.tp, Task: f.task}
	mine, dep, err := sel.Select(rows, model.DefaultCatalogue())
	if err != nil {
		return usageError{err}
	}
	if !quiet {
		fmt.Fprintf(stderr, "fitting %s/%s/tp%d to %d rows...\n", dep.GPU.Name, dep.Model.Name, dep.TP, len(mine))
	}
	res, err := calib.CalibrateMLEnergy(mine, dep, osl, calib.MLEnergyOptions{Iters: f.iters, ISLCV: f.islCV, ISLMean: f.islMean})
	if err != nil {
		return err
	}
	var loo []calib.MLEnergyLOO
	if f.loo {
		if !quiet {
			fmt.Fprintf(stderr, "leave-one-out: %d refits on %d jobs...\n", len(mine), f.jobs)
		}
		if loo, err = runFolds(res, f.jobs, min(f.iters, 6)); err != nil {
			return err
		}
	}
	rep, text := res.Report(loo)
	if out != "" {
		if err := writeFit(out, res.Profile, rep, text); err != nil {
			return err
		}
	}
	fmt.Fprint(stdout, text)
	if out != "" {
		fmt.Fprintf(stdout, "wrote %s/profile.json, report.json, report.txt\n", out)
	}
	return nil
}

// runFolds runs the leave-one-out folds on jobs goroutines (calib runs
// nothing concurrently: callers parallelise); each fold is
// deterministic, and results land in row order.
func runFolds(res *calib.MLEnergyResult, jobs, iters int) ([]calib.MLEnergyLOO, error) {
	n := len(res.Rows)
	out := make([]calib.MLEnergyLOO, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = res.LeaveOneOutFold(i, iters)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readWith opens path and decodes it with read, which names the file in
// its errors.
func readWith[T any](path string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}
