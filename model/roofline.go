package model

import "fmt"

// Roofline assumptions, used only where no measured profile exists.
const (
	// RooflineHBMEfficiency is the share of peak HBM bandwidth a decode step
	// reaches reading weights and KV. Vidur's A100-80GB profile of
	// Llama-3-8B reads the weights for one token in 9.7 ms, 81 % of the
	// 7.9 ms peak-bandwidth time.
	RooflineHBMEfficiency = 0.8
)

// rooflineMFU is the GPU's prefill FLOP efficiency from the catalogue
// (BLIS's mfuPrefill), or the Ampere-class 0.38 for a GPU without one.
func rooflineMFU(g GPU) float64 {
	if g.RooflineMFU > 0 {
		return g.RooflineMFU
	}
	return 0.38
}

// Roofline estimates a step-time profile from peak FLOP/s and bandwidth:
//
//	c0 = weight bytes per GPU / (bandwidth · 0.8)       (decode reads all weights)
//	c1 = 2 · params / TP / (peak · MFU)                 (dense prefill FLOPs)
//	c2 = 2 · layers · heads · head_dim / TP / (peak · MFU)  (causal attention FLOPs per token·context)
//	c4 = KV bytes per token per GPU / (bandwidth · 0.8) (decode reads the context's KV)
//
// It ignores communication and launch overhead; the frontend delay is the
// closest calibrated profile's (ClosestMeasured), else the kernel prior's
// 5 ms. Every output built on it says "roofline".
func Roofline(d Deployment) *Profile {
	fe, feTok, feFrom := 5e6, 1000.0, "the kernel prior's frontend"
	if q := ClosestMeasured(d); q != nil {
		fe, feTok, feFrom = q.FrontendNs, q.FrontendNsPerInputToken, "the frontend of "+q.Name
	}
	tp := float64(max(d.TP, 1))
	peak := d.GPU.BF16FLOPS
	if d.Quant == FP8 && d.GPU.FP8FLOPS > 0 {
		peak = d.GPU.FP8FLOPS
	}
	flops := peak * rooflineMFU(d.GPU)
	bw := d.GPU.HBMBytesPerSec * RooflineHBMEfficiency
	kvBytes := d.KVDtypeBytes
	if kvBytes == 0 {
		kvBytes = 2
	}
	m := d.Model
	return &Profile{
		Name: fmt.Sprintf("%s.%s.tp%d.%s.roofline", d.GPU.Name, m.Name, d.TP, d.Quant),
		GPU:  d.GPU.Name, Model: m.Name, TP: d.TP, Quant: d.Quant, Kind: "roofline",
		Source: fmt.Sprintf("roofline from the catalogue: %.0f TFLOP/s × MFU %.2f (BLIS hardware_config), %.2f TB/s × %.1f; %s",
			peak/1e12, rooflineMFU(d.GPU), d.GPU.HBMBytesPerSec/1e12, RooflineHBMEfficiency, feFrom),
		FrontendNs:               fe,
		FrontendNsPerInputToken:  feTok,
		StepBaseNs:               float64(m.WeightBytes(d.Quant)) / tp / bw * 1e9,
		PrefillNsPerToken:        m.FLOPsPerToken() / tp / flops * 1e9,
		PrefillAttnNsPerTokenCtx: 2 * float64(m.Layers*m.Heads*m.HeadDim) / tp / flops * 1e9,
		DecodeNsPerCtxToken:      float64(m.KVBytesPerToken(kvBytes)) / tp / bw * 1e9,
		PowerIdleW:               d.GPU.IdleWatts,
		PowerBusyW:               d.GPU.TDPWatts,
		FitError:                 "not fitted (estimate)",
	}
}
