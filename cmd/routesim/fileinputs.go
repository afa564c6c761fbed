package main

import (
	"fmt"
	"io"

	"github.com/routesim/routesim/model"
)

// printFileInputs says, under a run's header, what a GPU file and a
// Hugging Face config gave and what was derived from them (nothing for
// catalogue names, whose outputs stay as they were).
func printFileInputs(w io.Writer, d model.Deployment) {
	if g := d.GPU; g.File != "" {
		fmt.Fprintf(w, "gpu %s from %s (%s): %.1f GiB CUDA-visible, %.0f GB/s, %.0f TFLOP/s BF16 dense, TDP %.0f W\n",
			g.Name, g.File, g.Architecture, float64(g.MemoryBytes)/model.GiB, g.HBMBytesPerSec/1e9, g.BF16FLOPS/1e12, g.TDPWatts)
		for _, l := range g.Derived {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if m := d.Model; m.File != "" {
		fmt.Fprintf(w, "model %s from %s: %s\n", m.Name, m.File, modelShape(m))
		for _, l := range m.Notes {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

// modelShape is one line of a model's shape and derived sizes.
func modelShape(m model.LLM) string {
	return fmt.Sprintf("%d layers, hidden %d, intermediate %d, %d heads (%d KV) × %d, vocab %d, %d positions, %.2f B parameters, %d KiB KV per token (bf16)",
		m.Layers, m.Hidden, m.Intermediate, m.Heads, m.KVHeads, m.HeadDim, m.Vocab, m.MaxPositions, float64(m.Params())/1e9, m.KVBytesPerToken(2)/1024)
}

// printImplied says, for a run on a GPU file or a Hugging Face config,
// what its profile implies (as routesim profiles prints it): prefill cost
// per token and MFU, and a decode step's share of HBM bandwidth.
func printImplied(w io.Writer, d model.Deployment, p *model.Profile) {
	if d.GPU.File == "" && d.Model.File == "" {
		return
	}
	im := p.Implied(d)
	fmt.Fprintf(w, "its profile (below) implies: a %d-token prefill chunk %.1f µs/token at %.0f%% MFU; a %d-sequence × %d-token decode step at %.0f%% of HBM bandwidth\n",
		model.ImpliedRefChunk, im.PrefillNsPerToken/1e3, 100*im.PrefillMFU, model.ImpliedRefDecodeSeq, model.ImpliedRefDecodeCtx, 100*im.DecodeHBMUtil)
}
