package sim

import (
	"fmt"
	"math"

	"github.com/routesim/routesim/model"
)

// TensorRT-LLM's scheduler as its PyTorch executor runs it at 1.3.0rc14,
// the release Dynamo 1.2.0 ships (docs/readings/tensorrt-llm.md §2–5).
// Every step the capacity scheduler picks the requests that may hold KV
// (capacityScheduler.cpp: GuaranteedNoEvictScheduler::impl,
// MaxUtilizationScheduler::operator()), then the micro-batch scheduler
// picks what runs under max_batch_size and max_num_tokens
// (microBatchScheduler.cpp, MicroBatchScheduler::operator()), and only
// what runs gets blocks: a context the blocks of its whole prompt at its
// first chunk (KVCacheManager addSequence), a generating request one
// token's (addToken). Both schedulers walk one list in the order the
// worker received its requests and never sort it: here the running list
// (started requests) then the waiting queue, so admission is FCFS with
// head-of-line blocking.
//
// The overlap scheduler (on unless NoOverlap) launches step n+1 before the
// host has handled step n's output (PyExecutor._executor_loop_overlap:
// _prepare_and_schedule_batch, _forward_step, then _update_requests and
// _process_previous_batch of the previous batch). So the requests step
// n+1 can take are those fetched when its host iteration began, at the
// start of step n: a request that reaches a busy worker waits one more
// step than without overlap; one that reaches an idle worker starts at
// once. Tokens reach the client when the host has handled their step
// (emitLag), and step times are the profile's as for vLLM, with the
// executor's host time (iterNs).
//
// Not modelled: the extra step a finished request runs under overlap
// (its stop is seen one step late), partial-block reuse, the extra token
// per sequence the start-up KV estimate reserves with overlap on, and
// PEFT pages.

// The executor loop's host time (the profile's ExecutorHostNs, the
// dynamo-trtllm stack's 580 µs unless calibrated) is spent every
// iteration. With the overlap scheduler the host prepares step n+1 and
// handles step n's output while the GPU computes, so an iteration takes
// the longer of the two, and a token reaches the frontend the host's time
// after its step ends; without it host and GPU take turns, and a token
// leaves at the end of the iteration that sampled it.

// iterNs is the duration of an iteration whose GPU step (the profile's
// step time, with its noise) takes gpu ns. vLLM's host time is inside its
// step time: gpu is returned as it is.
func (w *worker) iterNs(gpu float64) float64 {
	h := w.prof.ExecutorHostNs
	switch {
	case w.trt == nil || h == 0:
		return gpu
	case w.cfg.NoOverlap:
		return gpu + h
	}
	return math.Max(gpu, h)
}

// emitLag is how long after its step ends a token of w reaches the
// frontend: the host's handling of the step under the overlap scheduler.
func (w *worker) emitLag() Time {
	if w.trt == nil || w.cfg.NoOverlap {
		return 0
	}
	return Time(math.Round(w.prof.ExecutorHostNs))
}

// hostIdleNs is the part of each of w's steps during which the GPU runs
// no kernel: the profile's own, plus the executor's host time when it
// does not overlap the GPU's work. (Under the overlap scheduler the host
// is exposed only when it outlasts a step, which the NVML sampler does
// not see.)
func (w *worker) hostIdleNs() Time {
	idle := w.prof.HostOverheadNs
	if w.trt != nil && w.cfg.NoOverlap {
		idle += w.prof.ExecutorHostNs
	}
	return Time(idle)
}

// allSeen is a cutoff that hides no waiting request.
const allSeen = Time(math.MaxInt64)

// trtScheduler is a TensorRT-LLM worker's scheduling state: per-step
// scratch, and the overlap scheduler's view of time.
type trtScheduler struct {
	fit     []trtFit // the capacity scheduler's answer, in its order
	pending []int32  // started contexts awaiting GUARANTEED_NO_EVICT's second pass
	ctx     []int    // fit indices of contexts left to chunk
	taken   []int    // fit indices of the waiting requests the step takes
	// produced are the first new blocks of the contexts considered this
	// step (beneficialToSkip's newlyContributedContextBlocks).
	produced map[uint64]struct{}
}

