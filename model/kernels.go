package model

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

//go:embed data/kernels/*.json
var kernelFS embed.FS

// LinearCurve is the measured time of one step's token-wise transformer
// work — every layer's norms, QKV/O projections, rotary embedding, gated
// MLP and residual adds — as a function of the tokens in the step (prefill
// and decode tokens together: they share the GEMMs). Points are
// interpolated linearly; past the last one the layers' time grows with
// their FLOPs, linear in tokens, at the efficiency of the curve's
// large-token end (EndNsPerToken).
type LinearCurve struct {
	Source string    `json:"source"`
	Tokens []int     `json:"tokens"`
	Ns     []float64 `json:"ns"`
	// CrossArchitecture marks a curve measured on another GPU
	// architecture and scaled by peak FLOP/s and bandwidth: its kernels are
	// no floor for this GPU, and its efficiency is far less certain.
	CrossArchitecture bool `json:"cross_architecture,omitempty"`
}

// At is the curve's time for t tokens (0 for t ≤ 0): the measured points
// interpolated linearly, and past the last point T its time plus
// EndNsPerToken for every further token. A measured curve's last segment
// is noise, not physics: Vidur's H100 TP1 curve falls from 4,064 to 4,096
// tokens, and continuing that slope made an 8,192-token step cost 69 % of
// a 4,096-token one and, past about 17,000 tokens, leaves only the weight
// read. The token-wise layers' FLOPs grow linearly with the tokens, and
// a GEMM past the compute-bound knee runs no faster per FLOP on more rows.
func (c *LinearCurve) At(t int) float64 {
	n := len(c.Tokens)
	if t <= 0 || n == 0 {
		return 0
	}
	if t <= c.Tokens[0] {
		return c.Ns[0]
	}
	if last := c.Tokens[n-1]; t > last {
		return c.Ns[n-1] + c.EndNsPerToken()*float64(t-last)
	}
	i := sort.SearchInts(c.Tokens, t)
	if c.Tokens[i] == t {
		return c.Ns[i]
	}
	x0, x1 := float64(c.Tokens[i-1]), float64(c.Tokens[i])
	y0, y1 := c.Ns[i-1], c.Ns[i]
	return y0 + (y1-y0)*(float64(t)-x0)/(x1-x0)
}

// EndNsPerToken is the time per token of the curve's large-token end, what
// At charges each token past the last point: the least-squares fit of time
// proportional to tokens (to FLOPs: the rate the GEMMs achieve) over the
// curve's upper half (tokens ≥ half the last), and never less than the
// last point's own time per token. So past the last point the time never
// falls, and its time per token stays between the last point's and the
// slowest in the upper half. Its cost is a pass over the upper half; only
// steps larger than every measured one pay it.
func (c *LinearCurve) EndNsPerToken() float64 {
	n := len(c.Tokens)
	last := c.Tokens[n-1]
	var sxy, sxx float64
	for i := n - 1; i >= 0 && 2*c.Tokens[i] >= last; i-- {
		x := float64(c.Tokens[i])
		sxy, sxx = sxy+x*c.Ns[i], sxx+x*x
	}
	return max(sxy/sxx, c.Ns[n-1]/float64(last))
}

// WeightRead is the curve's one-token time: reading every linear weight
// once, which every step pays whatever its size.
func (c *LinearCurve) WeightRead() float64 { return c.Ns[0] }

// Compute is the curve's time for t tokens beyond the one-token weight
// read: the compute-bound growth of the GEMMs (0 for t ≤ 1, and where the
// measured curve dips below its one-token time).
func (c *LinearCurve) Compute(t int) float64 {
	if t <= 1 {
		return 0
	}
	return max(0, c.At(t)-c.Ns[0])
}

func (c *LinearCurve) validate() error {
	if len(c.Tokens) < 2 || len(c.Tokens) != len(c.Ns) {
		return fmt.Errorf("linear_curve: need ≥ 2 points with one time per token count (have %d tokens, %d times)", len(c.Tokens), len(c.Ns))
	}
	if c.Tokens[0] != 1 {
		return fmt.Errorf("linear_curve: tokens[0] = %d: the first point must be a one-token step (the weight-read time)", c.Tokens[0])
	}
	for i := range c.Tokens {
		if c.Tokens[i] < 1 || (i > 0 && c.Tokens[i] <= c.Tokens[i-1]) {
			return fmt.Errorf("linear_curve: tokens[%d] = %d: token counts must be ≥ 1 and increasing", i, c.Tokens[i])
		}
		if v := c.Ns[i]; !(v > 0 && v <= MaxFixedNs) {
			return fmt.Errorf("linear_curve: ns[%d] = %g must be a number in (0, %g]: no real step's token-wise layers take more than %v", i, v, MaxFixedNs, time.Duration(MaxFixedNs))
		}
	}
	return nil
}

