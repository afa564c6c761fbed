package calib

import (
	"fmt"
	"math"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// TRTBenchSettings are the engine settings trtllm-bench throughput runs a
// row with when, as in NVIDIA's published tables, the command names no
// max_batch_size or max_num_tokens: its tuning heuristic's, from the
// dataset's mean ISL and OSL and the KV memory it estimates.
type TRTBenchSettings struct {
	MaxBatchSize int
	MaxNumTokens int
	// KVMaxRequests is the heuristic's estimate of the requests of
	// ISL+OSL tokens the KV cache holds (before rounding).
	KVMaxRequests float64
}

// BenchSettings reproduces trtllm-bench's choice of max_batch_size and
// max_num_tokens for the PyTorch backend without chunked context
// (tensorrt_llm/bench/benchmark/utils/general.py get_settings, then
// bench/build/tuning.py calc_engine_setting and finetune_setting):
//
//	available = n_gpus · device GiB − params · bytes/param / 2³⁰
//	requests  = fraction · available / (KV GiB per token · (ISL + OSL))
//	raw_bs    = min(requests, 4096);  raw_tokens = min(raw_bs · (1 + ISL/OSL), 32768)
//	max_bs    = 64 ≤ ⌈raw_bs/32⌉·32 (< 256), ⌈/128⌉·128 (< 1024), else ⌈/256⌉·256
//	max_tok   = 2048 ≤ ⌈raw_tokens/256⌉·256 (< 4096), ⌈/512⌉·512 (< 8192), else ⌈/1024⌉·1024
//	max_tok   = max(max_tok, ISL + max_bs)   (chunking off: a whole prompt must fit)
//
// with the KV cache in FP8 for an FP8 checkpoint (one byte per element),
// KV heads at least one per rank, and the device memory as NVML reports
// it (the catalogue's memory_bytes).
func BenchSettings(d model.Deployment, isl, osl int, fraction float64) TRTBenchSettings {
	tp := max(d.TP, 1)
	bytesPerParam := 2.0
	if d.Quant == model.FP8 {
		bytesPerParam = 1
	}
	kvElem := float64(max(d.KVDtypeBytes, 1))
	kvHeads := max(tp, d.Model.KVHeads)
	const gib = 1 << 30
	perToken := 2 * float64(d.Model.Layers) * float64(kvHeads) * float64(d.Model.HeadDim) * kvElem / gib
	engine := float64(d.Model.Params()) * bytesPerParam / gib
	available := float64(tp)*float64(d.GPU.MemoryBytes)/gib - engine
	requests := available * fraction / (perToken * float64(isl+osl))
	rawBS := math.Min(requests, 4096)
	rawTok := math.Min(rawBS*(1+float64(isl)/float64(osl)), 32768)
	ceil := func(x float64, step int) int { return step * int(math.Ceil(x/float64(step))) }
	var bs, tok int
	switch {
	case rawBS < 256:
		bs = max(64, ceil(rawBS, 32))
	case rawBS < 1024:
		bs = ceil(rawBS, 128)
	default:
		bs = ceil(rawBS, 256)
	}
	switch {
	case rawTok < 4096:
		tok = max(2048, ceil(rawTok, 256))
	case rawTok < 8192:
		tok = ceil(rawTok, 512)
	default:
		tok = ceil(rawTok, 1024)
	}
	tok = max(tok, isl+bs)
	return TRTBenchSettings{MaxBatchSize: bs, MaxNumTokens: tok, KVMaxRequests: requests}
}

// TRTBench re-simulates rows of a trtllm-bench throughput table as the
// benchmark ran them: one TensorRT-LLM worker (a TP group) on the PyTorch
// executor, every request of the row's dataset queued at t = 0, all of
// the row's ISL and OSL exactly (prepare_dataset.py token-norm-dist with
// zero deviation, random token ids, EOS disabled so each request runs to
// its max_tokens = OSL), the capacity scheduler GUARANTEED_NO_EVICT
// (trtllm-bench throughput's --scheduler_policy default), chunked context
// off (--enable_chunked_context off), block reuse off (its KV config),
// the overlap scheduler on (the executor's default), max_seq_len ISL+OSL
// (the dataset's longest sequence), and max_batch_size and max_num_tokens
// from its heuristic (BenchSettings).
type TRTBench struct {
	Deploy model.Deployment
	// Seed draws nothing (the workload is fixed) but seeds the simulator.
	Seed uint64
}

// TRTBenchSim is one row as simulated.
type TRTBenchSim struct {
	// TokensPerS is the total output throughput: output tokens of every
	// request over the time from the first request's submission to the
	// last one's end (bench/dataclasses/statistics.py
	// output_throughput_tok_ns; reporting.py total_latency_ns).
	TokensPerS float64          `json:"output_tokens_per_s"`
	TotalS     float64          `json:"total_s"`
	Settings   TRTBenchSettings `json:"settings"`
	KVBlocks   int              `json:"kv_blocks"`
	BlockSize  int              `json:"block_size"`
}

// Engine is the engine configuration the row runs with.
func (b *TRTBench) Engine(row TRTBenchRow) (sim.EngineFlags, TRTBenchSettings) {
	s := BenchSettings(b.Deploy, row.ISL, row.OSL, row.KVFraction)
	return sim.EngineFlags{
		Engine:                sim.TRTLLM,
		MaxNumSeqs:            s.MaxBatchSize,
		MaxNumBatchedTokens:   s.MaxNumTokens,
		MaxModelLen:           row.ISL + row.OSL,
		FreeGPUMemoryFraction: row.KVFraction,
		NoPrefixCaching:       true,
	}, s
}

// workload is the row's dataset: Requests prompts of ISL distinct tokens
// at t = 0, each asking for OSL.
func trtWorkload(row TRTBenchRow, blockSize int) (*sim.Workload, error) {
	tr := &workload.Trace{Name: fmt.Sprintf("trtllm-bench(ISL %d, OSL %d, %d requests)", row.ISL, row.OSL, row.Requests)}
	per := (row.ISL + workload.MooncakeBlockTokens - 1) / workload.MooncakeBlockTokens
	next := int64(1)
	tr.Requests = make([]workload.Request, row.Requests)
	for i := range tr.Requests {
		ids := make([]int64, per)
		for k := range ids {
			ids[k] = next
			next++
		}
		tr.Requests[i] = workload.Request{Line: i + 1, InputTokens: row.ISL, OutputTokens: row.OSL, HashIDs: ids}
	}
	return workload.Prepare(tr, blockSize)
}

// Simulate runs row with profile p and measures it as trtllm-bench does.
func (b *TRTBench) Simulate(row TRTBenchRow, p *model.Profile) (TRTBenchSim, error) {
	eng, set := b.Engine(row)
	wc, err := sim.ResolveWorker(b.Deploy, eng)
	if err != nil {
		return TRTBenchSim{}, err
	}
	wl, err := trtWorkload(row, wc.BlockSize)
	if err != nil {
		return TRTBenchSim{}, err
	}
	built, err := scenario.Replay(1, wc, p, wl, "round-robin")
	if err != nil {
		return TRTBenchSim{}, err
	}
	res, _, err := built.Run(b.Seed).Exec()
	if err != nil {
		return TRTBenchSim{}, err
	}
	var first, last sim.Time = math.MaxInt64, 0
	tokens := 0
	for _, r := range res.Records {
		if r.Status != sim.StatusOK {
			return TRTBenchSim{}, fmt.Errorf("request %d ended %v (%s): trtllm-bench's runs completed every request", r.ID, r.Status, r.Reason)
		}
		first, last = min(first, r.Arrival), max(last, r.End)
		tokens += r.OutputTokens
	}
	span := float64(last - first)
	if span <= 0 {
		return TRTBenchSim{}, fmt.Errorf("the run took no time")
	}
	return TRTBenchSim{TokensPerS: float64(tokens) / (span / 1e9), TotalS: span / 1e9,
		Settings: set, KVBlocks: wc.KVBlocks, BlockSize: wc.BlockSize}, nil
}
