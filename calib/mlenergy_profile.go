package calib

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

// MLEnergySelect picks the rows of one deployment out of an ML.ENERGY
// file: a model (catalogue name or Hugging Face id), a GPU, a TP degree
// (0 = the only one the file has) and a task.
type MLEnergySelect struct {
	Model, GPU, Task string
	TP               int
}

// MLEnergyModelName maps a Hugging Face id to the catalogue's name:
// "meta-llama/Llama-3.1-8B-Instruct" → "Llama-3.1-8B".
func MLEnergyModelName(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return strings.TrimSuffix(id, "-Instruct")
}

// Select returns the rows of the selected deployment, sorted as given, and
// the deployment (weights bf16 or fp8 as the rows say; KV cache in the
// weights' dtype, vLLM's auto).
func (s MLEnergySelect) Select(rows []MLEnergyRow, cat *model.Catalogue) ([]MLEnergyRow, model.Deployment, error) {
	llm, err := cat.Model(MLEnergyModelName(s.Model))
	if err != nil {
		return nil, model.Deployment{}, err
	}
	gpu, err := cat.GPU(s.GPU)
	if err != nil {
		return nil, model.Deployment{}, err
	}
	task := s.Task
	if task == "" {
		task = "lm-arena-chat"
	}
	var out []MLEnergyRow
	tps := map[int]bool{}
	for _, r := range rows {
		g, gerr := cat.GPU(r.GPU)
		m, merr := cat.Model(MLEnergyModelName(r.ModelID))
		if gerr != nil || merr != nil || g.Name != gpu.Name || m.Name != llm.Name || r.Task != task {
			continue
		}
		if r.NumGPUs != r.TP {
			continue // data or expert parallel: not one TP group
		}
		tps[r.TP] = true
		if s.TP == 0 || r.TP == s.TP {
			out = append(out, r)
		}
	}
	if s.TP == 0 && len(tps) > 1 {
		var have []string
		for tp := range tps {
			have = append(have, fmt.Sprint(tp))
		}
		return nil, model.Deployment{}, fmt.Errorf("calib: %s on %s runs at several TP degrees (%s): pick one with --tp", llm.Name, gpu.Name, strings.Join(slices.Sorted(slices.Values(have)), ", "))
	}
	if len(out) < 2 {
		return nil, model.Deployment{}, fmt.Errorf("calib: %d %s rows for %s on %s (tp %d): a fit needs at least 2", len(out), task, llm.Name, gpu.Name, s.TP)
	}
	quant := model.Quant("bf16")
	if strings.Contains(strings.ToLower(out[0].Precision), "fp8") {
		quant = "fp8"
	}
	kv := 2
	if quant == "fp8" {
		kv = 1
	}
	return out, model.Deployment{GPU: gpu, Model: llm, TP: out[0].TP, Quant: quant, KVDtypeBytes: kv}, nil
}

// MLEnergyEngine is the benchmark's vLLM configuration for lm-arena-chat
// (ml-energy/benchmark configs/vllm/lm-arena-chat/*/H100/monolithic.config.yaml):
// vLLM 0.11.1, max-num-batched-tokens 8192, max-model-len 20480, prefix
// caching on (vLLM's default), 0.9 of memory.
func MLEnergyEngine() sim.EngineFlags {
	return sim.EngineFlags{BlockSize: 16, MaxModelLen: 20480, MaxNumBatchedTokens: 8192, VLLMVersion: "0.11.1"}
}

// MLEnergyBase is the profile an ML.ENERGY fit starts from: the
// deployment's kernel prior with CUDA graphs, no GPU-idle host time (the
// benchmark ran vLLM with --async-scheduling, which overlaps scheduling
// with the GPU), the board's power limit, and the frontend delay of the
// closest measured profile (the benchmark does not time the frontend). It
// also returns the prior's coefficient priors.
func MLEnergyBase(d model.Deployment) (*model.Profile, []model.Prior, string, error) {
	p, priors, err := model.KernelPrior(d, model.DefaultCatalogue(), false)
	if err != nil {
		return nil, nil, "", err
	}
	p.HostOverheadNs = 0
	p.PowerCapW = d.GPU.TDPWatts
	d.SetFLOPs(p)
	from := ""
	if q := model.ClosestMeasured(d); q != nil {
		p.FrontendNs, p.FrontendNsPerInputToken, from = q.FrontendNs, q.FrontendNsPerInputToken, q.Name
	}
	return p, priors, from, nil
}

// MLEnergyOptions tune CalibrateMLEnergy.
type MLEnergyOptions struct {
	// Iters bounds the Levenberg–Marquardt iterations (default 20).
	Iters int
	// ISLCV is the prompts' coefficient of variation (default 1).
	ISLCV float64
	// ISLMean, if > 0, is the prompts' known mean length: the fit keeps it
	// instead of fitting it as a nuisance parameter.
	ISLMean float64
	// Seed draws the workload (default 1).
	Seed uint64
}

// MLEnergyResult is a fitted profile with its fit and how it was set up.
type MLEnergyResult struct {
	Profile *model.Profile
	Fit     *MLEnergyFit
	Bench   *MLEnergyBench
	Priors  []model.Prior
	Rows    []MLEnergyRow
	// FrontendFrom names the profile whose frontend delay was borrowed.
	FrontendFrom string
}