// trtFit is a request the capacity scheduler let hold KV this step.
type trtFit struct {
	req            int32
	waiting        bool // a context not yet started, from the waiting queue
	hits, hitsFree int  // a waiting request's cached prefix: blocks, and of those held by no one
}

func newTRTScheduler() *trtScheduler {
	return &trtScheduler{produced: map[uint64]struct{}{}}
}

// overlaps says whether w plans a step while the one before runs:
// TensorRT-LLM's overlap scheduler (on unless NoOverlap) or vLLM's async
// scheduling (AsyncScheduling: vllm/v1/engine/core.py's
// step_with_batch_queue schedules batch n+1 once batch n is launched).
func (w *worker) overlaps() bool {
	if w.trt != nil {
		return !w.cfg.NoOverlap
	}
	return w.cfg.AsyncScheduling
}

// overlapCutoff is called as w's step ends, before the next is scheduled:
// with an overlapping scheduler, that step was chosen when the ending one
// began, from the requests the worker had by then.
func (w *worker) overlapCutoff() {
	if w.overlaps() {
		w.cutoff = w.stepStart
	}
}

// seeAll is called before an idle worker schedules: the executor, waiting
// for work, fetches every request it has.
func (w *worker) seeAll() { w.cutoff = allSeen }

// scheduleTRT builds the next step in w.sched and returns its batch
// summary. If the overlap cutoff hid every request that could run, the
// executor's loop comes round at once (an empty iteration costs only host
// time) and sees them all.
func (w *worker) scheduleTRT() model.Batch {
	t := w.trt
	cutoff := w.cutoff
	w.cutoff = allSeen
	for {
		w.sched = w.sched[:0]
		t.fit, t.taken = t.fit[:0], t.taken[:0]
		if w.cfg.CapacityPolicy == MaxUtilization {
			w.maxUtilization(cutoff)
		} else {
			w.noEvict(w.cfg.CapacityPolicy == StaticBatch, cutoff)
		}
		w.microBatch()
		hidden := w.numWaiting() > 0 && w.reqs.at(w.waiting[len(w.waiting)-1]).dispatched > cutoff
		if len(w.sched) > 0 || !hidden {
			break
		}
		cutoff = allSeen
	}
	w.allocate()
	return w.batch()
}

// maxTokens is the request's max_tokens: the job's, or its output length
// (a trace replay: AIPerf sends max_tokens = the trace's output length).
func (r *reqState) maxTokens() int {
	if m := r.job.MaxTokens; m > 0 {
		return m
	}
	return int(r.osl)
}

// toCompletion is KVCacheManager::getRemainingBlocksToCompletion at beam
// width 1: the blocks of r's longest possible sequence, prompt plus
// max_tokens (clipped to max_seq_len, as _deduce_max_tokens clips
// max_tokens), less the blocks r holds. A paused request's prompt takes in
// its output and its max_tokens shrinks as much (LlmRequest::pause), so
// the sum is the job's throughout.
func (w *worker) toCompletion(r *reqState) int {
	return max(w.blocksFor(min(int(r.isl)+r.maxTokens(), w.cfg.MaxModelLen))-len(r.table), 0)
}

// prefix looks a waiting request's prompt up in the block cache: at most
// all but its last token, which is always computed.
func (w *worker) prefix(r *reqState) (hits, hitsFree int) {
	if w.cfg.NoPrefixCaching {
		return 0, 0
	}
	return w.kv.Lookup(r.blocks, (r.numTokens()-1)/w.cfg.BlockSize)
}

