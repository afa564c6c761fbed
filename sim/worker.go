package sim

import (
	"slices"

	"github.com/routesim/routesim/model"
)

// WorkerConfig is one engine's scheduler and memory configuration, with
// vLLM's flag names (TensorRT-LLM's in brackets). All fields but the
// engine's own are required (ResolveWorker fills defaults); the zero
// Engine is vLLM.
type WorkerConfig struct {
	MaxNumSeqs          int // --max-num-seqs [max_batch_size]: requests per step at most
	MaxNumBatchedTokens int // --max-num-batched-tokens [max_num_tokens]: tokens per step
	BlockSize           int // --block-size [tokens_per_block]: tokens per KV block
	KVBlocks            int // KV capacity in blocks
	MaxModelLen         int // --max-model-len [max_seq_len]: ISL+OSL at most
	NoPrefixCaching     bool
	// Engine is the scheduler the worker runs: VLLM (worker.go) or
	// TRTLLM (trtllm.go). The fields after it are TensorRT-LLM's and must
	// be zero for vLLM. (omitempty keeps a vLLM worker's JSON as it was.)
	Engine         EngineKind     `json:",omitempty"`
	CapacityPolicy CapacityPolicy `json:",omitempty"` // capacity_scheduler_policy
	ChunkedPrefill bool           `json:",omitempty"` // enable_chunked_prefill
	NoOverlap      bool           `json:",omitempty"` // disable_overlap_scheduler
	// AsyncScheduling is vLLM's --async-scheduling (zero for TensorRT-LLM):
	// step n+1 is scheduled as step n starts (trtllm.go's overlap cutoff).
	AsyncScheduling bool `json:",omitempty"`
	// HostTier is vLLM's CPU KV offloading (--kv-offloading-size with the
	// native backend, the OffloadingConnector): zero means none (hosttier.go).
	HostTier HostTierConfig `json:",omitzero"`
	// LMCache is LMCache's CPU tier through vLLM's connector (zero: none;
	// lmcache.go).
	LMCache LMCacheConfig `json:",omitzero"`
	// KVBM makes the host tier Dynamo's KV Block Manager (G2) with an
	// optional disk tier (G3) instead of vLLM's native one (kvbm.go).
	KVBM KVBMConfig `json:",omitzero"`
}

// reqState is a request's life inside the cluster. The fields a step
// touches come first, so they share a cache line: at fleet scale every
// step's requests are cold in cache.
type reqState struct {
	computed    int   // tokens whose KV is computed
	generated   int   // output tokens sampled
	committed   int   // leading blocks made findable in the cache
	isl, osl    int32 // the job's input and output tokens (no pointer chase)
	worker      int32
	events      int32 // scheduled events that name this request
	status      Status
	decoding    bool     // it sampled a token since it was last (re)admitted
	table       []int32  // KV blocks, in token order
	blocks      []uint64 // the job's block hashes (expanded on arrival)
	job         *Job
	pooled      bool // blocks is a recycled buffer
	reason      string
	routed      Time
	dispatched  Time
	parkedAt    Time
	queueNs     Time
	booked      int // prefill tokens booked at the router
	attempts    []Attempt
	firstToken  Time
	secondToken Time
	end         Time
	cached      int // prompt tokens served from the prefix cache at first admission
	// cachedHost and cachedDisk are the prompt tokens of cached loaded from
	// the host and disk tiers at first admission (GPU hits: the rest).
	cachedHost, cachedDisk int32
	preemptions            int
	admitted               bool
	deadline               Time // when the client gives up on the current send (0 = never)
}

// numTokens is the sequence length known so far: the prompt plus sampled
// output. A request is due a new token once all of it is computed.
func (r *reqState) numTokens() int { return int(r.isl) + r.generated }

// prompt returns the hashes of the prompt's full blocks.
func (r *reqState) prompt() []uint64 { return r.blocks[:r.job.PromptBlocks] }

type schedEntry struct {
	req    int32
	tokens int
}

// worker is a vLLM V1-like engine: a FCFS waiting queue, a running list in
// admission order, continuous batching under a token budget with chunked
// prefill, and recompute preemption of the newest running request.
type worker struct {
	id      int
	cfg     WorkerConfig
	prof    *model.Profile // its pool's step-time model
	reqs    *reqStore      // shared with the cluster
	kv      *KVCache
	waiting []int32 // waiting[wHead:] is the queue
	wHead   int
	running []int32
	sched   []schedEntry
	busy    bool
	kicked  bool
	endAt   Time      // when the step (or run) in flight ends
	run     decodeRun // the decode run under way, if any
	runDurs []Time    // its steps' durations, runDurs[s] for step s (reused)
	stats   WorkerStats
	host    *hostTier     // its CPU KV tier (nil: none; hosttier.go)
	lmc     *lmcacheTier  // its LMCache tier (nil: none; lmcache.go)
	noise   *stepNoise    // the service noise of its steps
	trt     *trtScheduler // TensorRT-LLM's scheduler state (nil: vLLM's scheduler)
	// stepStart is when the worker's step in flight (or its last) started;
	// cutoff hides, in the step being scheduled, the waiting requests
	// dispatched after it (an overlapping scheduler: overlapCutoff).
	stepStart, cutoff Time
}

