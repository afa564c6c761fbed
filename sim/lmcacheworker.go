package sim

import "fmt"

// How a vLLM worker uses its LMCache tier (lmcache.go): the hooks admit,
// schedule and the cluster call, only when the worker has one
// (worker.lmc != nil).

// lmcLookup is the tier's part of admitting r, whose first hits blocks
// vLLM's prefix cache holds: the tokens r starts computed with, and the
// chunks [from, to) to retrieve if it is admitted (none: from == to). The
// scheduler asks LMCache for the prompt's hit (get_num_new_matched_tokens:
// a hit of every token gives the last one back) and takes what lies past
// vLLM's own hits; the worker retrieves from the chunk holding vLLM's
// first missing token (start_load_kv masks vllm_cached_tokens down to a
// chunk boundary).
func (w *worker) lmcLookup(r *reqState, hits, total int) (computed, from, to int) {
	t := w.lmc
	B := w.cfg.BlockSize
	gpu := hits * B
	t.stats.Lookups++
	prompt := r.blocks[:min(len(r.blocks), r.job.PromptBlocks)]
	to = t.lookup(prompt)
	hit := min(to*t.cfg.ChunkBlocks*B, total-1)
	if hit <= gpu {
		return gpu, 0, 0
	}
	return hit, gpu / (t.cfg.ChunkBlocks * B), to
}

// lmcLoad books the retrieve of r's chunks [from, to), admitted with
// computed tokens of which gpu came from vLLM's prefix cache.
func (w *worker) lmcLoad(r *reqState, from, to, computed, gpu int) {
	w.lmc.retrieve(r.blocks, from, to)
	w.lmc.stats.LoadedTokens += computed - gpu
}

// lmcStore stores, for each request of the step just scheduled that
// computes prompt tokens, the prompt's full chunks the step completes
// (wait_for_save after the forward; prompt only), and books their copy in
// the step.
func (w *worker) lmcStore() {
	t := w.lmc
	B := w.cfg.BlockSize
	stored := 0
	for _, e := range w.sched {
		r := w.reqs.at(e.req)
		if r.computed >= int(r.isl) {
			continue // decoding: save_decode_cache is off
		}
		end := min(r.computed+e.tokens, int(r.isl))
		n := min(end/B, r.job.PromptBlocks, len(r.blocks))
		stored += t.store(r.blocks, t.fullChunks(n))
	}
	t.stats.StoredChunks += stored
	ns := float64(stored) * t.cfg.ChunkNs
	t.stepNs += ns
	t.stats.StoreNs += int64(ns)
}

// lmcWarm fills every LMCache tier that asks for it with each job's prompt
// chunks, in trace order, before the run (LMCacheConfig.Warm).
func (c *cluster) lmcWarm() error {
	var buf []uint64
	for _, w := range c.workers {
		t := w.lmc
		if t == nil || !t.cfg.Warm {
			continue
		}
		if c.wl.Jobs == nil {
			return fmt.Errorf("sim: lmcache_warm needs the whole trace at hand, not a streamed workload")
		}
		for i := range c.wl.Jobs {
			j := &c.wl.Jobs[i]
			buf = j.AppendBlocks(buf[:0], c.wl.BlockSize)
			n := min(j.PromptBlocks, len(buf))
			t.stats.WarmChunks += t.store(buf, t.fullChunks(n))
		}
	}
	return nil
}
