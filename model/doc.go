// Package model describes the hardware and the LLM a simulated worker runs,
// and how long one engine step takes.
//
// # Reading guide
//
//   - catalogue.go: GPU and LLM specifications, embedded from data/catalogue.json
//     with a source tag on every figure.
//   - gpufile.go: a GPU described by a user's datasheet file (--gpu
//     FILE.json): checked figures, and what is derived from the
//     catalogue's measured relations (CUDA-visible memory, idle power,
//     link, vLLM's batch defaults, the architecture family's kernel
//     library); hfconfig.go: a Hugging Face config.json read into an LLM
//     (dense, or Mixture-of-Experts: llm.go counts all experts' weights,
//     the active ones' FLOPs and the touched ones' bytes per step);
//     resolve.go: which of the two a --gpu or --model argument names.
//   - llm.go: parameter count, weight bytes and KV-cache bytes per token derived
//     from an LLM's architecture (never typed in).
//   - embedded.go: the decoder of the embedded JSON files (catalogue,
//     profiles), checked to agree with encoding/json.
//   - capacity.go: how many KV blocks fit on a worker, vLLM's arithmetic;
//     capacity_trt.go TensorRT-LLM's (free GPU memory fraction after its
//     dummy-request profiling).
//   - vllmrelease.go: what `vllm serve` of each release from 0.8.5 chooses
//     when a flag is not given (batch budgets by GPU memory and name, async
//     scheduling, block size, the memory profile); vllmdefaults.go the
//     default release's batch budgets.
//   - profile.go: the step-time family t = c0 + c1·P + c2·Σp·ctx + c3·D + c4·Σctx
//     and the built-in profiles embedded from data/profiles/; basis.go
//     which kind each default is (measured, transfer, kernel prior; BLIS
//     only under --profile blis) and blis.go BLIS's copied linear fits.
//   - kernels.go: measured layer-time curves (LinearCurve) of a GPU's
//     kernel library (data/kernels/), and how they extend past their last
//     point; prior.go the kernel prior built on them (KernelPrior: the
//     efficiencies and fixed costs a calibration starts from, each with its
//     prior); roofline.go the roofline estimate where nothing is measured.
//   - posterior.go: a calibration's posterior over a profile's coefficients
//     (draws for bands, what the runs identified); implied.go the physical
//     rates a profile implies (a check that a fit is physical).
//   - stack.go: the serving stacks (Dynamo's frontend, TensorRT-LLM's
//     executor loop, vLLM's API server) and their fixed costs, each a named
//     coefficient (coef.go) with its value, moment and source.
//   - prior_trt.go: TensorRT-LLM's kernel prior (its efficiency terms and
//     their priors); profile.go's TRTLLMProfileFor picks a TensorRT-LLM
//     worker's profile, transfer.go carries a fit to neighbours.
//
// model imports nothing from the rest of routesim.
package model
