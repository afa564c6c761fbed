package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// flagAliases are the spellings users of the engines and routers type,
// accepted for run and sweep and shown in their help. Sources: vLLM's
// engine arguments (vllm/engine/arg_utils.py), Dynamo's frontend (v1.2.0
// configuration reference; ≤ v1.1 for the weight, ≤ Dec 2025 for
// --busy-threshold: shared/router-notes.md §1–2), TensorRT-LLM's
// trtllm-serve options.
var flagAliases = []struct{ alias, flag, from string }{
	{"tensor-parallel-size", "tp", "vLLM"},
	{"quantization", "quant", "vLLM"},
	{"kv-cache-block-size", "block-size", "Dynamo"},
	{"router-kv-overlap-score-credit", "overlap-score-credit", "Dynamo v1.2"},
	{"router-kv-overlap-score-weight", "prefill-load-scale", "Dynamo ≤ v1.1; the deprecated weight maps to prefill_load_scale"},
	{"kv-overlap-score-weight", "prefill-load-scale", "Dynamo ≤ v1.1"},
	{"busy-threshold", "active-decode-blocks-threshold", "Dynamo ≤ Dec 2025"},
	{"router-mode", "policy", "Dynamo: round-robin, random, kv (as --dynamo-version ships it)"},
	{"max-batch-size", "max-num-seqs", "TRT-LLM: max_batch_size"},
	{"max-num-tokens", "max-num-batched-tokens", "TRT-LLM: max_num_tokens"},
	{"max_batch_size", "max-num-seqs", "trtllm-serve"},
	{"max_num_tokens", "max-num-batched-tokens", "trtllm-serve"},
	{"max-seq-len", "max-model-len", "Dynamo's TRT-LLM worker"},
	{"max_seq_len", "max-model-len", "trtllm-serve"},
	{"tokens-per-block", "block-size", "TRT-LLM: kv_cache_config.tokens_per_block"},
	{"kv_cache_free_gpu_memory_fraction", "free-gpu-memory-fraction", "trtllm-serve"},
	{"enable_chunked_prefill", "enable-chunked-prefill", "trtllm-serve"},
}

// routerModes maps Dynamo's --router-mode values to routesim policies:
// kv is Dynamo's KV router with every default of --dynamo-version.
var routerModes = map[string]string{"round-robin": "round-robin", "random": "random", "kv": "kv"}

// expandAliases rewrites aliases to routesim's flags: --alias[=v] →
// --flag[=v], vLLM's -tp → --tp, --no-enable-prefix-caching →
// --enable-prefix-caching=false, and --router-mode values to policies.
func expandAliases(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		switch {
		case a == "-tp":
			a = "--tp"
		case strings.HasPrefix(a, "-tp="):
			a = "--tp=" + a[len("-tp="):]
		case a == "--no-enable-prefix-caching":
			a = "--enable-prefix-caching=false"
		case a == "--no-async-scheduling":
			a = "--async-scheduling=false"
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") {
			out = append(out, a)
			continue
		}
		for _, al := range flagAliases {
			if name != al.alias {
				continue
			}
			name = al.flag
			if al.alias == "router-mode" {
				if !hasValue && i+1 < len(args) {
					i++
					value, hasValue = args[i], true
				}
				p, ok := routerModes[value]
				if !ok {
					return nil, usageError{fmt.Errorf("--router-mode %q: want round-robin, random or kv", value)}
				}
				value = p
			}
		}
		if hasValue {
			out = append(out, "--"+name+"="+value)
		} else {
			out = append(out, "--"+name)
		}
	}
	return out, nil
}

// showAliases adds each alias to its flag's help text.
func showAliases(fs *pflag.FlagSet) {
	for _, al := range flagAliases {
		if f := fs.Lookup(al.flag); f != nil {
			f.Usage += fmt.Sprintf(" [alias --%s: %s]", al.alias, al.from)
		}
	}
	if f := fs.Lookup("tp"); f != nil {
		f.Usage += " [alias -tp: vLLM]"
	}
	if f := fs.Lookup("enable-prefix-caching"); f != nil {
		f.Usage += " [alias --no-enable-prefix-caching: vLLM]"
	}
	if f := fs.Lookup("async-scheduling"); f != nil {
		f.Usage += " [alias --no-async-scheduling: vLLM]"
	}
}
