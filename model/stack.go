package model

import (
	"fmt"
	"math"
	"strings"
)

// A serving stack is the software a request passes through besides the
// engine's steps: a frontend (HTTP, chat template, tokenisation, routing,
// detokenisation, SSE), a worker process handing requests to the engine,
// and the engine's own host loop. Its fixed costs are named profile
// coefficients (Coefficients), so a profile carries the values it was
// measured with and a calibration fits them like any other; Stacks lists,
// per stack, what each term costs by default, when the simulation charges
// it, and where the value comes from.
//
// Every built-in profile was measured on vLLM (with Dynamo's frontend or
// vLLM's own API server); its frontend terms are taken for Dynamo's
// frontend in both Dynamo stacks. A run whose engine belongs to another
// stack than its profile's takes that stack's own terms (StackTerm.Own)
// from the stack: ForStack.

// Stack names.
const (
	StackDynamoVLLM   = "dynamo-vllm"
	StackDynamoTRTLLM = "dynamo-trtllm"
	StackVLLMServe    = "vllm-serve"
)

// Stack is one serving stack and its fixed costs.
type Stack struct {
	Name string
	// Engine is the engine its workers run ("vllm" or "trtllm").
	Engine string
	Doc    string
	// Reference marks a stack no run selects: it documents where some
	// profiles' terms come from.
	Reference bool
	Terms     []StackTerm
}

// StackTerm is one fixed cost of a stack. A term with a Coef is a profile
// coefficient; one without is a cost the stack has that routesim does not
// charge, with the reason in Source.
type StackTerm struct {
	// Component is the part of the stack that spends it.
	Component string
	// What names a term that is not a coefficient.
	What string
	Coef string
	// Value is the term's value in the coefficient's unit: the prior of a
	// shared term (a profile's own value is used), the value of an owned
	// one.
	Value float64
	// LogSD is the prior's spread in log units (a factor e^LogSD is one
	// sd) for a calibration that fits the term.
	LogSD float64
	// Own: the stack's own term, which ForStack sets on a profile
	// measured on another stack. A shared term (Dynamo's frontend, in
	// both Dynamo stacks) keeps the profile's value.
	Own bool
	// Applies says when the simulation charges it.
	Applies string
	Source  string
}

// Modelled says whether the term is a coefficient the simulation charges.
func (t StackTerm) Modelled() bool { return t.Coef != "" }

// Name is the term's coefficient name, or what it is.
func (t StackTerm) Name() string {
	if t.Coef != "" {
		return t.Coef
	}
	return t.What
}

// Sources of the terms, quoted once where two stacks share them.
const (
	srcFrontendNs = "no published per-request timing of Dynamo's frontend; prior 5 ms from inference-sim's fits of vLLM's API server " +
		"(α0 = 1.6–7.7 ms over four fits, model/data/blis/fits.json, inference-sim@938f8d88); the 8×A100 Dynamo+vLLM calibration left it near the prior (5.8 ms: its runs do not pin it)"
	srcTokenise = "Dynamo tokenises inline on the request's task (lib/llm/src/preprocessor.rs@45bc1b798cce:L524-535); HuggingFace tokenizers, one sequence on one core: " +
		"≈1.1 µs/token (1.1 s for a 4 MB, ~1 M-token document; C. Xu, \"3.3x Faster HuggingFace Tokenizers for Single Sequence\", 2025), " +
		"1.3–2 MB/s ≈ 2–3 µs/token at 4 characters per token (huggingface/tokenizers PR #1582); prior 1 µs/token"
	srcDetok = "not charged: incremental detokenisation costs tens of µs per token even in Python (vLLM PR #121: 0.03 s for 8×128 tokens, ≈30 µs/token), " +
		"under 0.2 % of a 15 ms inter-token gap, and Dynamo's is Rust; a constant response-path latency (request plane, SSE write) adds to TTFT and E2E " +
		"exactly as frontend_ns does, so client measurements cannot tell them apart: calibrations fold it into frontend_ns"
	applyFrontend = "arrival → routing, once per request (before the router sees it)"
	applyTokenise = "arrival → routing, per prompt token"
)

