package model

import (
	"math"
	"strings"
	"testing"
)

// TestExtendedCurveKeepsGrowing: the Vidur H100 TP1 curve's last segment
// falls (84.66 ms at 4,064 tokens, 84.46 at 4,096), so continuing it
// would shrink the time; Extended continues it along its upper half's
// line, leaving the measured points alone.
func TestExtendedCurveKeepsGrowing(t *testing.T) {
	d := deploy(t, "H100", "Llama-3.1-70B", 1, FP8)
	c, err := LinearCurveFor(d, DefaultCatalogue())
	if err != nil {
		t.Fatal(err)
	}
	last := c.Tokens[len(c.Tokens)-1]
	if n := len(c.Ns); c.Ns[n-1] > c.Ns[n-2] {
		t.Skip("the measured curve no longer falls at its end")
	}
	e := c.Extended()
	for i, tok := range c.Tokens {
		if e.Tokens[i] != tok || e.Ns[i] != c.Ns[i] {
			t.Fatalf("point %d moved: (%d, %g) → (%d, %g)", i, tok, c.Ns[i], e.Tokens[i], e.Ns[i])
		}
	}
	prev := e.At(last)
	for _, tok := range []int{5000, 2 * last, 20000, 65536, 1 << 17, 1 << 18} {
		v := e.At(tok)
		if !(v > prev) {
			t.Errorf("At(%d) = %.4g ms, not above %.4g: the extension must grow", tok, v/1e6, prev/1e6)
		}
		prev = v
	}
	// Compute-bound: 20,000 tokens cost about 20000/4096 times the
	// growth at 4,096, within the upper half's curvature.
	r := e.Compute(20000) / e.Compute(last)
	if r < 3.5 || r > 6 {
		t.Errorf("compute(20000)/compute(%d) = %.2f, want ≈ %.1f", last, r, 20000/float64(last))
	}
	if !strings.Contains(e.Source, "least-squares line") {
		t.Errorf("source %q does not say the curve was extended", e.Source)
	}
	short := &LinearCurve{Tokens: []int{1, 2}, Ns: []float64{1e6, 2e6}}
	if short.Extended() != short {
		t.Error("a curve with fewer than 3 upper points must come back as is")
	}
}

// TestTRTLLMKernelPriorDiffersOnlyWhereItSays: the TensorRT-LLM prior is
// the kernel prior with the executor's host gap instead of vLLM's
// scheduler, the extended layer curve, and wider spreads on the
// efficiency terms; every other coefficient is the kernel prior's.
func TestTRTLLMKernelPriorDiffersOnlyWhereItSays(t *testing.T) {
	d := deploy(t, "H100", "Llama-3.1-70B", 2, FP8)
	cat := DefaultCatalogue()
	v, vp, err := KernelPrior(d, cat, false)
	if err != nil {
		t.Fatal(err)
	}
	p, pp, err := TRTLLMKernelPrior(d, cat)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Engine != EngineTRTLLM || v.Engine != "" {
		t.Errorf("engines %q and %q", p.Engine, v.Engine)
	}
	if got, want := p.StepBaseNs-v.StepBaseNs, PriorTRTLLMHostNs-PriorSchedulerNs; math.Abs(got-want) > 1 {
		t.Errorf("step base moved by %g ns, want %g (host gap for scheduler)", got, want)
	}
	if p.HostOverheadNs != PriorTRTLLMHostNs {
		t.Errorf("host overhead %g", p.HostOverheadNs)
	}
	for _, name := range []string{"linear_scale", "prefill_ns_per_token", "prefill_attn_ns_per_pair", "decode_ns_per_seq", "decode_ns_per_ctx_token", "frontend_ns"} {
		c, _ := CoefficientByName(name)
		if *c.Field(p) != *c.Field(v) {
			t.Errorf("%s: %g, kernel prior %g", name, *c.Field(p), *c.Field(v))
		}
	}
	sd := func(ps []Prior, name string) float64 {
		for _, q := range ps {
			if q.Name == name {
				return q.LogSD
			}
		}
		t.Fatalf("no prior for %s", name)
		return 0
	}
	for _, name := range []string{"linear_scale", "prefill_attn_ns_per_pair", "decode_ns_per_ctx_token"} {
		if sd(pp, name) <= sd(vp, name) {
			t.Errorf("%s: TensorRT-LLM prior sd %g not wider than the kernel prior's %g", name, sd(pp, name), sd(vp, name))
		}
	}
	if len(p.LinearCurve.Tokens) <= len(v.LinearCurve.Tokens) || !strings.Contains(p.LinearCurve.Source, "least-squares line") {
		t.Errorf("the layer curve was not extended: %d points, the kernel prior's %d", len(p.LinearCurve.Tokens), len(v.LinearCurve.Tokens))
	}
}