// noisy is a step time of ns with the service noise of w's step k (the
// index bookStep gives it: steps w began before it).
func (w *worker) noisy(ns float64, k int) float64 {
	if s := w.prof.NoiseSigma; s > 0 {
		ns *= w.noise.factor(k, s)
	}
	return ns
}

// WorkerStats are one worker's counters over a run.
type WorkerStats struct {
	BusyNs           Time
	Steps            int
	Preemptions      int
	PromptTokens     int // prompt tokens looked up in the prefix cache
	CachedTokens     int // of which served from the cache
	PeakBlocksUsed   int
	KVBlocks         int
	CacheEvictions   int
	BatchedTokensSum int // for the mean tokens per step
	// Host counts the CPU tier's traffic (nil: no tier).
	Host *HostStats `json:",omitempty"`
	// LMCache counts the LMCache tier's traffic (nil: no tier).
	LMCache *LMCacheStats `json:",omitempty"`
	// Disk counts a KVBM disk tier's traffic (nil: none).
	Disk *HostStats `json:",omitempty"`
}

func newWorker(id int, cfg WorkerConfig, prof *model.Profile, reqs *reqStore) *worker {
	w := &worker{id: id, cfg: cfg, prof: prof, reqs: reqs, kv: NewKVCache(cfg.KVBlocks), stats: WorkerStats{KVBlocks: cfg.KVBlocks}, cutoff: allSeen}
	if cfg.Engine == TRTLLM {
		w.trt = newTRTScheduler()
	}
	if cfg.HostTier.on() {
		w.host = newHostTier(cfg.HostTier)
		w.stats.Host = &w.host.stats
		if cfg.KVBM.On {
			w.host.kv = newKVBM(cfg.KVBM, cfg.HostTier.BlockBytes)
			w.stats.Disk = w.host.kv.diskStats()
			w.host.stats.KVBM = true
		}
	}
	if cfg.LMCache.on() {
		w.lmc = newLMCacheTier(cfg.LMCache)
		w.stats.LMCache = &w.lmc.stats
	}
	return w
}

func (w *worker) enqueue(r int32) { w.waiting = append(w.waiting, r) }

func (w *worker) numWaiting() int { return len(w.waiting) - w.wHead }

func (w *worker) hasWork() bool { return len(w.running) > 0 || w.numWaiting() > 0 }

func (w *worker) popWaiting() {
	w.wHead++
	if w.wHead == len(w.waiting) {
		w.waiting, w.wHead = w.waiting[:0], 0
	}
}

func (w *worker) prependWaiting(r int32) {
	if w.wHead > 0 {
		w.wHead--
		w.waiting[w.wHead] = r
		return
	}
	w.waiting = append(w.waiting, 0)
	copy(w.waiting[1:], w.waiting)
	w.waiting[0] = r
}

// abort removes request ri, whose client gave up, from w and frees its
// blocks. A request in the step under way leaves when that step ends
// (endStep drops it), as vLLM applies aborts between steps.
func (w *worker) abort(ri int32) {
	if w.inStep(ri) {
		return
	}
	r := w.reqs.at(ri)
	w.kv.Release(r.table)
	r.table = nil
	if w.host != nil {
		w.forgetLoad(ri)
	}
	if i := slices.Index(w.running, ri); i >= 0 {
		w.running = slices.Delete(w.running, i, i+1)
		return
	}
	if i := slices.Index(w.waiting[w.wHead:], ri); i >= 0 {
		w.waiting = slices.Delete(w.waiting, w.wHead+i, w.wHead+i+1)
		if w.wHead == len(w.waiting) {
			w.waiting, w.wHead = w.waiting[:0], 0
		}
	}
}

// inStep reports whether request ri is in w's step in flight.
func (w *worker) inStep(ri int32) bool {
	if w.busy {
		for _, e := range w.sched {
			if e.req == ri {
				return true
			}
		}
	}
	return false
}

func (w *worker) blocksFor(tokens int) int { return (tokens + w.cfg.BlockSize - 1) / w.cfg.BlockSize }