// noEvict is GuaranteedNoEvictScheduler::impl (static: the
// StaticBatchScheduler instantiation). Pass 1 takes every generating
// request, reserving the blocks each may still need to finish; pass 2
// takes contexts FCFS, each only if its own worst case fits beside those
// reservations, and stops at the first that does not ("If one requests
// fails to be scheduled, break"). Free blocks count cached blocks no one
// holds; a waiting request's need is discounted by its cached prefix that
// other requests hold (1.3.0rc14's PrefixReuseSummary, TRT PRs
// #11731/#13139; rc1 had no discount). With static, contexts are taken
// only while nothing generates. No request is ever paused.
func (w *worker) noEvict(static bool, cutoff Time) {
	t := w.trt
	avail, n, most := w.kv.Free(), 0, w.cfg.MaxNumSeqs
	t.pending = t.pending[:0]
	for _, ri := range w.running {
		if n >= most {
			return
		}
		r := w.reqs.at(ri)
		if !r.decoding {
			t.pending = append(t.pending, ri) // a chunked context under way
			continue
		}
		t.fit = append(t.fit, trtFit{req: ri})
		avail -= w.toCompletion(r)
		n++
	}
	if static && n > 0 {
		return
	}
	skip := !static && w.primeSkip()
	for _, ri := range t.pending {
		r := w.reqs.at(ri)
		need := w.toCompletion(r)
		if n >= most || need > avail {
			return
		}
		t.fit = append(t.fit, trtFit{req: ri})
		avail -= need
		n++
	}
	for i := w.wHead; i < len(w.waiting); i++ {
		ri := w.waiting[i]
		r := w.reqs.at(ri)
		if r.dispatched > cutoff {
			return
		}
		hits, hitsFree := w.prefix(r)
		if skip && w.skips(r, hits) {
			continue
		}
		need := w.blocksFor(min(int(r.isl)+r.maxTokens(), w.cfg.MaxModelLen)) - (hits - hitsFree)
		if n >= most || need > avail {
			return
		}
		t.fit = append(t.fit, trtFit{req: ri, waiting: true, hits: hits, hitsFree: hitsFree})
		avail -= need
		n++
	}
}

// maxUtilization is MaxUtilizationScheduler::operator(): walking the list,
// each request reserves only the next step's blocks
// (getNeededBlocksOneStep: one more token for a generating request, the
// whole prompt less its held cached prefix for a new context). When one
// does not fit, the last started request from the list's end (possibly
// itself) is paused, its blocks freed and its output kept as prompt to
// recompute (LlmRequest::pause), and the same request is tried again; the
// list then ends before the paused one, so no waiting request starts in
// that step. A context that does not fit, with nothing started after it,
// ends the walk.
func (w *worker) maxUtilization(cutoff Time) {
	t := w.trt
	scheduled, n, most := 0, 0, w.cfg.MaxNumSeqs
	skip := w.primeSkip()
	paused := false
	for i := 0; i < len(w.running); {
		r := w.reqs.at(w.running[i])
		need := max(w.blocksFor(r.numTokens())-len(r.table), 0)
		if n < most && scheduled+need <= w.kv.Free() {
			t.fit = append(t.fit, trtFit{req: w.running[i]})
			scheduled += need
			n++
			i++
			continue
		}
		w.preempt(w.running[len(w.running)-1])
		paused = true
	}
	if paused {
		return
	}
	for i := w.wHead; i < len(w.waiting); i++ {
		ri := w.waiting[i]
		r := w.reqs.at(ri)
		if r.dispatched > cutoff {
			return
		}
		hits, hitsFree := w.prefix(r)
		if skip && w.skips(r, hits) {
			continue
		}
		need := w.blocksFor(r.numTokens()) - (hits - hitsFree)
		if n >= most || scheduled+need > w.kv.Free() {
			return
		}
		t.fit = append(t.fit, trtFit{req: ri, waiting: true, hits: hits, hitsFree: hitsFree})
		scheduled += need
		n++
	}
}

