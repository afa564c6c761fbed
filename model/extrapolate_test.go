package model

import (
	"fmt"
	"math"
	"testing"
)

// measuredCurves are every embedded kernel library's measured curves, as
// measured, and every built-in kernel profile's curve.
func measuredCurves(t *testing.T) map[string]*LinearCurve {
	t.Helper()
	out := map[string]*LinearCurve{}
	entries, err := kernelFS.ReadDir("data/kernels")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Name()) < 5 || e.Name()[len(e.Name())-5:] != ".json" {
			continue
		}
		f := readKernelFile(e.Name())
		for _, c := range f.Curves {
			out[fmt.Sprintf("%s/tp%d", f.Name, c.TP)] = &LinearCurve{Tokens: c.Tokens, Ns: c.Ns}
		}
	}
	for _, p := range BuiltinProfiles() {
		if p.IsKernel() {
			out[p.Name] = p.LinearCurve
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d curves", len(out))
	}
	return out
}

// TestCurvePastItsEnd: past a curve's last measured point T the layer
// time never falls as tokens grow, and its time per token stays between
// the last point's (never cheaper per token than measured) and the
// slowest of the upper half's points (tokens ≥ T/2), so a step twice as
// large as any measured costs at least twice the last point. This is the
// physics the extrapolation must keep: the linear layers' FLOPs grow with
// the tokens, at the compute-bound efficiency of the curve's large end.
func TestCurvePastItsEnd(t *testing.T) {
	for name, c := range measuredCurves(t) {
		n := len(c.Tokens)
		last, end := c.Tokens[n-1], c.Ns[n-1]
		lo, hi := end/float64(last), 0.0
		for i, tok := range c.Tokens {
			if 2*tok >= last {
				hi = math.Max(hi, c.Ns[i]/float64(tok))
			}
		}
		prev := end
		for _, tok := range []int{last + 1, last + 7, 3 * last / 2, 2 * last, 3 * last, 8 * last, 40 * last} {
			v := c.At(tok)
			per := v / float64(tok)
			if v < prev {
				t.Errorf("%s: At(%d) = %.6g < %.6g at fewer tokens: the layer time fell", name, tok, v, prev)
			}
			if per < lo*(1-1e-12) || per > hi*(1+1e-12) {
				t.Errorf("%s: At(%d)/%d = %.5g ns per token, outside [%.5g, %.5g] (last point's, slowest upper point's)", name, tok, tok, per, lo, hi)
			}
			if c.Compute(tok) <= c.Compute(last) {
				t.Errorf("%s: Compute(%d) = %.6g, not above Compute(%d) = %.6g", name, tok, c.Compute(tok), last, c.Compute(last))
			}
			prev = v
		}
		if v := c.At(2 * last); v < 2*end*(1-1e-12) {
			t.Errorf("%s: a %d-token step %.4g ms, less than twice the %d-token one (%.4g ms)", name, 2*last, v/1e6, last, end/1e6)
		}
		// Inside the measured range nothing moved: the points themselves.
		for i, tok := range c.Tokens {
			if c.At(tok) != c.Ns[i] {
				t.Errorf("%s: At(%d) = %g, measured %g", name, tok, c.At(tok), c.Ns[i])
			}
		}
	}
}

// TestH100ChunkPastTheCurve: the bug this extrapolation fixes, on the
// deployment where it showed. vLLM's token budget on the H100 is 8,192
// (the catalogue's default), twice the Vidur H100 curve's last point, so
// an H100 Llama-3.1-8B kernel profile's 8,192-token prefill step costs in
// its linear layers at least twice its 4,096-token step (it was 69 %, the
// curve's falling last segment continued).
func TestH100ChunkPastTheCurve(t *testing.T) {
	d := deploy(t, "H100", "Llama-3.1-8B", 1, BF16)
	if budget, _ := VLLMBatchDefaults(d.GPU.MemoryBytes, d.GPU.Name); budget != 8192 {
		t.Fatalf("the H100's vLLM budget is %d, not the 8,192 this test is about", budget)
	}
	p := ProfileFor(d, false)
	if !p.IsKernel() {
		t.Fatalf("%s is not a kernel profile", p.Name)
	}
	if r := p.CurveNs(8192) / p.CurveNs(4096); r < 2 || r > 2.3 {
		t.Errorf("%s: layer growth at 8,192 tokens / at 4,096 = %.3f, want 2–2.3 (FLOPs double, efficiency of the large end)", p.Name, r)
	}
	if p.CurveNs(20000) <= p.CurveNs(8192) {
		t.Errorf("%s: a 20,000-token step's layers %.4g ms, not above 8,192 tokens' %.4g", p.Name, p.CurveNs(20000)/1e6, p.CurveNs(8192)/1e6)
	}
}
