package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/internal/suggest"
)

// family is what routesim knows of a GPU architecture without a catalogue
// entry for the part: the measured kernel library its kernel prior starts
// from (empty: none was measured on it, so the nearest library is
// transferred, NearestLibrary), whether it has FP8 tensor cores, and the
// PCIe link a part without NVLink uses (per direction, x16).
type family struct {
	library string
	fp8     bool
	pcieGBs float64
	pcie    string
}

// families are the architectures a GPU file may name. PCIe: Gen4 x16 is
// 32 GB/s each way (the A100's host link, glennklockwood.com A100 page,
// catalogue [G2]); Gen5 x16 64 GB/s each way (H100's "128 GB/s", both
// directions, [G3][G4]).
var families = map[string]family{
	"ampere":    {"vidur-a100-llama-3-8b.json", false, 32, "PCIe Gen4 x16"},
	"hopper":    {"vidur-h100-llama-2-7b.json", true, 64, "PCIe Gen5 x16"},
	"ada":       {"llmservingsim-rtx4090-llama-3.1-8b.json", true, 32, "PCIe Gen4 x16"},
	"blackwell": {"", true, 64, "PCIe Gen5 x16"},
	"cdna3":     {"", true, 64, "PCIe Gen5 x16"},
}

// Architectures lists the architecture families a GPU file may name.
func Architectures() []string {
	var out []string
	for a := range families {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Physical bounds of a GPU file's figures: wide enough for any part from
// a 4 GiB workstation card to a rack-scale accelerator, narrow enough to
// catch a unit mistake (MB for GB, sparse for dense).
const (
	minMemoryGiB, maxMemoryGiB = 4, 1024
	minBandwidthGBs, maxBWGBs  = 50, 20000
	minTFLOPS, maxTFLOPS       = 1, 10000
	minTDPW, maxTDPW           = 10, 3000
	maxLinkGBs                 = 5000
	maxPCIeGBs                 = 256
	// maxFP8OverBF16: dense FP8 is 2× dense BF16 on Hopper, Ada and
	// Blackwell; 4× where a datasheet quotes BF16 with FP32 accumulation
	// and FP8 with FP16 accumulation (the RTX 4090: 165 vs 660 TFLOP/s,
	// catalogue [G20]). More is a sparse figure.
	maxFP8OverBF16 = 4
)

// gpuFileFields are a GPU file's fields, in the order errors list them.
var gpuFileFields = []string{"name", "architecture", "memory_gib", "memory_visible_gib", "memory_bandwidth_gb_s",
	"bf16_dense_tflops", "fp8_dense_tflops", "tdp_w", "idle_w", "interconnect_gb_s", "pcie_gb_s"}

// gpuFileRequired are the fields every GPU file gives.
var gpuFileRequired = map[string]bool{"name": true, "architecture": true, "memory_gib": true, "memory_bandwidth_gb_s": true,
	"bf16_dense_tflops": true, "fp8_dense_tflops": true, "tdp_w": true}

// ReadGPU reads a GPU description (at most inputerr.MaxSmallFile bytes):
// a JSON object with a datasheet's figures under gpuFileFields' names.
// Every problem is reported at once as "file:line: field: problem". What
// the file leaves out is derived — the CUDA-visible memory, idle power,
// the link, vLLM's batch defaults, the kernel library — and each
// derivation is written in the GPU's Derived lines. cat supplies the
// measured relations those derivations use.
func ReadGPU(r io.Reader, file string, cat *Catalogue) (GPU, error) {
	b, err := inputerr.ReadAll(r, file, inputerr.MaxSmallFile)
	if err != nil {
		return GPU{}, err
	}
	keys, err := inputerr.ScanJSONKeys(file, b)
	if err != nil {
		return GPU{}, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return GPU{}, inputerr.JSONDecodeError(keys, b, err)
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, inputerr.Errorf(file, keys.Line(field), field, format, a...))
	}
	for _, k := range keys.Top {
		if !slices.Contains(gpuFileFields, k) {
			bad(k, "unknown field%s (a GPU file has: %s)", didYouMean(k, gpuFileFields), strings.Join(gpuFileFields, ", "))
		}
	}
	num := map[string]float64{}
	str := map[string]string{}
	for _, f := range gpuFileFields {
		v, ok := raw[f]
		switch {
		case !ok:
			if gpuFileRequired[f] {
				errs = append(errs, inputerr.Errorf(file, 0, f, "missing"))
			}
			continue
		case string(v) == "null":
			bad(f, "null is not a value: leave the field out%s", map[bool]string{true: " only if it is optional", false: ""}[gpuFileRequired[f]])
			continue
		}
		if f == "name" || f == "architecture" {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				bad(f, "%s is not a string", v)
				continue
			}
			str[f] = s
			continue
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			bad(f, "%s is not a finite number", v)
			continue
		}
		num[f] = x
	}
	g, ok := gpuFromFields(file, str, num, cat, bad)
	if len(errs) > 0 || !ok {
		return GPU{}, errors.Join(errs...)
	}
	return g, nil
}

