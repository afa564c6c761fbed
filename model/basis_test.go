package model

import (
	"fmt"
	"strings"
	"testing"
)

// TestNoDefaultIsLinear: every catalogue deployment that fits in memory,
// at every TP and weight precision, defaults to a kernel profile (a layer
// curve, attention over the context, KV reads) that is measured, a
// transfer of a measured one, or the kernel prior — never a linear fit.
func TestNoDefaultIsLinear(t *testing.T) {
	cat := DefaultCatalogue()
	n := 0
	for _, g := range cat.GPUs {
		for _, m := range cat.Models {
			for _, tp := range []int{1, 2, 4, 8} {
				for _, q := range []Quant{BF16, FP8} {
					d := deploy(t, g.Name, m.Name, tp, q)
					if _, err := d.KVBlocks(16, Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}); err != nil {
						continue
					}
					n++
					p := ProfileFor(d, false)
					switch b := p.Basis(); {
					case !p.IsKernel() || p.IsBLIS():
						t.Errorf("%s/%s/tp%d/%s: default %s is not a kernel profile", g.Name, m.Name, tp, q, p.Name)
					case b != BasisMeasured && b != BasisTransfer && b != BasisKernelPrior:
						t.Errorf("%s/%s/tp%d/%s: default %s is a %s", g.Name, m.Name, tp, q, p.Name, b)
					}
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d deployments checked", n)
	}
}

// TestDefaultBasis: which kind of profile each deployment runs on by
// default, for every deployment with a built-in profile of any form (the
// four that defaulted to a BLIS linear fit among them) and one of each
// other kind.
func TestDefaultBasis(t *testing.T) {
	for _, tc := range []struct {
		gpu, llm string
		tp       int
		q        Quant
		basis    Basis
		name     string // the profile's name, or what it was transferred from
	}{
		{"A100-40GB", "Qwen3-8B", 1, BF16, BasisMeasured, "a100-sxm4-40gb.qwen3-8b.tp1.calibrated"},
		{"A100-80GB", "Llama-3.1-8B", 1, BF16, BasisKernelPrior, ""}, // was its BLIS fit
		{"A100-80GB", "Llama-3.1-8B", 2, BF16, BasisKernelPrior, ""}, // was its BLIS fit
		{"H100", "Llama-3.1-8B", 1, BF16, BasisMeasured, "h100-sxm5-80gb.llama-3.1-8b.tp1.calibrated"},
		{"H100", "Llama-3.1-8B", 2, BF16, BasisTransfer, "h100-sxm5-80gb.llama-3.1-8b.tp1.mlenergy"},   // was its BLIS fit
		{"H100", "Llama-3.1-70B", 4, BF16, BasisMeasured, "h100-sxm5-80gb.llama-3.1-70b.tp4.mlenergy"}, // also has a BLIS fit
		{"H100", "Llama-3.1-70B", 2, FP8, BasisTransfer, "h100-sxm5-80gb.llama-3.1-70b.tp4.mlenergy"},  // its own fit is TensorRT-LLM's
		{"H100", "Qwen3-8B", 1, BF16, BasisMeasured, "h100-sxm5-80gb.qwen3-8b.tp1.mlenergy"},
		{"H100", "Qwen3-32B", 1, BF16, BasisMeasured, "h100-sxm5-80gb.qwen3-32b.tp1.mlenergy"},
		{"H100", "Qwen3-32B", 2, BF16, BasisMeasured, "h100-sxm5-80gb.qwen3-32b.tp2.mlenergy"},
		{"H100", "Llama-2-7B", 1, BF16, BasisKernelPrior, ""},
		{"H200", "Qwen3-8B", 1, BF16, BasisTransfer, "h100-sxm5-80gb.qwen3-8b.tp1.mlenergy"},
		{"A100-80GB", "Qwen3-8B", 1, BF16, BasisKernelPrior, ""},
		{"RTX-4090", "Llama-3.1-8B", 1, BF16, BasisKernelPrior, ""},
	} {
		t.Run(fmt.Sprintf("%s/%s/tp%d/%s", tc.gpu, tc.llm, tc.tp, tc.q), func(t *testing.T) {
			p := ProfileFor(deploy(t, tc.gpu, tc.llm, tc.tp, tc.q), false)
			if b := p.Basis(); b != tc.basis {
				t.Errorf("%s: basis %q, want %q", p.Name, b, tc.basis)
			}
			name := p.Name
			if from, ok := TransferredFrom(p); ok {
				name = from
			}
			if tc.name != "" && name != tc.name {
				t.Errorf("default %s (from %s), want %s", p.Name, name, tc.name)
			}
		})
	}
}

// TestBasisOfEachForm: Basis tells the five apart, on profiles of each.
func TestBasisOfEachForm(t *testing.T) {
	d := deploy(t, "H200", "Llama-3.1-8B", 1, BF16)
	prior, _, err := KernelPrior(d, DefaultCatalogue(), false)
	if err != nil {
		t.Fatal(err)
	}
	trtPrior, _, err := TRTLLMKernelPrior(d, DefaultCatalogue())
	if err != nil {
		t.Fatal(err)
	}
	blis, err := BLISProfileFor(deploy(t, "H100", "Llama-3.1-70B", 4, BF16))
	if err != nil {
		t.Fatal(err)
	}
	meas, err := FindProfile("H100-SXM5-80GB", "Qwen3-8B", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    *Profile
		want Basis
	}{
		{meas, BasisMeasured},
		{blis, BasisLinearFit},
		{ProfileFor(d, false), BasisTransfer},
		{prior, BasisKernelPrior},
		{trtPrior, BasisKernelPrior},
		{Roofline(d), BasisRoofline},
	} {
		if got := tc.p.Basis(); got != tc.want {
			t.Errorf("%s: basis %q, want %q", tc.p.Name, got, tc.want)
		}
	}
}

// TestBLISProfileFor: every shipped BLIS fit is found for its own
// deployment (and only there); elsewhere the error names the deployment
// and lists those that have one.
func TestBLISProfileFor(t *testing.T) {
	var fits []*Profile
	for _, p := range BuiltinProfiles() {
		if p.IsBLIS() {
			fits = append(fits, p)
		}
	}
	if len(fits) != 4 {
		t.Fatalf("%d BLIS fits shipped, want 4", len(fits))
	}
	for _, f := range fits {
		got, err := BLISProfileFor(deploy(t, f.GPU, f.Model, f.TP, f.Quant))
		if err != nil || got.Name != f.Name {
			t.Errorf("%s: got %v, %v", f.Name, got, err)
		}
	}
	for _, tc := range []struct {
		gpu, llm string
		tp       int
		q        Quant
	}{
		{"A100-40GB", "Qwen3-8B", 1, BF16},    // a measured kernel profile, no BLIS fit
		{"A100-80GB", "Llama-3.1-8B", 1, FP8}, // its BLIS fit is of BF16 weights
		{"A100-80GB", "Llama-3.1-8B", 4, BF16},
		{"RTX-4090", "Llama-3.1-8B", 1, BF16},
	} {
		_, err := BLISProfileFor(deploy(t, tc.gpu, tc.llm, tc.tp, tc.q))
		if err == nil {
			t.Errorf("%s/%s/tp%d/%s: no error", tc.gpu, tc.llm, tc.tp, tc.q)
			continue
		}
		want := fmt.Sprintf("tp%d/%s; BLIS fits exist for ", tc.tp, tc.q)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
		for _, f := range fits {
			if !strings.Contains(err.Error(), fmt.Sprintf("%s/%s/tp%d/%s", f.GPU, f.Model, f.TP, f.Quant)) {
				t.Errorf("error %q does not list %s", err, f.Name)
			}
		}
	}
}