// kernelFile is one measured reference: a GPU, the model it was measured
// with, and one curve per tensor-parallel degree.
type kernelFile struct {
	Name    string `json:"name"`
	GPURef  string `json:"gpu_ref"`
	Source  string `json:"source"`
	License string `json:"license"`
	// Model is the reference model's shape (fields of the catalogue's
	// LLM; a file without head_dim has hidden/heads).
	Model  LLM `json:"model"`
	Curves []struct {
		TP     int       `json:"tp"`
		Tokens []int     `json:"tokens"`
		Ns     []float64 `json:"ns"`
	} `json:"curves"`
	Rates *kernelRates `json:"rates"`
}

// kernelRates are the achieved rates of the kernels outside the layer curve
// on the reference GPU, fitted from its measured attention and
// per-sequence shots (model/data/kernels/gen.go): absolute rates of that
// GPU, so they hold for any model run on it.
type kernelRates struct {
	Source             string  `json:"source"`
	AttentionFLOPSPerS float64 `json:"attention_flops_per_s"`
	KVReadBytesPerS    float64 `json:"kv_read_bytes_per_s"`
	DecodeAttnFloorNs  float64 `json:"decode_attention_floor_ns_per_layer"`
	LMHeadBytesPerS    float64 `json:"lm_head_bytes_per_s"`
	PerSeqNs           float64 `json:"per_seq_ns"`
	// refLogits is the reference model's vocab·hidden, which PerSeqNs
	// (lm_head row and sampling) scales with.
	refLogits float64
}

// measuredRates returns the kernel rates measured on d's own GPU, or nil
// when its reference library has none or was measured on another GPU.
func measuredRates(g GPU) *kernelRates {
	file, sameArch := kernelRef(g)
	if !sameArch {
		return nil
	}
	f := readKernelFile(file)
	if f.Rates == nil || !strings.EqualFold(f.GPURef, g.Name) {
		return nil
	}
	r := *f.Rates
	r.refLogits = float64(f.Model.Vocab) * float64(f.Model.Hidden)
	return &r
}

func readKernelFile(name string) *kernelFile {
	b, err := kernelFS.ReadFile("data/kernels/" + name)
	if err != nil {
		panic("model: embedded kernel curves missing: " + err.Error())
	}
	var f kernelFile
	if err := json.Unmarshal(b, &f); err != nil {
		panic("model: embedded kernel curves corrupt: " + err.Error())
	}
	if f.Model.HeadDim == 0 && f.Model.Heads > 0 {
		f.Model.HeadDim = f.Model.Hidden / f.Model.Heads
	}
	return &f
}

// kernelRef is the measured reference library for a GPU: the catalogue's
// kernel_library, or, for a GPU without one, Vidur's A100 profile
// transferred by peak FLOP/s and bandwidth (a cross-architecture transfer).
func kernelRef(g GPU) (file string, sameArch bool) {
	if g.KernelLibrary == "" {
		return "vidur-a100-llama-3-8b.json", false
	}
	return g.KernelLibrary, g.KernelSameArchitecture
}

