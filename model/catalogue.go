package model

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

//go:embed data/catalogue.json
var catalogueJSON []byte

// GPU is one accelerator's specification. MemoryBytes is the CUDA-visible
// total, which is what vLLM multiplies by --gpu-memory-utilization.
type GPU struct {
	Name           string  `json:"name"`
	MemoryBytes    int64   `json:"memory_bytes"`
	HBMBytesPerSec float64 `json:"hbm_bytes_per_s"`
	BF16FLOPS      float64 `json:"bf16_flops"` // dense, without sparsity
	FP8FLOPS       float64 `json:"fp8_flops"`  // dense; 0 where unsupported
	TDPWatts       float64 `json:"tdp_w"`
	IdleWatts      float64 `json:"idle_w"`
	Sources        string  `json:"sources"`
	// VLLMMaxNumBatchedTokens and VLLMMaxNumSeqs are vLLM's OpenAI-server
	// defaults on this GPU (8192/1024 with ≥ 70 GiB, except A100s;
	// 2048/256 otherwise).
	VLLMMaxNumBatchedTokens int `json:"vllm_max_num_batched_tokens"`
	VLLMMaxNumSeqs          int `json:"vllm_max_num_seqs"`
	// RooflineMFU is the prefill FLOP efficiency a roofline estimate
	// assumes (BLIS's mfuPrefill for the GPU family).
	RooflineMFU float64 `json:"roofline_prefill_mfu"`
	// KernelLibrary names the measured layer-time file (model/data/kernels)
	// a kernel prior starts from; KernelSameArchitecture says it was
	// measured on this architecture (else it is transferred by peak FLOP/s
	// and bandwidth, with a wider prior). Empty: the A100 library,
	// transferred.
	KernelLibrary          string `json:"kernel_library"`
	KernelSameArchitecture bool   `json:"kernel_same_architecture"`
}

// Catalogue holds the GPUs and LLMs routesim knows by name.
type Catalogue struct {
	GPUs   []GPU `json:"gpus"`
	Models []LLM `json:"models"`
}

// DefaultCatalogue parses the embedded catalogue. It returns a fresh copy on
// every call, so callers may modify it.
func DefaultCatalogue() *Catalogue {
	var c Catalogue
	dec := json.NewDecoder(bytes.NewReader(catalogueJSON))
	if err := dec.Decode(&c); err != nil {
		panic("model: embedded catalogue is corrupt: " + err.Error())
	}
	if err := c.validate(); err != nil {
		panic("model: embedded catalogue is incomplete: " + err.Error())
	}
	return &c
}

// validate checks that every GPU carries the fields routesim reads from it.
func (c *Catalogue) validate() error {
	for _, g := range c.GPUs {
		if g.MemoryBytes <= 0 || g.HBMBytesPerSec <= 0 || g.BF16FLOPS <= 0 || g.VLLMMaxNumBatchedTokens < 1 ||
			g.VLLMMaxNumSeqs < 1 || !(g.RooflineMFU > 0 && g.RooflineMFU <= 1) || g.KernelLibrary == "" {
			return fmt.Errorf("GPU %s: memory, bandwidth, BF16 FLOP/s, vLLM defaults, roofline MFU and kernel library are required", g.Name)
		}
		if _, err := kernelFS.ReadFile("data/kernels/" + g.KernelLibrary); err != nil {
			return fmt.Errorf("GPU %s: kernel_library %q: %w", g.Name, g.KernelLibrary, err)
		}
	}
	return nil
}

// GPU returns the GPU with the given name (case-insensitive).
func (c *Catalogue) GPU(name string) (GPU, error) {
	for _, g := range c.GPUs {
		if strings.EqualFold(g.Name, name) {
			return g, nil
		}
	}
	names := make([]string, len(c.GPUs))
	for i, g := range c.GPUs {
		names[i] = g.Name
	}
	return GPU{}, unknown("GPU", name, names)
}

// Model returns the LLM with the given name (case-insensitive; the Hugging
// Face id is accepted too).
func (c *Catalogue) Model(name string) (LLM, error) {
	for _, m := range c.Models {
		if strings.EqualFold(m.Name, name) || strings.EqualFold(m.HFID, name) {
			return m, nil
		}
	}
	names := make([]string, len(c.Models))
	for i, m := range c.Models {
		names[i] = m.Name
	}
	return LLM{}, unknown("model", name, names)
}

func unknown(kind, name string, known []string) error {
	sort.Strings(known)
	return fmt.Errorf("model: unknown %s %q (known: %s)", kind, name, strings.Join(known, ", "))
}