// CalibrateMLEnergy fits a measured profile of d to its ML.ENERGY rows.
func CalibrateMLEnergy(rows []MLEnergyRow, d model.Deployment, osl *OSLHistogram, opt MLEnergyOptions) (*MLEnergyResult, error) {
	if opt.Iters <= 0 {
		opt.Iters = 20
	}
	if opt.ISLCV <= 0 {
		opt.ISLCV = 1
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	base, priors, from, err := MLEnergyBase(d)
	if err != nil {
		return nil, err
	}
	bench := &MLEnergyBench{Deploy: d, Engine: MLEnergyEngine(), OSL: osl, MaxOutput: 4096,
		ISLMean: ISLPrior.Centre, ISLCV: opt.ISLCV, Seed: opt.Seed}
	if opt.ISLMean > 0 {
		bench.ISLMean, bench.ISLKnown = opt.ISLMean, true
	}
	fit, err := FitMLEnergy(bench, rows, base, priors, opt.Iters)
	if err != nil {
		return nil, err
	}
	bench.ISLMean = fit.ISLMean
	p := fit.Profile
	p.Kind = "measured"
	p.TransferBase = model.TransferBaseKernelPrior
	p.Name = fmt.Sprintf("%s.%s.tp%d.mlenergy", strings.ToLower(d.GPU.Name), strings.ToLower(d.Model.Name), d.TP)
	lo, hi := rows[0].MaxNumSeqs, rows[0].MaxNumSeqs
	for _, r := range rows {
		lo, hi = min(lo, r.MaxNumSeqs), max(hi, r.MaxNumSeqs)
	}
	p.Source = fmt.Sprintf("routesim calibrate --mlenergy: ML.ENERGY Benchmark v3 %s, %s on %s TP %d, %d rows (max_num_seqs %d–%d), vLLM 0.11.1; starting from %s",
		rows[0].Task, rows[0].ModelID, rows[0].GPU, d.TP, len(rows), lo, hi, base.Name)
	sd := func(i int) float64 {
		if i < len(fit.SD) {
			return fit.SD[i]
		}
		return math.NaN()
	}
	var pinned []string
	for i, name := range MLEnergyParams {
		pinned = append(pinned, fmt.Sprintf("%s ±%.0f %%", name, 100*sd(i)))
	}
	var isl string
	if bench.ISLKnown {
		isl = fmt.Sprintf("The prompts' mean length was given, not fitted: %.0f tokens.", fit.ISLMean)
	} else {
		isl = fmt.Sprintf("The prompts' mean length, unpublished, was fitted as a nuisance parameter: %.0f tokens (±%.0f %%).", fit.ISLMean, 100*sd(len(MLEnergyParams)))
	}
	p.Note = fmt.Sprintf("Fitted (MAP with the kernel prior's priors, Levenberg–Marquardt) to the steady-state median ITL, output throughput and mean running batch of every row, re-simulated as the benchmark ran them (all requests at t = 0, output lengths from the task's distribution, its steady-state window); power line (power_busy_w, power_pj_per_flop) by least squares on the rows' power with idle and limit from the catalogue. Posterior log-sd: %s. %s Not pinned by these runs (kept from the prior): prefill_ns_per_token, prefill_attn_ns_per_pair, host_overhead_ns (0: --async-scheduling). Frontend delay borrowed from %s (the benchmark does not time it).",
		strings.Join(pinned, ", "), isl, orNone(from))
	worstPct, worst, sum, n := 0.0, "", 0.0, 0
	for _, r := range fit.Rows {
		for _, e := range []struct {
			name     string
			sim, got float64
		}{{"median ITL", r.Sim.MedianITLMs, r.Row.MedianITLMs}, {"output tok/s", r.Sim.TokensPerS, r.Row.TokensPerS}, {"power", r.Sim.PowerW, r.Row.PowerW}} {
			a := math.Abs(PctErr(e.sim, e.got))
			sum += a
			n++
			if a > worstPct {
				worstPct, worst = a, fmt.Sprintf("%s at max_num_seqs %d", e.name, r.Row.MaxNumSeqs)
			}
		}
	}
	p.FitError = fmt.Sprintf("max |error| %.1f%% (%s), mean |error| %.1f%% over %d statistics", worstPct, worst, sum/float64(n), n)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("calib: fitted profile invalid: %w", err)
	}
	return &MLEnergyResult{Profile: p, Fit: fit, Bench: bench, Priors: priors, Rows: rows, FrontendFrom: from}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none (the prior's)"
	}
	return s
}

// LeaveOneOutFold refits without row i (from the full fit, iters
// iterations) and predicts it.
func (r *MLEnergyResult) LeaveOneOutFold(i, iters int) (MLEnergyLOO, error) {
	rest := append(append([]MLEnergyRow(nil), r.Rows[:i]...), r.Rows[i+1:]...)
	b := *r.Bench
	fit, err := FitMLEnergy(&b, rest, r.Profile, r.Priors, iters)
	if err != nil {
		return MLEnergyLOO{}, err
	}
	b.ISLMean = fit.ISLMean
	st, err := b.Simulate(r.Rows[i], fit.Profile)
	if err != nil {
		return MLEnergyLOO{}, err
	}
	return MLEnergyLOO{Row: r.Rows[i], Pred: st}, nil
}