// TestTransferOfATRTLLMFit: a fit from the TensorRT-LLM prior carries its
// ratios to another deployment's TensorRT-LLM prior, prefill attention
// included, and stays a TensorRT-LLM profile; to itself it is the
// identity on the efficiency terms.
func TestTransferOfATRTLLMFit(t *testing.T) {
	from := deploy(t, "H100", "Llama-3.1-70B", 2, FP8)
	to := deploy(t, "H200", "Llama-3.1-70B", 1, FP8)
	cat := DefaultCatalogue()
	src, _, err := TRTLLMKernelPrior(from, cat)
	if err != nil {
		t.Fatal(err)
	}
	ratios := map[string]float64{"step_base_ns": 0.85, "linear_scale": 1.05, "prefill_attn_ns_per_pair": 1.2, "decode_ns_per_seq": 1, "decode_ns_per_ctx_token": 0.9}
	for name, r := range ratios {
		c, _ := CoefficientByName(name)
		*c.Field(src) *= r
	}
	src.Kind, src.Name, src.TransferBase, src.FitError = "measured", "test.trtllm", TransferBaseTRTLLMKernelPrior, "test"
	prior, _, err := TRTLLMKernelPrior(to, cat)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Transfer(src, from, to, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range ratios {
		c, _ := CoefficientByName(name)
		if a, b := *c.Field(got), r**c.Field(prior); math.Abs(a-b) > 1e-9*b {
			t.Errorf("%s: %g, want the target prior's %g × %g", name, a, *c.Field(prior), r)
		}
	}
	if got.Engine != EngineTRTLLM || got.Kind != "transfer" || !strings.Contains(got.Name, ".trtllm.transfer") || !strings.Contains(got.Source, "TensorRT-LLM kernel prior") {
		t.Errorf("engine %q kind %q name %q source %q", got.Engine, got.Kind, got.Name, got.Source)
	}
	self, err := Transfer(src, from, from, false)
	if err != nil {
		t.Fatal(err)
	}
	for name := range ratios {
		c, _ := CoefficientByName(name)
		if a, b := *c.Field(self), *c.Field(src); math.Abs(a-b) > 1e-9*b {
			t.Errorf("%s: %g after a transfer to itself, %g fitted", name, a, b)
		}
	}
}

// TestTRTLLMProfileFor: the shipped trtllm-bench fit serves its own
// deployment under --engine trtllm, is carried (flagged) to another GPU of
// its architecture and TP, is no candidate for vLLM, and a model without
// a TensorRT-LLM fit gets none.
func TestTRTLLMProfileFor(t *testing.T) {
	own := deploy(t, "H100", "Llama-3.1-70B", 2, FP8)
	p := TRTLLMProfileFor(own)
	if p == nil || p.Kind != "measured" || p.Engine != EngineTRTLLM || p.TransferBase != TransferBaseTRTLLMKernelPrior {
		t.Fatalf("H100 TP2 FP8: %+v", p)
	}
	if v := ProfileFor(own, false); v.Engine != "" || v.Name == p.Name {
		t.Errorf("vLLM's profile for the same deployment is %s (engine %q)", v.Name, v.Engine)
	}
	if _, err := FindProfile("H100-SXM5-80GB", "Llama-3.1-70B", 2); err == nil {
		t.Error("FindProfile offered a TensorRT-LLM profile to vLLM")
	}
	h200 := deploy(t, "H200", "Llama-3.1-70B", 1, FP8)
	q := TRTLLMProfileFor(h200)
	if q == nil || q.Kind != "transfer" || q.Engine != EngineTRTLLM {
		t.Fatalf("H200 TP1: %+v", q)
	}
	if from, ok := TransferredFrom(q); !ok || from != p.Name || !strings.Contains(q.Note, "Transferred, not measured") {
		t.Errorf("the transfer is not flagged: from %q (%v), note %q", from, ok, q.Note)
	}
	if r := TRTLLMProfileFor(deploy(t, "H100", "Qwen3-8B", 1, BF16)); r != nil {
		t.Errorf("Qwen3-8B has no TensorRT-LLM fit, got %s", r.Name)
	}
	if r := TRTLLMProfileFor(deploy(t, "A100-80GB", "Llama-3.1-70B", 4, BF16)); r != nil {
		t.Errorf("an A100 is another architecture, got %s", r.Name)
	}
}
