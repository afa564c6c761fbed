//go:build ignore

// gen derives routesim's linear-layer time curves from Vidur's measured A100
// and H100 operator profiles and LLMServingSim's measured RTX 4090 profile.
// It is how the JSON files beside it were made:
//
//	go run model/data/kernels/gen.go -vidur PATH/TO/vidur/data/profiling/compute \
//		-llmservingsim PATH/TO/LLMServingSim
//
// For every (num_tokens, TP) row it sums the per-layer median CUDA times of
// the operators a transformer block runs on every token — input and
// post-attention RMSNorm, QKV projection, rotary embedding, output
// projection, gated-MLP up (gate+up) projection, activation, down projection
// and the two residual adds — and multiplies by the layer count. Attention
// kernels, the embedding lookup, lm_head and the sampler are not in the sum:
// routesim models them as their own terms.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

type curve struct {
	TP     int       `json:"tp"`
	Tokens []int     `json:"tokens"`
	Ns     []float64 `json:"ns"`
}

type file struct {
	Name    string  `json:"name"`
	GPURef  string  `json:"gpu_ref"`
	Source  string  `json:"source"`
	License string  `json:"license"`
	Model   shape   `json:"model"`
	Curves  []curve `json:"curves"`
	Rates   *rates  `json:"rates,omitempty"`
}

// rates are achieved rates of the kernels outside the layer curve, fitted
// from a same-GPU measurement (see fitRates).
type rates struct {
	Source             string  `json:"source"`
	AttentionFLOPSPerS float64 `json:"attention_flops_per_s"`
	KVReadBytesPerS    float64 `json:"kv_read_bytes_per_s"`
	DecodeAttnFloorNs  float64 `json:"decode_attention_floor_ns_per_layer"`
	LMHeadBytesPerS    float64 `json:"lm_head_bytes_per_s"`
	PerSeqNs           float64 `json:"per_seq_ns"`
}

type shape struct {
	Name         string `json:"name"`
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden"`
	Intermediate int    `json:"intermediate"`
	Heads        int    `json:"heads"`
	KVHeads      int    `json:"kv_heads"`
	HeadDim      int    `json:"head_dim,omitempty"`
	Vocab        int    `json:"vocab,omitempty"`
}

var ops = []string{"input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
	"post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add", "add"}

func main() {
	vidur := flag.String("vidur", "", "Vidur's data/profiling/compute directory")
	lss := flag.String("llmservingsim", "", "a checkout of casys-kaist/LLMServingSim at "+lssCommit)
	flag.Parse()
	if *vidur != "" {
		genVidur(*vidur)
	}
	if *lss != "" {
		genLLMServingSim(*lss)
	}
}

