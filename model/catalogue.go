package model

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/routesim/routesim/internal/suggest"
)

//go:embed data/catalogue.json
var catalogueJSON []byte

// GPU is one accelerator's specification. MemoryBytes is the CUDA-visible
// total, which is what vLLM multiplies by --gpu-memory-utilization.
type GPU struct {
	Name string `json:"name"`
	// Aliases are other exact names --gpu accepts ("H100").
	Aliases        []string `json:"aliases,omitempty"`
	MemoryBytes    int64    `json:"memory_bytes"`
	HBMBytesPerSec float64  `json:"hbm_bytes_per_s"`
	BF16FLOPS      float64  `json:"bf16_flops"` // dense, without sparsity
	FP8FLOPS       float64  `json:"fp8_flops"`  // dense; 0 where unsupported
	TDPWatts       float64  `json:"tdp_w"`
	IdleWatts      float64  `json:"idle_w"`
	// LinkBytesPerSec is the GPU-to-GPU bandwidth in one direction (NVLink,
	// or PCIe without it): what tensor parallelism's all-reduces use.
	LinkBytesPerSec float64 `json:"link_bytes_per_s"`
	// HostLinkBytesPerSec is the GPU's link to host memory in one
	// direction (PCIe x16 of its generation): what KV offloading's copies
	// to and from the CPU tier use (sim's host tier).
	HostLinkBytesPerSec float64 `json:"host_link_bytes_per_s,omitempty"`
	Sources             string  `json:"sources"`
	// vLLM's batch defaults on a GPU are not stored: they follow from its
	// memory and name by the release's rule (VLLMDefaults).
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
	// Architecture is a GPU file's architecture family (families; empty
	// for the catalogue's GPUs).
	Architecture string `json:"architecture,omitempty"`
	// File is the GPU file the GPU was read from (ReadGPU; empty for the
	// catalogue's), and Derived says what was derived from it and how.
	File    string   `json:"-"`
	Derived []string `json:"-"`
}

// Catalogue holds the GPUs and LLMs routesim knows by name.
type Catalogue struct {
	GPUs   []GPU `json:"gpus"`
	Models []LLM `json:"models"`
}

// DefaultCatalogue parses the embedded catalogue. It returns a fresh copy on
// every call, so callers may modify it.
func DefaultCatalogue() *Catalogue {
	c, err := readEmbedded[Catalogue](catalogueJSON, false) // it carries _sources
	if err != nil {
		panic("model: embedded catalogue is corrupt: " + err.Error())
	}
	if err := c.validate(); err != nil {
		panic("model: embedded catalogue is incomplete: " + err.Error())
	}
	return c
}

// validate checks that every GPU carries the fields routesim reads from it.
func (c *Catalogue) validate() error {
	for _, g := range c.GPUs {
		if g.MemoryBytes <= 0 || g.HBMBytesPerSec <= 0 || g.BF16FLOPS <= 0 ||
			!(g.RooflineMFU > 0 && g.RooflineMFU <= 1) || g.KernelLibrary == "" {
			return fmt.Errorf("GPU %s: memory, bandwidth, BF16 FLOP/s, roofline MFU and kernel library are required", g.Name)
		}
		if _, err := kernelFS.ReadFile("data/kernels/" + g.KernelLibrary); err != nil {
			return fmt.Errorf("GPU %s: kernel_library %q: %w", g.Name, g.KernelLibrary, err)
		}
	}
	return nil
}

// GPU returns the GPU with the given name or one of its listed aliases
// (catalogue.json "aliases": "H100" → H100-SXM5-80GB), ignoring case, '-',
// '_' and spaces. Nothing else matches: a name that only starts like
// some GPUs' ("A100", "h10") is refused with those GPUs suggested, and an
// unknown name suggests the nearest.
func (c *Catalogue) GPU(name string) (GPU, error) {
	key := suggest.Squash(name)
	names := make([]string, len(c.GPUs))
	for i, g := range c.GPUs {
		if key == suggest.Squash(g.Name) || slices.ContainsFunc(g.Aliases, func(a string) bool { return key == suggest.Squash(a) }) {
			return g, nil
		}
		names[i] = g.Name
	}
	var starts []string
	for _, g := range c.GPUs {
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			if key != "" && strings.HasPrefix(suggest.Squash(n), key) {
				starts = append(starts, g.Name)
				break
			}
		}
	}
	if len(starts) > 0 {
		return GPU{}, fmt.Errorf("model: GPU %q is not a name or alias (names and aliases are exact): did you mean %s?", name, strings.Join(starts, " or "))
	}
	return GPU{}, unknownNearest("GPU", name, names)
}

// unknownNearest is unknown with the closest known name suggested.
func unknownNearest(kind, name string, known []string) error {
	err := unknown(kind, name, known)
	if best, ok := suggest.Nearest(name, known); ok {
		return fmt.Errorf("%w; did you mean %s?", err, best)
	}
	return err
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
	return LLM{}, unknownNearest("model", name, names)
}

func unknown(kind, name string, known []string) error {
	sort.Strings(known)
	return fmt.Errorf("model: unknown %s %q (known: %s)", kind, name, strings.Join(known, ", "))
}