// Stacks lists the serving stacks, the default first.
var Stacks = []Stack{
	{
		Name: StackDynamoVLLM, Engine: "vllm",
		Doc: "Dynamo 1.2's Rust frontend (HTTP, chat template, tokenisation, KV router, detokenisation, SSE) in front of Dynamo's vLLM workers (vLLM V1, AsyncLLM); the 8×A100 study's stack",
		Terms: []StackTerm{
			{Component: "Dynamo frontend", Coef: "frontend_ns", Value: 5e6, LogSD: 1, Applies: applyFrontend, Source: srcFrontendNs},
			{Component: "Dynamo frontend", Coef: "frontend_ns_per_input_token", Value: 1000, LogSD: 1, Applies: applyTokenise, Source: srcTokenise},
			{Component: "Dynamo frontend", What: "detokenisation and SSE per output token", Value: math.NaN(), Source: srcDetok},
			{Component: "vLLM engine", Coef: "executor_host_ns", Value: 0, Own: true, Applies: "not charged apart",
				Source: "vLLM's host time per step is inside its profile's step time (step_base_ns, of which host_overhead_ns is the GPU-idle part), measured with vLLM"},
		},
	},
	{
		Name: StackDynamoTRTLLM, Engine: "trtllm",
		Doc: "Dynamo 1.2's frontend in front of Dynamo's TensorRT-LLM workers (a Python handler calling the LLM API's generate_async) and TensorRT-LLM 1.3.0rc14's PyExecutor; the H100 and H200 chat studies' stack",
		Terms: []StackTerm{
			{Component: "Dynamo frontend", Coef: "frontend_ns", Value: 5e6, LogSD: 1, Applies: applyFrontend, Source: "as dynamo-vllm: " + srcFrontendNs},
			{Component: "Dynamo frontend", Coef: "frontend_ns_per_input_token", Value: 1000, LogSD: 1, Applies: applyTokenise, Source: "as dynamo-vllm: " + srcTokenise},
			{Component: "Dynamo frontend", What: "detokenisation and SSE per output token", Value: math.NaN(), Source: srcDetok},
			{Component: "TensorRT-LLM executor", Coef: "executor_host_ns", Value: 580e3, LogSD: 1, Own: true,
				Applies: "every executor iteration: with the overlap scheduler an iteration takes max(step, host) and each token reaches the frontend host after its step ends " +
					"(the host handles step n's output while step n+1 runs); without it, host and GPU take turns (step + host)",
				Source: "\"~580 µs/iter of host overhead\", Llama-3.1-8B-FP8 on B200, concurrency 64, ISL = OSL = 1000 (NVIDIA/TensorRT-LLM issue #13957, 2026-05-10; docs/readings/tensorrt-llm.md §5); " +
					"it grows with the batch (TorchSampler.update_requests' per-request loop: an 8.8 ms bubble per iteration at 256 requests, gpt-oss-120b on GB200, TensorRT-LLM PR #16564), which is not modelled"},
			{Component: "Dynamo TensorRT-LLM worker", What: "request hand-off (Python handler, LLM API, executor IPC)", Value: math.NaN(),
				Source: "not charged: no published timing of the request plane, the Python handler or TensorRT-LLM's proxy↔worker IPC (docs/readings/tensorrt-llm.md §7); as a constant it would add to TTFT as frontend_ns does"},
		},
	},
	{
		Name: StackVLLMServe, Engine: "vllm", Reference: true,
		Doc: "vLLM's OpenAI API server without Dynamo, what inference-sim's BLIS fits measured (the built-in *.blis profiles carry their α0 and α1 as frontend_ns and frontend_ns_per_input_token); runs use a profile's own values",
		Terms: []StackTerm{
			{Component: "vLLM API server", Coef: "frontend_ns", Value: 2.77e6, LogSD: 1, Applies: applyFrontend + "; the API server tokenises in the pod, after routing",
				Source: "α0 of inference-sim's four BLIS fits, vLLM v0.8.4: 1.6–7.7 ms, median 2.8 ms (model/data/blis/fits.json, inference-sim@938f8d88)"},
			{Component: "vLLM API server", Coef: "frontend_ns_per_input_token", Value: 2910, LogSD: 1, Applies: applyTokenise,
				Source: "α1 of the same fits: 2.2–10 µs/token, median 2.9 µs/token"},
			{Component: "vLLM API server", What: "output-token post-processing (BLIS α2)", Value: math.NaN(),
				Source: "not charged: the fits' α2 (1.8–14 ms per output token) trades off against their step constant β0 rather than measuring detokenisation"},
			{Component: "vLLM engine", Coef: "executor_host_ns", Value: 0, Own: true, Applies: "not charged apart", Source: "as dynamo-vllm: inside the step time"},
		},
	},
}

// StackByName returns the named stack.
func StackByName(name string) (Stack, bool) {
	for _, s := range Stacks {
		if s.Name == name {
			return s, true
		}
	}
	return Stack{}, false
}

// StackNames lists the stacks' names, the default first.
func StackNames() []string {
	out := make([]string, len(Stacks))
	for i, s := range Stacks {
		out[i] = s.Name
	}
	return out
}

// StackFor is the stack a run of engine ("vllm", "trtllm") uses.
func StackFor(engine string) string {
	if strings.EqualFold(engine, "trtllm") {
		return StackDynamoTRTLLM
	}
	return StackDynamoVLLM
}

// StackPrior is the prior of coefficient name in the stacks that own it
// (ok false if none does): centred on the first owning stack's non-zero
// value.
func StackPrior(name string) (Prior, bool) {
	for _, s := range Stacks {
		for _, t := range s.Terms {
			if t.Coef == name && t.Own && t.Value > 0 {
				return Prior{Name: name, Centre: t.Value, LogSD: t.LogSD, Source: s.Name + ": " + t.Source}, true
			}
		}
	}
	return Prior{}, false
}

// ForStack returns p for a run on the named stack: p itself if it was
// measured there, else a copy carrying the stack's own terms
// (executor_host_ns) and the stack's name, its note saying so. Shared
// terms keep p's values. An unknown stack is a programmer error.
func ForStack(p *Profile, name string) *Profile {
	s, ok := StackByName(name)
	if !ok {
		panic("model: unknown stack " + name)
	}
	if p.Stack == name {
		return p
	}
	q := *p
	var set []string
	for _, t := range s.Terms {
		if !t.Own || !t.Modelled() {
			continue
		}
		c, _ := CoefficientByName(t.Coef)
		*c.Field(&q) = t.Value
		set = append(set, fmt.Sprintf("%s = %s", t.Coef, c.quantity(t.Value)))
	}
	q.Stack = name
	from := "its stack"
	if p.Stack != "" {
		from = p.Stack
	}
	note := fmt.Sprintf("Measured on %s, run on %s: %s from that stack's sources (routesim stacks).", from, name, strings.Join(set, ", "))
	if q.Note != "" {
		note = q.Note + " " + note
	}
	q.Note = note
	return &q
}
