package sim

// An engine step's effects, written once. A step begins when its requests
// hold the blocks for the tokens it computes (grow) and is counted
// (bookStep: the worker's counters, the GPU sampler); it ends when those
// tokens are computed (endStep: tokens, block commits, samples, the
// client's times, completions, aborts applied). A worker takes a step in
// one of two ways, and both apply it through these functions:
//
//   - one step per event: the scheduler (schedule, or scheduleTRT's
//     allocate) chooses the step's requests and grows their tables,
//     startStep books it, and its step-end event ends it (cluster.Handle);
//   - a decode run (decoderun.go): steps whose batch is known to repeat,
//     with one more context token per request, taken as one event. A run
//     does only the arithmetic it can batch itself (the steps' durations
//     and batches, planRun; how far its allocations reach, runLength) and,
//     for every step it applies (advance), calls endStep, grow and
//     bookStep as the per-step path does, at that step's own times.
//
// So an effect a step has (a KV transfer landing, blocks offloaded to or
// loaded from host memory, a new counter) is written once: at the end of
// a request's share of a step in endStep, at a block allocation in grow,
// or per step begun in bookStep. A run must still end before a step whose
// effect someone outside the worker sees: that is runLength's condition,
// not a second copy of the effect.

// endStep applies the end of w's step w.sched, at t: each request's
// computed tokens advance, the job blocks they fill become findable
// (commitFull), a request whose client gave up during the step is dropped,
// and every request whose sequence is now fully computed samples a token,
// which the cluster hears of (sampled), and frees its blocks if that was
// its last. Requests that left the worker leave its running list.
func (c *cluster) endStep(w *worker, t Time) {
	left, reqs := false, w.reqs
	for _, e := range w.sched {
		r := reqs.at(e.req)
		r.computed += e.tokens
		w.commitFull(r)
		if r.status != StatusPending {
			// Its client gave up during the step: drop it now.
			w.kv.Release(r.table)
			r.table = nil
			w.reqs.release(r)
			left = true
			continue
		}
		if r.computed < r.numTokens() {
			continue // a prefill chunk that did not reach the end
		}
		r.generated++
		r.decoding = true
		c.sampled(e.req, r, t)
		if r.generated == int(r.osl) {
			w.kv.Release(r.table)
			r.table = nil
			left = true
		}
	}
	if left {
		keep := w.running[:0]
		for _, ri := range w.running {
			if r := w.reqs.at(ri); r.status == StatusPending {
				keep = append(keep, ri)
			}
		}
		w.running = keep
	}
	if used := w.kv.Used(); used > w.stats.PeakBlocksUsed {
		w.stats.PeakBlocksUsed = used
	}
}

// commitFull makes r's job blocks that its computed tokens now fill
// findable in the prefix cache. It is small enough to inline: the test
// for a new full block needs no division, and this runs per token.
func (w *worker) commitFull(r *reqState) {
	if r.committed < len(r.blocks) && r.computed >= w.cfg.BlockSize*(r.committed+1) {
		w.commit(r)
	}
}

// commit is commitFull's work, once a job block is full.
func (w *worker) commit(r *reqState) {
	full := min(r.computed/w.cfg.BlockSize, len(r.blocks))
	w.kv.warm(r.blocks[r.committed:full])
	for k := r.committed; k < full; k++ {
		w.kv.Commit(r.table[k], r.blocks[k])
	}
	if w.host != nil {
		w.storeFull(r, r.committed, full)
	}
	r.committed = full
}

// grow gives r the blocks its first tokens tokens need, evicting cached
// content as needed, and reports false, r unchanged, if they are not
// free. Every allocation a step makes goes through it: the schedulers'
// (schedule, allocate) and a decode run's (advance). It is small enough
// to inline: the test for a new block needs no division, and a decode
// run makes it per token.
func (w *worker) grow(r *reqState, tokens int) bool {
	return tokens <= w.cfg.BlockSize*len(r.table) || w.growBlocks(r, tokens)
}

// growBlocks is grow's work, once r needs a new block.
func (w *worker) growBlocks(r *reqState, tokens int) bool {
	t, ok := w.kv.Grow(r.table, w.blocksFor(tokens)-len(r.table))
	if ok {
		r.table = t
	}
	return ok
}