// schedule builds the next step in w.sched and returns its batch summary.
// Running requests come first (decodes and unfinished prefill chunks), then
// waiting requests FCFS while budget, sequence slots and blocks last. A
// running request that cannot get a block preempts the newest running
// request (possibly itself); no waiting request is admitted in a step that
// preempted, as in vLLM V1. Under async scheduling the step was planned as
// the last one began, so it admits only the requests dispatched by then
// (the overlap cutoff); if that leaves it empty, the engine, idle, sees
// them all. A TensorRT-LLM worker schedules its own way (scheduleTRT).
func (w *worker) schedule() model.Batch {
	if w.trt != nil {
		return w.scheduleTRT()
	}
	cutoff := w.cutoff
	w.cutoff = allSeen
	w.sched = w.sched[:0]
	budget := w.cfg.MaxNumBatchedTokens
	preempted := false
	for i := 0; i < len(w.running) && budget > 0; i++ {
		ri := w.running[i]
		r := w.reqs.at(ri)
		n := min(r.numTokens()-r.computed, budget)
		for !w.grow(r, r.computed+n) {
			victim := w.running[len(w.running)-1]
			w.preempt(victim)
			preempted = true
			if victim == ri {
				n = 0
				break
			}
		}
		if n == 0 {
			break
		}
		w.sched = append(w.sched, schedEntry{ri, n})
		budget -= n
	}
	if !preempted {
		w.admit(budget, cutoff)
		if len(w.sched) == 0 && cutoff != allSeen {
			w.admit(budget, allSeen)
		}
	}
	if w.lmc != nil {
		w.lmcStore()
	}
	return w.batch()
}

// admit moves waiting requests into the running list for this step, up to
// the first dispatched after cutoff.
func (w *worker) admit(budget int, cutoff Time) {
	B := w.cfg.BlockSize
	for budget > 0 && w.numWaiting() > 0 && len(w.running) < w.cfg.MaxNumSeqs {
		ri := w.waiting[w.wHead]
		r := w.reqs.at(ri)
		if r.dispatched > cutoff {
			return // arrived after this step was planned
		}
		if w.host != nil {
			if handled, stop := w.hostAdmit(ri, r, &budget); stop {
				return
			} else if handled {
				continue
			}
		}
		total := r.numTokens()
		hits, hitsFree := 0, 0
		if !w.cfg.NoPrefixCaching {
			// At least one token is always computed, to produce logits.
			hits, hitsFree = w.kv.Lookup(r.blocks, (total-1)/B)
		}
		computed := hits * B
		lmcFrom, lmcTo := 0, 0
		if w.lmc != nil {
			computed, lmcFrom, lmcTo = w.lmcLookup(r, hits, total)
		}
		n := min(total-computed, budget)
		need := w.blocksFor(computed+n) - hits
		if need+hitsFree > w.kv.Free() {
			return // head-of-line: FCFS waits for blocks
		}
		if r.table == nil {
			// Room for every block the request can reach, so its steps never regrow it.
			r.table = make([]int32, 0, w.blocksFor(int(r.isl)+int(r.osl)))
		}
		r.table = w.kv.Acquire(r.table[:0], r.blocks[:hits])
		r.table, _ = w.kv.Grow(r.table, need)
		r.computed, r.committed = computed, hits
		if lmcTo > lmcFrom {
			w.lmcLoad(r, lmcFrom, lmcTo, computed, hits*B)
			if !r.admitted {
				r.cachedHost = int32(computed - hits*B) // LMCache's CPU tier served these
			}
		}
		if w.host != nil && w.host.kv == nil {
			r.committed = 0 // its GPU hits are written to the CPU tier too (storeFull)
		}
		w.stats.PromptTokens += total
		w.stats.CachedTokens += computed
		if !r.admitted {
			r.admitted, r.cached = true, computed
		}
		w.popWaiting()
		w.running = append(w.running, ri)
		w.sched = append(w.sched, schedEntry{ri, n})
		budget -= n
	}
}

// preempt frees a running request's blocks and puts it back at the front
// of the waiting queue; it will recompute its prompt and output so far.
func (w *worker) preempt(ri int32) {
	r := w.reqs.at(ri)
	w.kv.Release(r.table)
	r.table = r.table[:0]
	r.computed, r.committed, r.decoding = 0, 0, false
	r.preemptions++
	w.stats.Preemptions++
	for i := len(w.running) - 1; i >= 0; i-- {
		if w.running[i] == ri {
			w.running = append(w.running[:i], w.running[i+1:]...)
			break
		}
	}
	w.prependWaiting(ri)
}

// batch summarises w.sched for the step-time model.
func (w *worker) batch() model.Batch {
	var b model.Batch
	for _, e := range w.sched {
		r := w.reqs.at(e.req)
		ctx := r.computed + e.tokens
		if e.tokens == 1 && r.generated > 0 && ctx == r.numTokens() {
			b.DecodeSeqs++
			b.DecodeCtxTokens += ctx
			continue
		}
		p := float64(e.tokens)
		b.PrefillTokens += e.tokens
		b.PrefillTokenCtx += p * float64(ctx)
		b.PrefillAttnPairs += p*float64(r.computed) + p*(p+1)/2
	}
	return b
}
