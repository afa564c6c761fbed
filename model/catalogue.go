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
	return &c
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
