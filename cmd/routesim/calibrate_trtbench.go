package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

// trtbenchFlags are calibrate's flags for published trtllm-bench rows;
// --gpu, --model, --tp and --iters are the ML.ENERGY fit's.
type trtbenchFlags struct {
	file    string
	fitRows []string
}

func addTRTBenchFlags(fs *pflag.FlagSet) *trtbenchFlags {
	f := &trtbenchFlags{}
	fs.StringVar(&f.file, "trtllm-bench", "", "fit TensorRT-LLM's efficiency terms to published trtllm-bench throughput rows (CSV: table,gpu,model,hf_model,precision,tp,isl,osl,num_requests,output_tok_s,kv_cache_free_gpu_mem_fraction,source; see validate/data/h100-llama3.3-70b-trtllm-bench) for --gpu, --model and --tp")
	fs.StringSliceVar(&f.fitRows, "fit-rows", nil, "with --trtllm-bench: the ISL/OSL rows to fit on (e.g. 128/2048,5000/500; default: every row of the deployment); the others are predicted")
	return f
}

// check validates the trtllm-bench flags against the ML.ENERGY ones they
// share; changed says which were given.
func (f *trtbenchFlags) check(changed func(string) bool, ml *mlenergyFlags) error {
	if f.file == "" {
		if changed("fit-rows") {
			return usageError{fmt.Errorf("calibrate: --fit-rows needs --trtllm-bench")}
		}
		return nil
	}
	var errs []string
	if ml.file != "" {
		errs = append(errs, "--trtllm-bench replaces --mlenergy; give one")
	}
	for _, n := range []string{"osl", "task", "isl-cv", "isl-mean", "loo", "jobs"} {
		if changed(n) {
			errs = append(errs, fmt.Sprintf("--%s is an --mlenergy setting", n))
		}
	}
	if ml.model == "" {
		errs = append(errs, "--trtllm-bench needs --model")
	}
	if ml.tp < 1 || ml.tp > 64 {
		errs = append(errs, fmt.Sprintf("--trtllm-bench needs --tp in [1, 64] (have %d)", ml.tp))
	}
	if ml.iters < 1 || ml.iters > 1000 {
		errs = append(errs, fmt.Sprintf("--iters %d must be in [1, 1000]", ml.iters))
	}
	if len(errs) > 0 {
		return usageError{fmt.Errorf("calibrate: %s", strings.Join(errs, "; "))}
	}
	return nil
}

// calibrateTRTBench fits a TensorRT-LLM profile to published rows and
// writes it with its report.
func calibrateTRTBench(f *trtbenchFlags, ml *mlenergyFlags, out string, quiet bool, stdout, stderr io.Writer) error {
	rows, err := readWith(f.file, calib.ReadTRTBench)
	if err != nil {
		return err
	}
	mine, dep, err := calib.TRTBenchSelect{GPU: ml.gpu, Model: ml.model, TP: ml.tp}.Select(rows, model.DefaultCatalogue())
	if err != nil {
		return usageError{err}
	}
	fit, held := mine, []calib.TRTBenchRow(nil)
	if len(f.fitRows) > 0 {
		if fit, held, err = calib.SplitTRTBench(mine, f.fitRows); err != nil {
			return usageError{err}
		}
	}
	if !quiet {
		fmt.Fprintf(stderr, "fitting %s/%s/tp%d (TensorRT-LLM) to %d trtllm-bench rows...\n", dep.GPU.Name, dep.Model.Name, dep.TP, len(fit))
	}
	res, err := calib.CalibrateTRTBench(fit, dep, ml.iters)
	if err != nil {
		return err
	}
	rep, text, err := res.Report(held)
	if err != nil {
		return err
	}
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