// fullBlocks is how many of r's block hashes its sequence fills.
func (w *worker) fullBlocks(r *reqState) int {
	return min(len(r.blocks), r.numTokens()/w.cfg.BlockSize)
}

// primeSkip readies beneficialToSkip for a step, if block reuse is on:
// the first new block of every context under way (chunked prefill) counts
// as produced (prefillWithChunkedContextsAlreadyExecuting).
func (w *worker) primeSkip() bool {
	if w.cfg.NoPrefixCaching {
		return false
	}
	clear(w.trt.produced)
	for _, ri := range w.running {
		if r := w.reqs.at(ri); !r.decoding {
			full := w.fullBlocks(r)
			if hits, _ := w.kv.Lookup(r.blocks, full); hits < full {
				w.trt.produced[r.blocks[hits]] = struct{}{}
			}
		}
	}
	return true
}

// skips is beneficialToSkip for a waiting context whose first hits blocks
// are cached: it sits this step out when the first block it would compute
// is one another context considered this step computes, so that it reuses
// that block next step (TensorRT-LLM's early reuse); otherwise its first
// new block counts as produced. Only full blocks have hashes here, so a
// prompt whose only uncached block is partial never waits.
func (w *worker) skips(r *reqState, hits int) bool {
	if hits >= w.fullBlocks(r) {
		return false
	}
	h := r.blocks[hits]
	if _, ok := w.trt.produced[h]; ok {
		return true
	}
	w.trt.produced[h] = struct{}{}
	return false
}

// uncomputed is the context tokens f still has to compute: for a waiting
// request, its prompt less its cached prefix (1.3.0rc14 credits reuse in
// the token budget, setEstimatedReusableTokens, TRT PR #11637).
func (w *worker) uncomputed(f *trtFit) int {
	r := w.reqs.at(f.req)
	if f.waiting {
		return r.numTokens() - f.hits*w.cfg.BlockSize
	}
	return r.numTokens() - r.computed
}

// microBatch is MicroBatchScheduler::operator() over the capacity
// scheduler's answer, in its order: a generating request costs one token;
// without chunked prefill a context costs its whole uncomputed prompt, and
// the first request that does not fit max_num_tokens ends the batch;
// with it, contexts share what generation leaves, first come first served,
// each chunk but a context's last a multiple of tokens_per_block
// (setCtxRequestsChunkSize<FIRST_COME_FIRST_SERVED>, chunk_unit_size =
// tokens_per_block). At most max_batch_size requests. A context longer than
// max_num_tokens is refused at the front (TensorRT-LLM's _check_arguments);
// one that grew past it by being paused runs alone, over budget, where
// TensorRT-LLM would fail its TLLM_CHECK.
func (w *worker) microBatch() {
	t := w.trt
	budget, tokens, n := w.cfg.MaxNumBatchedTokens, 0, 0
	t.ctx = t.ctx[:0]
walk:
	for k := range t.fit {
		f := &t.fit[k]
		switch {
		case w.reqs.at(f.req).decoding:
			if tokens+1 > budget {
				break walk
			}
			w.take(k, 1)
			tokens++
		case !w.cfg.ChunkedPrefill:
			cost := w.uncomputed(f)
			if tokens+cost > budget && tokens > 0 {
				break walk
			}
			w.take(k, cost)
			tokens += cost
		default:
			t.ctx = append(t.ctx, k)
		}
		if n++; n >= w.cfg.MaxNumSeqs {
			break
		}
	}
	if len(t.ctx) == 0 {
		return
	}
	capacity, total, fits := budget-tokens, 0, true
	for _, k := range t.ctx {
		rem := w.uncomputed(&t.fit[k])
		total += rem
		fits = fits && rem <= budget
	}
	fits = fits && total <= capacity
	for _, k := range t.ctx {
		chunk := w.uncomputed(&t.fit[k])
		if !fits {
			c := min(chunk, capacity, budget)
			if c != chunk {
				c -= c % w.cfg.BlockSize
			}
			chunk = c
			capacity -= chunk
		}
		if chunk > 0 {
			w.take(k, chunk)
		}
	}
}

