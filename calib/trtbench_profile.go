package calib

import (
	"fmt"
	"math"
	"strings"

	"github.com/routesim/routesim/model"
)

// TRTBenchSelect picks the rows of one deployment out of a table file: a
// GPU, a model (catalogue name) and a TP degree.
type TRTBenchSelect struct {
	GPU   string `json:"gpu"`
	Model string `json:"model"`
	TP    int    `json:"tp"`
}

// Select returns the selected deployment's rows, in file order, and the
// deployment (an FP8 checkpoint's KV cache in FP8, as trtllm-bench runs
// NVIDIA's FP8 checkpoints).
func (s TRTBenchSelect) Select(rows []TRTBenchRow, cat *model.Catalogue) ([]TRTBenchRow, model.Deployment, error) {
	gpu, err := cat.GPU(s.GPU)
	if err != nil {
		return nil, model.Deployment{}, err
	}
	llm, err := cat.Model(s.Model)
	if err != nil {
		return nil, model.Deployment{}, err
	}
	var out []TRTBenchRow
	var have []string
	for _, r := range rows {
		g, gerr := cat.GPU(r.GPU)
		m, merr := cat.Model(r.Model)
		if gerr != nil || merr != nil {
			continue
		}
		if g.Name == gpu.Name && m.Name == llm.Name && r.TP == s.TP {
			out = append(out, r)
		} else {
			have = append(have, fmt.Sprintf("%s/%s/tp%d", g.Name, m.Name, r.TP))
		}
	}
	if len(out) == 0 {
		return nil, model.Deployment{}, fmt.Errorf("calib: no trtllm-bench rows for %s/%s/tp%d (have %s)", gpu.Name, llm.Name, s.TP, strings.Join(uniq(have), ", "))
	}
	quant, kv := model.BF16, 2
	for _, r := range out {
		if r.Precision != out[0].Precision {
			return nil, model.Deployment{}, fmt.Errorf("calib: line %d: precision %s, line %d: %s: one deployment's rows share their weights' precision", out[0].Line, out[0].Precision, r.Line, r.Precision)
		}
	}
	if out[0].Precision == "fp8" {
		quant, kv = model.FP8, 1
	}
	return out, model.Deployment{GPU: gpu, Model: llm, TP: s.TP, Quant: quant, KVDtypeBytes: kv}, nil
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TRTBenchResult is a profile fitted to trtllm-bench rows, with its fit.
type TRTBenchResult struct {
	Profile *model.Profile
	Fit     *TRTBenchFit
	Bench   *TRTBench
	Prior   *model.Profile
	Priors  []model.Prior
}

// CalibrateTRTBench fits the TensorRT-LLM efficiency terms of d
// (TRTBenchParams, from model.TRTLLMKernelPrior) to rows, iters
// Levenberg–Marquardt iterations at most, and names, sources and notes
// the profile: measured, engine trtllm, a transfer source for other
// deployments' TensorRT-LLM priors.
func CalibrateTRTBench(rows []TRTBenchRow, d model.Deployment, iters int) (*TRTBenchResult, error) {
	if iters <= 0 {
		iters = 20
	}
	base, priors, err := model.TRTLLMKernelPrior(d, model.DefaultCatalogue())
	if err != nil {
		return nil, err
	}
	bench := &TRTBench{Deploy: d, Seed: 1}
	fit, err := FitTRTBench(bench, rows, base, priors, TRTBenchParams, iters)
	if err != nil {
		return nil, err
	}
	p := fit.Profile
	p.Kind, p.Engine, p.TransferBase = "measured", model.EngineTRTLLM, model.TransferBaseTRTLLMKernelPrior
	p.Name = fmt.Sprintf("%s.%s.tp%d.%s.trtllm-bench", strings.ToLower(d.GPU.Name), strings.ToLower(d.Model.Name), d.TP, d.Quant)
	var arms []string
	for _, r := range rows {
		arms = append(arms, r.Arm())
	}
	r0 := rows[0]
	p.Source = fmt.Sprintf("routesim calibrate --trtllm-bench: NVIDIA's published TensorRT-LLM throughput (table %s, %s, %s TP %d): ISL/OSL %s; re-simulated as trtllm-bench throughput ran them; starting from %s",
		r0.Table, r0.HFModel, r0.GPU, r0.TP, strings.Join(arms, ", "), base.Name)
	var terms, pinned, kept []string
	for i, name := range fit.Params {
		c := mustCoef(name)
		ratio := *c.Field(p) / *c.Field(base)
		sd := math.NaN()
		if i < len(fit.SD) {
			sd = fit.SD[i]
		}
		terms = append(terms, fmt.Sprintf("%s ×%.3f of the prior (posterior ±%.0f %%, prior ±%.0f %%)", name, ratio, 100*sd, 100*fit.PriorSD[i]))
		if sd < model.NarrowedShare*fit.PriorSD[i] {
			pinned = append(pinned, name)
		} else {
			kept = append(kept, name)
		}
	}
	p.Note = fmt.Sprintf("TensorRT-LLM efficiency terms fitted (MAP with model.TRTLLMKernelPrior's priors, Levenberg–Marquardt, each row's total output throughput a log ratio with model error %.0f %%): %s. Narrowed by these rows (posterior sd below %.0f %% of the prior's): %s; near their prior: %s. Not fitted (the tables cannot tell them apart): prefill_ns_per_token, decode_ns_per_seq, host_overhead_ns; frontend delay is the kernel prior's (trtllm-bench has no HTTP frontend).",
		100*model.DefaultModelErrorLog, strings.Join(terms, "; "), 100*model.NarrowedShare, noneIfEmpty(pinned), noneIfEmpty(kept))
	worst, worstArm, sum := 0.0, "", 0.0
	for _, r := range fit.Rows {
		e := math.Abs(PctErr(r.Sim.TokensPerS, r.Row.TokensPerS))
		sum += e
		if e > worst {
			worst, worstArm = e, r.Row.Arm()
		}
	}
	p.FitError = fmt.Sprintf("max |error| %.1f%% (%s), mean |error| %.1f%% over %d rows' output throughput", worst, worstArm, sum/float64(len(fit.Rows)), len(fit.Rows))
	d.SetFLOPs(p)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("calib: fitted profile invalid: %w", err)
	}
	return &TRTBenchResult{Profile: p, Fit: fit, Bench: bench, Prior: base, Priors: priors}, nil
}

func noneIfEmpty(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// TRTBenchTable renders rows measured against simulated (or predicted):
// ISL/OSL, requests, trtllm-bench's settings, throughput and error.
func TRTBenchTable(rows []TRTBenchRow, sims []TRTBenchSim) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %8s %9s %9s %10s %10s %7s\n", "ISL/OSL", "REQUESTS", "MAX_BATCH", "MAX_TOKENS", "MEASURED", "SIMULATED", "ERROR")
	for i, r := range rows {
		s := sims[i]
		fmt.Fprintf(&b, "%-11s %8d %9d %9d %10.0f %10.0f %+6.1f%%\n", r.Arm(), r.Requests, s.Settings.MaxBatchSize, s.Settings.MaxNumTokens,
			r.TokensPerS, s.TokensPerS, PctErr(s.TokensPerS, r.TokensPerS))
	}
	return b.String()
}
