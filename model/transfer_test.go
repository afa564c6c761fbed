package model

import (
	"math"
	"strings"
	"testing"
)

// measuredLike is a made-up measured profile of d: its kernel prior moved
// by known ratios, as an ML.ENERGY fit would leave it.
func measuredLike(t *testing.T, d Deployment) *Profile {
	t.Helper()
	p, _, err := KernelPrior(d, DefaultCatalogue(), false)
	if err != nil {
		t.Fatal(err)
	}
	p.StepBaseNs *= 1.2
	p.LinearScale *= 0.9
	p.DecodeNsPerSeq *= 1.5
	p.DecodeNsPerCtxToken *= 0.8
	p.HostOverheadNs, p.FrontendNs = 0, 7e6
	p.PowerBusyW, p.PowerPJPerFLOP, p.PowerCapW = 420, 1.2, d.GPU.TDPWatts
	p.Kind, p.Name, p.TransferBase, p.FitError = "measured", "test.measured", TransferBaseKernelPrior, "test"
	return p
}

func deploy(t *testing.T, gpu, llm string, tp int, q Quant) Deployment {
	t.Helper()
	cat := DefaultCatalogue()
	g, err := cat.GPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.Model(llm)
	if err != nil {
		t.Fatal(err)
	}
	kv := 2
	if q == FP8 {
		kv = 1
	}
	return Deployment{GPU: g, Model: m, TP: tp, Quant: q, KVDtypeBytes: kv, GPUMemoryUtilization: 0.9}
}

func TestTransferToItselfIsTheIdentity(t *testing.T) {
	d := deploy(t, "H100", "Llama-3.1-70B", 4, BF16)
	src := measuredLike(t, d)
	got, err := Transfer(src, d, d, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"step_base_ns", "linear_scale", "decode_ns_per_seq", "decode_ns_per_ctx_token", "prefill_attn_ns_per_pair",
		"power_busy_w", "power_pj_per_flop", "power_cap_w", "frontend_ns", "host_overhead_ns"} {
		c, _ := CoefficientByName(name)
		if a, b := *c.Field(got), *c.Field(src); math.Abs(a-b) > 1e-9*math.Abs(b) {
			t.Errorf("%s: %g after a transfer to the same deployment, %g measured", name, a, b)
		}
	}
	if got.Kind != "transfer" || !strings.Contains(got.Note, "Transferred, not measured") {
		t.Errorf("kind %q, note %q: a transfer must say so", got.Kind, got.Note)
	}
	if name, ok := TransferredFrom(got); !ok || name != src.Name {
		t.Errorf("TransferredFrom = %q, %v; want %q", name, ok, src.Name)
	}
	if _, ok := TransferredFrom(src); ok {
		t.Error("a measured profile reads as a transfer")
	}
}

func TestTransferFollowsThePhysics(t *testing.T) {
	h100 := deploy(t, "H100", "Llama-3.1-70B", 4, BF16)
	src := measuredLike(t, h100)
	for _, tc := range []struct {
		name string
		to   Deployment
		// check compares the transfer to the source.
		check func(t *testing.T, got *Profile)
	}{
		{"TP 4 → 2 reads twice the weights per GPU", deploy(t, "H100", "Llama-3.1-70B", 2, BF16), func(t *testing.T, got *Profile) {
			// The weight read doubles; the scheduler's fixed time and the
			// all-reduces' latency (as many, each as long) do not.
			if r := got.StepBaseNs / src.StepBaseNs; r < 1.3 || r > 2 {
				t.Errorf("step base ×%.2f, want between ×1.3 and ×2 (the weight read doubles, the scheduler's time does not)", r)
			}
			if r := got.DecodeNsPerCtxToken / src.DecodeNsPerCtxToken; math.Abs(r-2) > 1e-9 {
				t.Errorf("KV reads per token ×%.3f, want ×2 (heads per GPU)", r)
			}
		}},
		{"FP8 halves the weight read and the energy per FLOP", deploy(t, "H100", "Llama-3.1-70B", 4, FP8), func(t *testing.T, got *Profile) {
			if r := got.StepBaseNs / src.StepBaseNs; r > 0.75 {
				t.Errorf("step base ×%.2f with FP8 weights, want well under 1", r)
			}
			if r := got.PowerPJPerFLOP / src.PowerPJPerFLOP; math.Abs(r-0.5) > 0.01 {
				t.Errorf("pJ/FLOP ×%.2f, want ×0.5 (FP8 peak is twice BF16's at the same power)", r)
			}
		}},
		{"H200 reads KV at its own bandwidth", deploy(t, "H200", "Llama-3.1-70B", 4, BF16), func(t *testing.T, got *Profile) {
			if r, want := got.DecodeNsPerCtxToken/src.DecodeNsPerCtxToken, 3.35/4.8; math.Abs(r-want) > 0.01 {
				t.Errorf("KV read cost ×%.3f, want ×%.3f (HBM 3.35 → 4.8 TB/s)", r, want)
			}
			if got.PowerIdleW != 74.6 || got.PowerBusyW != 74.6+src.PowerBusyW-src.PowerIdleW {
				t.Errorf("power idle %g busy %g: the H200's idle plus the measured busy draw above idle", got.PowerIdleW, got.PowerBusyW)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Transfer(src, h100, tc.to, false)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

func TestProfileForPrefersMeasuredThenTransfer(t *testing.T) {
	for _, tc := range []struct {
		d    Deployment
		kind string
		name string
	}{
		{deploy(t, "H100", "Llama-3.1-70B", 4, BF16), "measured", "h100-sxm5-80gb.llama-3.1-70b.tp4.mlenergy"},
		{deploy(t, "H100", "Llama-3.1-70B", 2, FP8), "transfer", "h100-sxm5-80gb.llama-3.1-70b.tp2.fp8.transfer"},
		{deploy(t, "H200", "Llama-3.1-70B", 1, FP8), "transfer", "h200-sxm-141gb.llama-3.1-70b.tp1.fp8.transfer"},
		{deploy(t, "H200", "Qwen3-8B", 1, BF16), "transfer", "h200-sxm-141gb.qwen3-8b.tp1.bf16.transfer"},
		{deploy(t, "A100-80GB", "Llama-2-7B", 1, BF16), "transfer", "A100-SXM4-80GB.Llama-2-7B.tp1.bf16.kernel-prior"},
	} {
		p := ProfileFor(tc.d, false)
		if p.Kind != tc.kind || p.Name != tc.name {
			t.Errorf("%s/%s/tp%d/%s: %s (%s), want %s (%s)", tc.d.GPU.Name, tc.d.Model.Name, tc.d.TP, tc.d.Quant, p.Name, p.Kind, tc.name, tc.kind)
		}
	}
}