// take puts fit entry k in the step with the given tokens.
func (w *worker) take(k, tokens int) {
	f := &w.trt.fit[k]
	w.sched = append(w.sched, schedEntry{f.req, tokens})
	if f.waiting {
		w.trt.taken = append(w.trt.taken, k)
	}
}

// allocate gives the step's requests their blocks and moves the waiting
// requests it took to the running list. The cached prefixes are acquired
// first, so that no allocation evicts a block a request of this step is
// about to reuse. The capacity scheduler counted every block, so an
// allocation that fails is a broken invariant.
func (w *worker) allocate() {
	t := w.trt
	B := w.cfg.BlockSize
	for _, k := range t.taken {
		f := &t.fit[k]
		r := w.reqs.at(f.req)
		if hits, _ := w.prefix(r); hits != f.hits {
			panic(fmt.Sprintf("sim: request %d's cached prefix went from %d to %d blocks within a step", f.req, f.hits, hits))
		}
		if r.table == nil {
			r.table = make([]int32, 0, w.blocksFor(int(r.isl)+int(r.osl)))
		}
		r.table = w.kv.Acquire(r.table[:0], r.blocks[:f.hits])
		r.computed, r.committed = f.hits*B, f.hits
		w.stats.PromptTokens += r.numTokens()
		w.stats.CachedTokens += r.computed
		if !r.admitted {
			r.admitted, r.cached = true, r.computed
		}
	}
	for _, e := range w.sched {
		r := w.reqs.at(e.req)
		// A context gets its whole prompt's blocks at its first chunk; a
		// generating request (computed = numTokens−1) one token's.
		if !w.grow(r, r.numTokens()) {
			panic(fmt.Sprintf("sim: worker %d: %s admitted request %d, whose %d blocks are not free (%d)", w.id, w.cfg.CapacityPolicy, e.req, w.blocksFor(r.numTokens())-len(r.table), w.kv.Free()))
		}
	}
	w.takeWaiting()
}

// takeWaiting moves the waiting requests the step took (t.taken, in queue
// order) to the end of the running list.
func (w *worker) takeWaiting() {
	t := w.trt
	k := 0
	for ; k < len(t.taken) && w.numWaiting() > 0 && w.waiting[w.wHead] == t.fit[t.taken[k]].req; k++ {
		w.running = append(w.running, w.waiting[w.wHead])
		w.popWaiting()
	}
	if k == len(t.taken) {
		return
	}
	j := w.wHead
	for i := w.wHead; i < len(w.waiting); i++ { // a request skipped this step stays ahead
		ri := w.waiting[i]
		if k < len(t.taken) && ri == t.fit[t.taken[k]].req {
			w.running = append(w.running, ri)
			k++
			continue
		}
		w.waiting[j] = ri
		j++
	}
	w.waiting = w.waiting[:j]
	if w.wHead == len(w.waiting) {
		w.waiting, w.wHead = w.waiting[:0], 0
	}
}

// checkReservations verifies GUARANTEED_NO_EVICT's promise after a step
// is scheduled: the blocks every running request may still need fit in
// the free blocks, so no request can ever run out (CheckInvariants).
func (w *worker) checkReservations() error {
	if w.trt == nil || w.cfg.CapacityPolicy == MaxUtilization {
		return nil
	}
	need := 0
	for _, ri := range w.running {
		need += w.toCompletion(w.reqs.at(ri))
	}
	if need > w.kv.Free() {
		return fmt.Errorf("%s: running requests may need %d more blocks, %d are free", w.cfg.CapacityPolicy, need, w.kv.Free())
	}
	return nil
}