func write(out string, f *file) {
	b, _ := json.MarshalIndent(f, "", " ")
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func genVidur(root string) {
	const commit = "microsoft/vidur @ 7d47513363ec447a741ac5e47241580b47724fbf"
	sets := []struct {
		out, gpu, rel, model string
		layers               int
	}{
		{"vidur-a100-llama-3-8b.json", "A100-SXM4-80GB", "a100/meta-llama/Meta-Llama-3-8B/mlp.csv", "Meta-Llama-3-8B", 32},
		{"vidur-h100-llama-2-7b.json", "H100-SXM5-80GB", "h100/meta-llama/Llama-2-7b-hf/mlp.csv", "Llama-2-7b-hf", 32},
	}
	for _, s := range sets {
		f, err := build(filepath.Join(root, s.rel), s.layers)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		f.Name, f.GPURef = "vidur-"+s.gpu+"-"+s.model, s.gpu
		f.Model.Name = s.model
		f.Source = commit + " data/profiling/compute/" + s.rel + ": per-layer median CUDA time of the block's token-wise operators (norms, QKV, rope, O, gate/up, act, down, 2 residual adds) × layers; attention, embedding, lm_head and sampler excluded"
		f.License = "MIT, Copyright (c) Microsoft Corporation (derived figures)"
		write(s.out, f)
	}
}

func build(path string, layers int) (*file, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := csv.NewReader(fh)
	head, err := r.Read()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	num := func(row []string, name string) float64 {
		v, err := strconv.ParseFloat(row[col[name]], 64)
		if err != nil {
			panic(fmt.Sprintf("%s: %s: %v", path, name, err))
		}
		return v
	}
	by := map[int]map[int]float64{}
	f := &file{}
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		tp, tok := int(num(row, "num_tensor_parallel_workers")), int(num(row, "num_tokens"))
		ms := 0.0
		for _, op := range ops {
			ms += num(row, "time_stats."+op+".median")
		}
		if by[tp] == nil {
			by[tp] = map[int]float64{}
		}
		by[tp][tok] = ms * float64(layers) * 1e6
		f.Model = shape{Layers: layers, Hidden: int(num(row, "n_embd")), Intermediate: int(num(row, "n_expanded_embd")),
			Heads: int(num(row, "n_head")), KVHeads: int(num(row, "n_kv_head"))}
	}
	var tps []int
	for tp := range by {
		tps = append(tps, tp)
	}
	sort.Ints(tps)
	for _, tp := range tps {
		c := curve{TP: tp}
		for tok := range by[tp] {
			c.Tokens = append(c.Tokens, tok)
		}
		sort.Ints(c.Tokens)
		for _, tok := range c.Tokens {
			c.Ns = append(c.Ns, float64(int64(by[tp][tok]+0.5)))
		}
		f.Curves = append(f.Curves, c)
	}
	return f, nil
}

const lssCommit = "casys-kaist/LLMServingSim @ 5daddb21a545658d5150b535712d0494584b5278"

// lssOps are the per-layer entries of LLMServingSim's dense.csv that a
// Llama block runs on every token: the RMSNorm twice (before attention and
// before the MLP; vLLM fuses the residual add into it), QKV, rotary, O,
// gate/up, activation and down. embedding and final_layernorm run once per
// step, not per layer, and are left out like Vidur's.
var lssOps = []string{"layernorm", "layernorm", "qkv_proj", "rotary_emb", "o_proj", "gate_up_proj", "act_fn", "down_proj"}

// genLLMServingSim derives the RTX 4090 Llama-3.1-8B layer curve and the
// kernel rates from LLMServingSim's profile (vLLM 0.19.0, one layer,
// CUDA time per kernel).
func genLLMServingSim(root string) {
	const rel = "profiler/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16/tp1/"
	const layers, heads, kvHeads, headDim, hidden, vocab = 32, 32, 8, 128, 4096, 128256
	dense := readRows(filepath.Join(root, rel, "dense.csv"))
	byTok := map[int]float64{}
	for _, r := range dense {
		for _, op := range lssOps {
			if r.s[0] == op {
				byTok[int(r.f[1])] += r.f[2]
			}
		}
	}
	c := curve{TP: 1}
	for tok := range byTok {
		c.Tokens = append(c.Tokens, tok)
	}
	sort.Ints(c.Tokens)
	for _, tok := range c.Tokens {
		c.Ns = append(c.Ns, float64(int64(byTok[tok]*layers*1e3+0.5)))
	}
	f := &file{
		Name: "llmservingsim-RTX-4090-Llama-3.1-8B", GPURef: "RTX-4090",
		Source:  lssCommit + " " + rel + "dense.csv (vLLM 0.19.0, CUDA 12.8, one-layer model): per-layer kernel time of RMSNorm ×2, qkv_proj, rotary_emb, o_proj, gate_up_proj, act_fn, down_proj × 32 layers; attention, embedding, lm_head and sampler excluded",
		License: "MIT, Copyright (c) 2024, CASYS Lab at KAIST (derived figures)",
		Model: shape{Name: "Llama-3.1-8B", Layers: layers, Hidden: hidden, Intermediate: 14336,
			Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Vocab: vocab},
		Curves: []curve{c},
	}
	f.Rates = fitRates(root, rel, heads, kvHeads, headDim, hidden, vocab)
	write("llmservingsim-rtx4090-llama-3.1-8b.json", f)
}