// LinearCurveFor transfers the measured reference curve to deployment d:
//
//	lin_d(T) = lin_ref(T) · ((1 − w(T))·r_F + w(T)·r_B),  w(T) = min(1, lin_ref(1)/lin_ref(T))
//
// where r_F is the ratio of linear FLOPs per GPU (and of peak FLOP/s) and
// r_B the ratio of weight bytes per GPU (and of HBM bandwidth), and w is
// the share of the reference step that is weight-read bound (1 for one
// token, falling as the GEMMs become compute bound). The curve measured at
// the deployment's TP is used; a TP without a measurement is scaled from
// the nearest one by the FLOP and byte ratios, which carry 1/TP.
func LinearCurveFor(d Deployment, cat *Catalogue) (*LinearCurve, error) {
	file, sameArch := kernelRef(d.GPU)
	ref := readKernelFile(file)
	refGPU, err := cat.GPU(ref.GPURef)
	if err != nil {
		return nil, err
	}
	tp := max(d.TP, 1)
	ci, best := 0, math.Inf(1)
	for i, c := range ref.Curves {
		if dist := math.Abs(math.Log(float64(c.TP) / float64(tp))); dist < best {
			ci, best = i, dist
		}
	}
	c := ref.Curves[ci]
	rm := ref.Model
	refLinear := rm.linearActiveF() / float64(c.TP)
	ourLinear := d.Model.linearActiveF() / float64(tp)
	peak := d.GPU.BF16FLOPS
	bytesPerParam := 2.0
	if d.Quant == FP8 {
		bytesPerParam = 1
		if d.GPU.FP8FLOPS > 0 {
			peak = d.GPU.FP8FLOPS
		}
	}
	rF := ourLinear / refLinear * refGPU.BF16FLOPS / peak
	rB := ourLinear * bytesPerParam / (refLinear * 2) * refGPU.HBMBytesPerSec / d.GPU.HBMBytesPerSec
	out := &LinearCurve{Tokens: append([]int(nil), c.Tokens...), Ns: make([]float64, len(c.Ns))}
	one := c.Ns[0]
	for i, v := range c.Ns {
		w := math.Min(1, one/v)
		rBT := rB
		if d.Model.IsMoE() {
			// A MoE step reads the experts its tokens touch: the byte
			// ratio grows with the step's tokens, up to all of them.
			rBT = rB * d.Model.linearTouched(c.Tokens[i]) / d.Model.linearActiveF()
		}
		out.Ns[i] = math.Round(v * ((1-w)*rF + w*rBT))
	}
	how := "same architecture"
	if !sameArch {
		how = "cross-architecture transfer by peak FLOP/s and bandwidth"
		out.CrossArchitecture = true
	}
	moe := ""
	if m := d.Model; m.IsMoE() {
		moe = fmt.Sprintf(", Mixture-of-Experts: FLOPs of %d active experts, bytes of the experts a step's tokens touch (%d of %d at one token, %.1f at %d)",
			m.ActiveExperts, m.ActiveExperts, m.Experts, m.TouchedExperts(c.Tokens[len(c.Tokens)-1]), c.Tokens[len(c.Tokens)-1])
	}
	out.Source = fmt.Sprintf("%s, TP %d, transferred to %s/%s/TP%d/%s (%s: FLOP ratio %.3f, byte ratio %.3f%s); %s",
		ref.Name, c.TP, d.GPU.Name, d.Model.Name, tp, d.Quant, how, rF, rB, moe, ref.License)
	return out, nil
}

// linearParams is one block's q, k, v, o and gated-MLP parameter count.
func linearParams(hidden, inter, heads, kvHeads, headDim int) int64 {
	h, hd := int64(hidden), int64(headDim)
	return h*int64(heads)*hd + 2*h*int64(kvHeads)*hd + int64(heads)*hd*h + 3*h*int64(inter)
}

// extendedTo is how far Extended carries a curve: the longest prompt a
// step of any catalogue model can hold whole.
const extendedTo = 1 << 17

// Extended returns c continued past its last measured point along the
// straight line least squares fits to its upper half (tokens ≥ half the
// last), with points at 2, 4, 8, … times the last token count up to
// extendedTo: the marginal cost of a token there (the line's slope), where
// At charges its time per token (EndNsPerToken), a few per cent more. The
// TensorRT-LLM prior, whose steps hold whole prompts, was fitted with this
// continuation and keeps it. c is returned as is if its upper half has
// fewer than 3 points or a slope ≤ 0.
func (c *LinearCurve) Extended() *LinearCurve {
	n := len(c.Tokens)
	if n == 0 {
		return c
	}
	last := c.Tokens[n-1]
	var sx, sy, sxx, sxy, k float64
	for i, t := range c.Tokens {
		if 2*t < last {
			continue
		}
		x, y := float64(t), c.Ns[i]
		sx, sy, sxx, sxy, k = sx+x, sy+y, sxx+x*x, sxy+x*y, k+1
	}
	if k < 3 {
		return c
	}
	slope := (k*sxy - sx*sy) / (k*sxx - sx*sx)
	if !(slope > 0) {
		return c
	}
	out := &LinearCurve{Source: c.Source, CrossArchitecture: c.CrossArchitecture,
		Tokens: append([]int(nil), c.Tokens...), Ns: append([]float64(nil), c.Ns...)}
	end := c.Ns[n-1]
	for t := 2 * last; t <= extendedTo; t *= 2 {
		out.Tokens = append(out.Tokens, t)
		out.Ns = append(out.Ns, math.Round(end+slope*float64(t-last)))
	}
	out.Source += fmt.Sprintf("; past %d tokens along the least-squares line of its upper half (%.4g ns per token)", last, slope)
	return out
}