// gpuFromFields checks a GPU file's decoded fields and builds the GPU,
// deriving what the file leaves out.
func gpuFromFields(file string, str map[string]string, num map[string]float64, cat *Catalogue, report func(field, format string, a ...any)) (GPU, bool) {
	problems := 0
	bad := func(field, format string, a ...any) {
		problems++
		report(field, format, a...)
	}
	name, hasName := str["name"]
	if hasName {
		switch n := strings.TrimSpace(name); {
		case n == "":
			bad("name", "empty")
		case len(n) > 64:
			bad("name", "%d characters: at most 64", len(n))
		case strings.IndexFunc(n, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			bad("name", "%q has a control character", n)
		}
		name = strings.TrimSpace(name)
	}
	arch, hasArch := str["architecture"]
	fam, known := families[strings.ToLower(arch)]
	if hasArch && !known {
		bad("architecture", "%q is not one routesim knows%s (known: %s)", arch, didYouMean(strings.ToLower(arch), Architectures()), strings.Join(Architectures(), ", "))
	}
	arch = strings.ToLower(arch)
	inRange := func(f string, lo, hi float64, unit string) {
		if v, ok := num[f]; ok && !(v >= lo && v <= hi) {
			bad(f, "%g must be in [%g, %g] %s", v, lo, hi, unit)
		}
	}
	inRange("memory_gib", minMemoryGiB, maxMemoryGiB, "GiB")
	inRange("memory_bandwidth_gb_s", minBandwidthGBs, maxBWGBs, "GB/s")
	inRange("bf16_dense_tflops", minTFLOPS, maxTFLOPS, "TFLOP/s (dense: without 2:4 sparsity)")
	inRange("tdp_w", minTDPW, maxTDPW, "W")
	inRange("interconnect_gb_s", 1, maxLinkGBs, "GB/s (one direction)")
	inRange("pcie_gb_s", 1, maxPCIeGBs, "GB/s (one direction)")
	if v, ok := num["fp8_dense_tflops"]; ok {
		bf, hasBF := num["bf16_dense_tflops"]
		switch {
		case v == 0:
		case v < 0 || math.IsNaN(v):
			bad("fp8_dense_tflops", "%g must be ≥ 0 (0 = no FP8 tensor cores)", v)
		case known && !fam.fp8:
			bad("fp8_dense_tflops", "%g: %s has no FP8 tensor cores; give 0", v, arch)
		case hasBF && (v < bf || v > maxFP8OverBF16*bf):
			bad("fp8_dense_tflops", "%g must be 0 or between bf16_dense_tflops (%g) and %d× it: a larger figure is with 2:4 sparsity", v, bf, maxFP8OverBF16)
		}
	}
	if v, ok := num["idle_w"]; ok {
		if tdp, has := num["tdp_w"]; !(v >= 0 && (!has || v < tdp)) {
			bad("idle_w", "%g must be in [0, tdp_w %g) W", v, tdp)
		}
	}
	if v, ok := num["memory_visible_gib"]; ok {
		if nom, has := num["memory_gib"]; has && !(v >= 0.85*nom && v <= nom) {
			bad("memory_visible_gib", "%g must be in [0.85, 1] × memory_gib (%g): the CUDA-visible total is the nominal less the driver's reservation (0.5–1.3 GiB on the catalogue's GPUs)", v, nom)
		}
	}
	if problems > 0 || !hasName || !hasArch || !known {
		return GPU{}, false
	}
	for _, f := range []string{"memory_gib", "memory_bandwidth_gb_s", "bf16_dense_tflops", "fp8_dense_tflops", "tdp_w"} {
		if _, ok := num[f]; !ok {
			return GPU{}, false // missing: reported
		}
	}
	return buildFileGPU(file, name, arch, fam, num, cat), true
}

// buildFileGPU makes the GPU of a checked file, deriving what it leaves
// out; each derivation is one Derived line.
func buildFileGPU(file, name, arch string, fam family, num map[string]float64, cat *Catalogue) GPU {
	g := GPU{
		Name: name, Architecture: arch, File: file,
		HBMBytesPerSec: num["memory_bandwidth_gb_s"] * 1e9,
		BF16FLOPS:      num["bf16_dense_tflops"] * 1e12,
		FP8FLOPS:       num["fp8_dense_tflops"] * 1e12,
		TDPWatts:       num["tdp_w"],
		Sources:        "GPU file " + file,
	}
	for _, c := range cat.GPUs {
		if strings.EqualFold(c.Name, name) {
			g.Name = name + "-custom"
			g.Derived = append(g.Derived, fmt.Sprintf("name %s: the catalogue's GPU of that name has its own measured profiles; this file's part is called %s so that none of them applies to it", name, g.Name))
		}
	}
	nominal := num["memory_gib"]
	if v, ok := num["memory_visible_gib"]; ok {
		g.MemoryBytes = int64(v * GiB)
	} else {
		ratio, lo, hi := visibleMemoryRatio(cat)
		g.MemoryBytes = int64(nominal * ratio * GiB)
		g.Derived = append(g.Derived, fmt.Sprintf("memory_visible_gib %.2f: memory_gib %g × %.4f, the mean CUDA-visible/nominal ratio of the catalogue's GPUs (%.3f–%.3f: the NVML total less the driver's reservation; shared/data/catalogue/gpus.md §1)", float64(g.MemoryBytes)/GiB, nominal, ratio, lo, hi))
	}
	if v, ok := num["idle_w"]; ok {
		g.IdleWatts = v
	} else {
		share := idleShareOfTDP(cat)
		g.IdleWatts = math.Round(10*share*g.TDPWatts) / 10
		g.Derived = append(g.Derived, fmt.Sprintf("idle_w %.1f: tdp_w × %.3f, the mean idle/TDP of the catalogue's GPUs with an nvidia-smi idle reading (%s)", g.IdleWatts, share, strings.Join(measuredIdleGPUs, ", ")))
	}
	pcie, how := fam.pcieGBs, fmt.Sprintf("%s for %s", fam.pcie, arch)
	if v, ok := num["pcie_gb_s"]; ok {
		pcie, how = v, "pcie_gb_s"
	}
	g.HostLinkBytesPerSec = pcie * 1e9
	switch link, hasLink := num["interconnect_gb_s"]; {
	case hasLink:
		g.LinkBytesPerSec = link * 1e9
	default:
		g.LinkBytesPerSec = pcie * 1e9
		g.Derived = append(g.Derived, fmt.Sprintf("GPU-to-GPU link %g GB/s each way: no interconnect_gb_s, so tensor parallelism's all-reduces cross PCIe (%s)", pcie, how))
	}
	tok, seqs := VLLMBatchDefaults(g.MemoryBytes, g.Name)
	g.Derived = append(g.Derived, fmt.Sprintf("vLLM batch defaults %d/%d (max-num-batched-tokens/max-num-seqs: vLLM's rule on %.1f GiB and the name)", tok, seqs, float64(g.MemoryBytes)/GiB))
	lib, same := fam.library, true
	if lib == "" {
		lib, same = NearestLibrary(g, cat), false
	}
	g.KernelLibrary, g.KernelSameArchitecture = lib, same
	ref := readKernelFile(lib)
	refGPU, _ := cat.GPU(ref.GPURef)
	g.RooflineMFU = rooflineMFU(refGPU)
	if same {
		g.Derived = append(g.Derived, fmt.Sprintf("kernel prior: %s (measured on %s, %s like this part), transferred by FLOP and byte ratios with the ±%.0f %% prior of a same-architecture library", ref.Name, ref.GPURef, arch, 100*PriorKernelLibrarySD))
	} else {
		g.Derived = append(g.Derived, fmt.Sprintf("kernel prior: %s has no measured library; %s (measured on %s, the library GPU nearest in FLOP/byte ridge point: %.0f vs this part's %.0f) transferred by FLOP and byte ratios with the ±%.0f %% cross-architecture prior", arch, ref.Name, ref.GPURef, ridge(refGPU), ridge(g), 100*PriorCrossArchSD))
	}
	g.Derived = append(g.Derived, fmt.Sprintf("roofline prefill MFU %.2f (that of %s, the library's GPU; used only where no kernel prior can be built)", g.RooflineMFU, refGPU.Name))
	return g
}

// ridge is a GPU's roofline ridge point: BF16 FLOP/s per byte/s of HBM.
func ridge(g GPU) float64 { return g.BF16FLOPS / g.HBMBytesPerSec }

// NearestLibrary is the measured kernel library for a GPU of an
// architecture without one: the library whose GPU's ridge point (peak
// FLOP/s over bandwidth) is nearest to g's on a log scale. The transfer
// splits a step into its weight-read and compute-bound shares by the
// library GPU's curve, so a library with a like ridge point splits it
// most alike.
func NearestLibrary(g GPU, cat *Catalogue) string {
	best, bestD := "", math.Inf(1)
	libs := make([]string, 0, len(families))
	for _, f := range families {
		if f.library != "" && !slices.Contains(libs, f.library) {
			libs = append(libs, f.library)
		}
	}
	sort.Strings(libs)
	for _, lib := range libs {
		ref, err := cat.GPU(readKernelFile(lib).GPURef)
		if err != nil {
			continue
		}
		if d := math.Abs(math.Log(ridge(ref) / ridge(g))); d < bestD {
			best, bestD = lib, d
		}
	}
	return best
}

// visibleNominal are the catalogue GPUs' nominal capacities (the label
// read as GiB, gpus.md §1: NVML reports exactly 40,960 / 81,920 MiB for
// the 40/80 GB parts), against which their CUDA-visible totals are
// measured.
var visibleNominal = map[string]float64{
	"A100-SXM4-40GB": 40, "A100-SXM4-80GB": 80, "H100-SXM5-80GB": 80, "H200-SXM-141GB": 141, "RTX-4090": 24,
}

// visibleMemoryRatio is the mean, least and greatest CUDA-visible total
// over nominal GiB of the catalogue's GPUs.
func visibleMemoryRatio(cat *Catalogue) (mean, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	n := 0.0
	for _, g := range cat.GPUs {
		nom, ok := visibleNominal[g.Name]
		if !ok {
			continue
		}
		r := float64(g.MemoryBytes) / (nom * GiB)
		mean, lo, hi, n = mean+r, min(lo, r), max(hi, r), n+1
	}
	return mean / n, lo, hi
}

// measuredIdleGPUs are the catalogue GPUs whose idle power is an
// nvidia-smi reading (gpus.md §2: [G9][G10][G11]); the RTX 4090's is an
// estimate.
var measuredIdleGPUs = []string{"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"}

// idleShareOfTDP is the mean idle/TDP of measuredIdleGPUs.
func idleShareOfTDP(cat *Catalogue) float64 {
	sum, n := 0.0, 0.0
	for _, g := range cat.GPUs {
		if slices.Contains(measuredIdleGPUs, g.Name) {
			sum, n = sum+g.IdleWatts/g.TDPWatts, n+1
		}
	}
	return sum / n
}

// didYouMean is "; did you mean X?" for the known name nearest to s, or
// "" if none is near.
func didYouMean(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		d := suggest.Distance(strings.ToLower(s), strings.ToLower(k))
		if a, b := strings.ToLower(s), strings.ToLower(k); len(b) >= 3 && (strings.HasPrefix(a, b) || strings.HasPrefix(b, a)) {
			d = min(d, 1) // a prefix: "tdp_watts" for tdp_w
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(2, len(s)/3) {
		return fmt.Sprintf("; did you mean %s?", best)
	}
	return ""
}