// fitRates fits, by least squares over the measured grid:
//   - attention FLOP/s: pure-prefill shots, 4·heads·head_dim FLOPs per
//     causal (query, key) pair, time through the origin;
//   - KV-read bytes/s and a per-layer floor: pure-decode shots, time =
//     floor + KV bytes / rate;
//   - lm_head bytes/s: the one-sequence lm_head time reads vocab·hidden
//     bf16 weights;
//   - per-sequence time: the slope of lm_head + sampler over 1–64
//     sequences.
func fitRates(root, rel string, heads, kvHeads, headDim, hidden, vocab int) *rates {
	var sft, sff float64
	var dx, dy []float64
	for _, r := range readRows(filepath.Join(root, rel, "attention.csv")) {
		c, kp, nd, kd, us := r.f[0], r.f[1], r.f[2], r.f[3], r.f[4]
		switch {
		case nd == 0 && c > 0:
			flops := 4 * float64(heads*headDim) * (c*kp + c*(c+1)/2)
			sft += flops * us
			sff += flops * flops
		case c == 0 && nd > 0:
			dx = append(dx, nd*kd*2*float64(kvHeads*headDim)*2)
			dy = append(dy, us)
		}
	}
	// Relative errors: weight each shot by 1/time², so the many small
	// shots pin the floor and the large ones the rate.
	dw := make([]float64, len(dy))
	for i, y := range dy {
		dw[i] = 1 / (y * y)
	}
	floor, slope := wls(dx, dy, dw)
	per := map[string]map[int]float64{"lm_head": {}, "sampler": {}}
	for _, r := range readRows(filepath.Join(root, rel, "per_sequence.csv")) {
		per[r.s[0]][int(r.f[1])] = r.f[2]
	}
	var sx, sy []float64
	for n := 1; n <= 64; n++ {
		lm, ok1 := per["lm_head"][n]
		sa, ok2 := per["sampler"][n]
		if ok1 && ok2 {
			sx, sy = append(sx, float64(n)), append(sy, lm+sa)
		}
	}
	_, perSeq := wls(sx, sy, nil)
	return &rates{
		Source:             lssCommit + " " + rel + "attention.csv and per_sequence.csv: least-squares fits (model/data/kernels/gen.go fitRates)",
		AttentionFLOPSPerS: round3(sff / sft * 1e6),
		KVReadBytesPerS:    round3(1 / slope * 1e6),
		DecodeAttnFloorNs:  math.Round(floor * 1e3),
		LMHeadBytesPerS:    round3(float64(vocab*hidden*2) / per["lm_head"][1] * 1e6),
		PerSeqNs:           math.Round(perSeq * 1e3),
	}
}

// wls is the weighted least-squares line y = a + b·x (weights w, or all 1
// when w is nil).
func wls(x, y, w []float64) (a, b float64) {
	wt := func(i int) float64 {
		if w == nil {
			return 1
		}
		return w[i]
	}
	var sw, mx, my float64
	for i := range x {
		sw, mx, my = sw+wt(i), mx+wt(i)*x[i], my+wt(i)*y[i]
	}
	mx, my = mx/sw, my/sw
	var sxy, sxx float64
	for i := range x {
		sxy += wt(i) * (x[i] - mx) * (y[i] - my)
		sxx += wt(i) * (x[i] - mx) * (x[i] - mx)
	}
	b = sxy / sxx
	return my - b*mx, b
}

// round3 keeps three significant digits.
func round3(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v))-2)
	return math.Round(v/p) * p
}

type row struct {
	s []string
	f []float64
}

// readRows reads a CSV with a header; each cell is kept as text and, where
// it parses, as a number.
func readRows(path string) []row {
	fh, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, path, err)
		os.Exit(1)
	}
	var out []row
	for _, rec := range recs[1:] {
		r := row{s: rec, f: make([]float64, len(rec))}
		for i, v := range rec {
			r.f[i], _ = strconv.ParseFloat(v, 64)
		}
		out = append(out, r)
	}
	return out
}
