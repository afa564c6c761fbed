//go:build ignore

// gen derives routesim's linear-layer time curves from Vidur's measured A100
// and H100 operator profiles. It is how the JSON files beside it were made:
//
//	go run model/data/kernels/gen.go PATH/TO/vidur/data/profiling/compute
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
	"fmt"
	"io"
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
}

type shape struct {
	Name         string `json:"name"`
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden"`
	Intermediate int    `json:"intermediate"`
	Heads        int    `json:"heads"`
	KVHeads      int    `json:"kv_heads"`
}

var ops = []string{"input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
	"post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add", "add"}

func main() {
	root := os.Args[1]
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
		b, _ := json.MarshalIndent(f, "", " ")
		if err := os.WriteFile(s.out, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
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
