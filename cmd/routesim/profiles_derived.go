package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/routesim/routesim/model"
)

// derivedCmd is routesim profiles --gpu/--model: what a run derives for
// each deployment of the given GPU (every catalogue GPU if none) and model
// (every catalogue model if none) that fits in memory: KV capacity,
// vLLM's batch defaults, the default profile's kind and source, and its
// implied prefill cost, MFU and decode bandwidth use.
func derivedCmd(w io.Writer, gpuArg, modelArg string) error {
	cat := model.DefaultCatalogue()
	gpus, models := cat.GPUs, cat.Models
	if gpuArg != "" {
		g, err := cat.LoadGPU(gpuArg)
		if err != nil {
			return usageError{fmt.Errorf("--gpu: %w", err)}
		}
		gpus = []model.GPU{g}
	}
	if modelArg != "" {
		m, err := cat.LoadModel(modelArg)
		if err != nil {
			return usageError{fmt.Errorf("--model: %w", err)}
		}
		models = []model.LLM{m}
	}
	for _, g := range gpus {
		if g.File != "" {
			printFileInputs(w, model.Deployment{GPU: g})
		}
	}
	for _, m := range models {
		if m.File != "" {
			printFileInputs(w, model.Deployment{Model: m})
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tMODEL\tTP\tQUANT\tKV TOKENS\tBATCH\tKIND\tPREFILL µs/tok\tPREFILL MFU\tDECODE HBM\tPROFILE FROM")
	rows := 0
	for _, g := range gpus {
		tokens, seqs := model.VLLMBatchDefaults(g.MemoryBytes, g.Name)
		for _, m := range models {
			for _, tp := range []int{1, 2, 4, 8} {
				for _, q := range []model.Quant{model.BF16, model.FP8} {
					if q == model.FP8 && g.FP8FLOPS == 0 {
						continue
					}
					d := model.Deployment{GPU: g, Model: m, TP: tp, Quant: q, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
					mem, err := d.Memory(model.Engine{MaxNumBatchedTokens: tokens, MaxNumSeqs: min(seqs, tokens)}, 16)
					if err != nil || mem.KVTokens < int64(min(m.MaxPositions, 4096)) {
						continue // does not fit (or holds too little to serve)
					}
					p := model.ProfileFor(d, false)
					im := p.Implied(d)
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d/%d\t%s\t%.1f\t%.0f%%\t%.0f%%\t%s\n", g.Name, m.Name, tp, q, mem.KVTokens, tokens, min(seqs, tokens),
						p.Kind, im.PrefillNsPerToken/1e3, 100*im.PrefillMFU, 100*im.DecodeHBMUtil, profileFrom(p))
					rows++
				}
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rows == 0 {
		return fmt.Errorf("no deployment of these fits: the weights and vLLM's activation reserve leave no room for 4,096 tokens of KV cache at TP ≤ 8")
	}
	_, err := fmt.Fprintf(w, "\nKV TOKENS: vLLM's \"GPU KV cache size\" at --gpu-memory-utilization 0.9, bf16 KV; BATCH: vLLM's max-num-batched-tokens/max-num-seqs defaults; PREFILL: a %d-token fresh chunk's step time per token and its FLOPs over peak; DECODE HBM: a %d-sequence × %d-token decode step's bytes over peak bandwidth.\n",
		model.ImpliedRefChunk, model.ImpliedRefDecodeSeq, model.ImpliedRefDecodeCtx)
	return err
}

// profileFrom says where a default profile comes from, briefly.
func profileFrom(p *model.Profile) string {
	if src, ok := model.TransferredFrom(p); ok {
		return "transfer of " + src
	}
	if p.IsKernel() && p.Kind != "measured" {
		s := "kernel prior: " + strings.SplitN(p.LinearCurve.Source, ",", 2)[0]
		if p.LinearCurve.CrossArchitecture {
			s += " (cross-architecture)"
		}
		return s
	}
	return p.Name
}
