package model

import (
	"math"
	"strings"
	"testing"
)

// gpuText is a valid GPU file with the given fields replaced or added
// (one "key": value line each; a value "-" drops the field).
func gpuText(over map[string]string) string {
	fields := [][2]string{{"name", `"Test-Part"`}, {"architecture", `"hopper"`}, {"memory_gib", "96"},
		{"memory_bandwidth_gb_s", "4000"}, {"bf16_dense_tflops", "989"}, {"fp8_dense_tflops", "1979"}, {"tdp_w", "700"}}
	seen := map[string]bool{}
	var lines []string
	for _, f := range fields {
		v := f[1]
		if o, ok := over[f[0]]; ok {
			v, seen[f[0]] = o, true
		}
		if v != "-" {
			lines = append(lines, `  "`+f[0]+`": `+v)
		}
	}
	for k, v := range over {
		if !seen[k] {
			lines = append(lines, `  "`+k+`": `+v)
		}
	}
	return "{\n" + strings.Join(lines, ",\n") + "\n}\n"
}

// TestReadGPUErrors: every bad field is reported at its line, all at once.
func TestReadGPUErrors(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range []struct {
		name string
		over map[string]string
		want []string
	}{
		{"negative memory", map[string]string{"memory_gib": "-80"}, []string{"g.json:4: memory_gib: -80 must be in [4, 1024] GiB"}},
		{"bandwidth in MB/s", map[string]string{"memory_bandwidth_gb_s": "3350000"}, []string{"g.json:5: memory_bandwidth_gb_s: 3.35e+06 must be in [50, 20000] GB/s"}},
		{"sparse fp8", map[string]string{"fp8_dense_tflops": "7916"}, []string{"g.json:7: fp8_dense_tflops: 7916 must be 0 or between bf16_dense_tflops (989) and 4× it"}},
		{"fp8 on ampere", map[string]string{"architecture": `"ampere"`}, []string{"g.json:7: fp8_dense_tflops: 1979: ampere has no FP8 tensor cores"}},
		{"unknown architecture", map[string]string{"architecture": `"volta"`}, []string{`g.json:3: architecture: "volta" is not one routesim knows`}},
		{"misspelt field", map[string]string{"tdp_watts": "700"}, []string{"g.json:9: tdp_watts: unknown field; did you mean tdp_w?"}},
		{"missing field", map[string]string{"tdp_w": "-"}, []string{"g.json: tdp_w: missing"}},
		{"idle above tdp", map[string]string{"idle_w": "800"}, []string{"g.json:9: idle_w: 800 must be in [0, tdp_w 700) W"}},
		{"string number", map[string]string{"tdp_w": `"700"`}, []string{`g.json:8: tdp_w: "700" is not a finite number`}},
		{"null", map[string]string{"pcie_gb_s": "null"}, []string{"g.json:9: pcie_gb_s: null is not a value"}},
		{"huge", map[string]string{"memory_gib": "1e999"}, []string{"g.json:4: memory_gib: 1e999 is not a finite number"}},
		{"visible above nominal", map[string]string{"memory_visible_gib": "100"}, []string{"g.json:9: memory_visible_gib: 100 must be in [0.85, 1] × memory_gib (96)"}},
		{"empty name", map[string]string{"name": `"  "`}, []string{"g.json:2: name: empty"}},
		{"two at once", map[string]string{"memory_gib": "2", "tdp_w": "0"}, []string{"g.json:4: memory_gib:", "g.json:8: tdp_w:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadGPU(strings.NewReader(gpuText(tc.over)), "g.json", cat)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	for _, text := range []string{"", "{", "{\n \"name\": \"x\",\n", "[]", "{\"name\": NaN}", "{\"name\": \"a\", \"name\": \"b\"}", "{} {}"} {
		if _, err := ReadGPU(strings.NewReader(text), "g.json", cat); err == nil || !strings.HasPrefix(err.Error(), "g.json:") {
			t.Errorf("%q: error %v, want one positioned in g.json", text, err)
		}
	}
}

// TestReadGPUDerived: what a file leaves out is derived from the
// catalogue's measured relations, and said.
func TestReadGPUDerived(t *testing.T) {
	cat := DefaultCatalogue()
	g, err := ReadGPU(strings.NewReader(gpuText(nil)), "g.json", cat)
	if err != nil {
		t.Fatal(err)
	}
	ratio, lo, hi := visibleMemoryRatio(cat)
	if !(lo >= 0.97 && hi <= 0.995 && ratio > lo && ratio < hi) {
		t.Errorf("visible/nominal ratio %.4f in [%.4f, %.4f]: the catalogue's CUDA-visible totals moved", ratio, lo, hi)
	}
	if want := int64(96 * ratio * GiB); g.MemoryBytes != want {
		t.Errorf("memory %d, want %d", g.MemoryBytes, want)
	}
	if share := idleShareOfTDP(cat); math.Abs(g.IdleWatts-share*700) > 0.05 || share < 0.1 || share > 0.15 {
		t.Errorf("idle %.1f W (share %.3f)", g.IdleWatts, share)
	}
	if g.LinkBytesPerSec != 64e9 || g.KernelLibrary != "vidur-h100-llama-2-7b.json" || !g.KernelSameArchitecture || g.RooflineMFU != 0.45 {
		t.Errorf("link %g, library %s (same %v), MFU %g", g.LinkBytesPerSec, g.KernelLibrary, g.KernelSameArchitecture, g.RooflineMFU)
	}
	text := strings.Join(g.Derived, "\n")
	for _, w := range []string{"memory_visible_gib", "idle_w", "PCIe Gen5", "vLLM batch defaults 8192/1024", "kernel prior: vidur-H100"} {
		if !strings.Contains(text, w) {
			t.Errorf("derived lines lack %q:\n%s", w, text)
		}
	}
	// Given figures are used as they are.
	g, err = ReadGPU(strings.NewReader(gpuText(map[string]string{"memory_visible_gib": "95", "idle_w": "60", "interconnect_gb_s": "450"})), "g.json", cat)
	if err != nil || g.MemoryBytes != 95*GiB || g.IdleWatts != 60 || g.LinkBytesPerSec != 450e9 {
		t.Errorf("given figures: %+v, %v", g, err)
	}
}

// TestReadGPUFamilies: each architecture's kernel library, and the
// cross-architecture transfer (wider prior) for those without one.
func TestReadGPUFamilies(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range []struct {
		arch, bw, bf16, fp8, lib string
		same                     bool
	}{
		{"ampere", "1935", "312", "0", "vidur-a100-llama-3-8b.json", true},
		{"ada", "864", "181", "362", "llmservingsim-rtx4090-llama-3.1-8b.json", true},
		{"hopper", "3350", "989", "1979", "vidur-h100-llama-2-7b.json", true},
		// A data-centre Blackwell-like ridge (2250/8000 ≈ 281) is nearest
		// the H100's (295); a GDDR part with ridge ≈ 160 nearest the
		// RTX 4090's (164) or the A100's (153).
		{"blackwell", "8000", "2250", "4500", "vidur-h100-llama-2-7b.json", false},
		{"cdna3", "5300", "1307", "2614", "vidur-h100-llama-2-7b.json", false},
		{"blackwell", "1000", "164", "328", "llmservingsim-rtx4090-llama-3.1-8b.json", false},
	} {
		g, err := ReadGPU(strings.NewReader(gpuText(map[string]string{"architecture": `"` + tc.arch + `"`,
			"memory_bandwidth_gb_s": tc.bw, "bf16_dense_tflops": tc.bf16, "fp8_dense_tflops": tc.fp8})), "g.json", cat)
		if err != nil {
			t.Fatalf("%s: %v", tc.arch, err)
		}
		if g.KernelLibrary != tc.lib || g.KernelSameArchitecture != tc.same {
			t.Errorf("%s (%s GB/s, %s TFLOP/s): library %s same %v, want %s %v", tc.arch, tc.bw, tc.bf16, g.KernelLibrary, g.KernelSameArchitecture, tc.lib, tc.same)
		}
		d := Deployment{GPU: g, Model: cat.Models[0], TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
		p, priors, err := KernelPrior(d, cat, false)
		if err != nil {
			t.Fatalf("%s: kernel prior: %v", tc.arch, err)
		}
		if p.LinearCurve.CrossArchitecture == tc.same || (priors[0].LogSD == PriorCrossArchSD) == tc.same {
			t.Errorf("%s: cross-architecture %v, scale prior %g", tc.arch, p.LinearCurve.CrossArchitecture, priors[0].LogSD)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", tc.arch, err)
		}
	}
}

// TestReadGPUCatalogueName: a file naming a catalogue GPU is renamed, so
// the catalogue part's measured profiles and rates do not apply to it.
func TestReadGPUCatalogueName(t *testing.T) {
	g, err := ReadGPU(strings.NewReader(gpuText(map[string]string{"name": `"H100-SXM5-80GB"`, "memory_gib": "80", "memory_bandwidth_gb_s": "3350"})), "g.json", DefaultCatalogue())
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "H100-SXM5-80GB-custom" || measuredRates(g) != nil {
		t.Errorf("name %q, measured rates %v", g.Name, measuredRates(g))
	}
}

// TestVLLMBatchDefaults: the catalogue's GPUs get the defaults its
// entries carried before the rule became a function (vLLM arg_utils.py:
// ≥ 70 GiB and not an A100 → 8192/1024).
func TestVLLMBatchDefaults(t *testing.T) {
	cat := DefaultCatalogue()
	for name, want := range map[string][2]int{
		"A100-SXM4-40GB": {2048, 256}, "A100-SXM4-80GB": {2048, 256}, "H100-SXM5-80GB": {8192, 1024},
		"H200-SXM-141GB": {8192, 1024}, "RTX-4090": {2048, 256},
	} {
		g, err := cat.GPU(name)
		if err != nil {
			t.Fatal(err)
		}
		if tok, seqs := VLLMBatchDefaults(g.MemoryBytes, g.Name); tok != want[0] || seqs != want[1] {
			t.Errorf("%s: %d/%d, want %d/%d", name, tok, seqs, want[0], want[1])
		}
	}
	if tok, _ := VLLMBatchDefaults(70*GiB-1, "NVIDIA H100"); tok != 2048 {
		t.Errorf("just under 70 GiB: %d", tok)
	}
}
