package model

import (
	_ "embed"
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
	// LinkBytesPerSec is the GPU-to-GPU bandwidth in one direction (NVLink,
	// or PCIe without it): what tensor parallelism's all-reduces use.
	LinkBytesPerSec float64 `json:"link_bytes_per_s"`
	Sources         string  `json:"sources"`
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

// GPU returns the GPU with the given name: exact (case-insensitive), or
// a unique short form — its parts in order, the first at the start,
// ignoring case, '-' and '_' ("H100" → H100-SXM5-80GB, "rtx4090" →
// RTX-4090, "A100-40" → A100-SXM4-40GB). An ambiguous short form ("A100") lists its
// choices; an unknown name suggests the nearest.
func (c *Catalogue) GPU(name string) (GPU, error) {
	names := make([]string, len(c.GPUs))
	for i, g := range c.GPUs {
		if strings.EqualFold(g.Name, name) {
			return g, nil
		}
		names[i] = g.Name
	}
	tokens := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	var match []GPU
	for _, g := range c.GPUs {
		if len(tokens) > 0 && inOrder(squash(g.Name), tokens) {
			match = append(match, g)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return GPU{}, unknownNearest("GPU", name, names)
	}
	var choices []string
	for _, g := range match {
		choices = append(choices, g.Name)
	}
	return GPU{}, fmt.Errorf("model: GPU %q is ambiguous: %s", name, strings.Join(choices, " or "))
}

// inOrder says whether every token occurs in s, in order, the first at
// its start.
func inOrder(s string, tokens []string) bool {
	if !strings.HasPrefix(s, tokens[0]) {
		return false
	}
	s = s[len(tokens[0]):]
	for _, t := range tokens[1:] {
		i := strings.Index(s, t)
		if i < 0 {
			return false
		}
		s = s[i+len(t):]
	}
	return true
}

// squash is a name for loose matching: upper case, no '-', '_' or spaces.
func squash(s string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToUpper(s))
}

// unknownNearest is unknown with the closest known name suggested.
func unknownNearest(kind, name string, known []string) error {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := editDistance(squash(name), squash(k)); d < bestD {
			best, bestD = k, d
		}
	}
	err := unknown(kind, name, known)
	if best != "" && bestD <= max(3, len(squash(name))/2) {
		return fmt.Errorf("%w; did you mean %s?", err, best)
	}
	return err
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
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
