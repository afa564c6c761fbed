package sim

import (
	"slices"

	"github.com/routesim/routesim/policy"
)

// router is the router stage's own state, exposed to policies as
// policy.View. It learns only what a real router learns: its own
// dispatches, first tokens and completions, the workers' KV stored/removed
// events (after KVEventLag) and, for the engine busy signal, the workers'
// published KV usage (after MetricsLag).
type router struct {
	ids        []int // the pool's live worker ids (Pool.Workers)
	blockSize  int
	mnbt       []int // per worker id, from its pool
	capacity   []int
	inFlight   []int
	prefill    []int        // uncached prompt tokens awaiting a first token
	refs       *flightTree  // in-flight prompt blocks per worker (KV-aware only)
	stored     *holders     // blocks the workers reported stored, inverted (KV-aware only)
	version    uint64       // bumped by every change to refs
	storedVer  uint64       // bumped by every change to stored
	scan       *prefixScan  // NewBlocks of the blocks last asked about
	overlaps   *overlapScan // Overlap of the blocks last asked about
	engine     []engineFeed // published KV usage and queues (engine signal only)
	now        func() Time
	kvLag      Time // RouterConfig.KVEventLag
	metricsLag Time
	scrape     Time // metrics are read only at multiples of this (0 = continuously)

	queue     []int32 // parked requests, FCFS: queue[qHead:]
	qHead     int
	queuedISL int

	pending []kvEvent // KV events in flight to the router, in delivery order
	mon     *monitor  // the busy monitor of an Admitter policy, if armed
	// freeze keeps parked requests' arrival-time overlaps (frozen, by
	// request); using is the set Overlap and Loads read while a parked
	// request is decided and booked.
	freeze  bool
	frozen  map[int32][]int
	using   []int
	nStored []int // blocks the prefix index holds per worker (KV-aware only)

	// The tiers below the GPU (tierindex.go): how the policy reads their
	// events, the lower-tier indexes when it keeps them (host == nil: it
	// does not, or no lower-tier event came yet), their version and scan,
	// and parked requests' frozen lower-tier hits.
	tiers       policy.TierReading
	host, disk  *holders
	tierVer     uint64
	tierScan    *tierScan
	frozenTiers map[int32][]policy.TierHits
	usingTiers  []policy.TierHits
}

// RouterConfig configures the router stage around the policy.
type RouterConfig struct {
	// KVAware turns on block bookkeeping and the prefix index that KV
	// policies read.
	KVAware bool
	// EngineSignal keeps the workers' published KV usage and waiting
	// queues (a busy check on the engine's numbers, scraped-metrics
	// scorers).
	EngineSignal bool
	// KVEventLag delays the workers' block stored/removed events.
	KVEventLag Time
	// MetricsLag delays the workers' published KV usage.
	MetricsLag Time
	// EventPlaneDelay delays the router's own load messages (Dynamo's
	// ActiveLoad, after every booking, first token and release) on their
	// way to the busy monitor.
	EventPlaneDelay Time
	// MetricsScrapePeriod, if > 0, makes the router see the published
	// metrics only as of its last scrape, at multiples of the period (after
	// MetricsLag): llm-d's endpoint picker refreshes them every 50 ms.
	MetricsScrapePeriod Time
	// Retries is how often a client re-sends a rejected request (0 = never,
	// as AIPerf); RetryBackoff is the first wait, doubled each time.
	Retries      int
	RetryBackoff Time
	// OverloadCode is the HTTP status of a busy or backpressure rejection:
	// 503 up to Dynamo v1.2, 529 from v1.3 (0 = 503).
	OverloadCode int
	// Timeout is how long a client waits for a request's last token after
	// sending it before it gives up and disconnects; the engine then aborts
	// the request and frees its KV blocks (0 = clients wait forever).
	Timeout Time
}

type kvEvent struct {
	at     Time
	worker int32
	stored bool
	medium Medium // the tier the event names (MediumGPU: the engine's cache)
	hash   uint64
}

// engineFeed is one worker's published metrics as the router sees them.
type engineFeed struct {
	visible usageSample
	queue   []usageSample // published, not yet visible
}

// usageSample is what a worker publishes at a step: its KV blocks in use
// and its waiting queue (vLLM's gpu_cache_usage and num_requests_waiting).
type usageSample struct {
	at      Time
	used    int
	waiting int
}

func newRouter(workers []*worker, rc RouterConfig, now func() Time) *router {
	n := len(workers)
	r := &router{
		blockSize: workers[0].cfg.BlockSize, mnbt: make([]int, n), capacity: make([]int, n),
		inFlight: make([]int, n), prefill: make([]int, n), now: now, kvLag: rc.KVEventLag, metricsLag: rc.MetricsLag, scrape: rc.MetricsScrapePeriod,
	}
	r.ids = make([]int, n) // every worker; a pool's router lists its own
	for w, wk := range workers {
		r.mnbt[w], r.capacity[w] = wk.cfg.MaxNumBatchedTokens, wk.cfg.KVBlocks
		r.ids[w] = w
	}
	if rc.KVAware {
		r.refs, r.scan = newFlightTree(n), newPrefixScan(n)
		r.stored, r.overlaps = newHolders(), newOverlapScan(n)
		r.nStored = make([]int, n)
	}
	if rc.EngineSignal {
		r.engine = make([]engineFeed, n)
	}
	return r
}

// Workers implements policy.View: the pool's live worker ids.
func (r *router) Workers() []int { return r.ids }

// grow makes room for the ids of workers (a worker joined): every
// per-worker array is indexed by id.
func (r *router) grow(workers []*worker) {
	n := len(workers)
	for w := len(r.inFlight); w < n; w++ {
		r.mnbt = append(r.mnbt, workers[w].cfg.MaxNumBatchedTokens)
		r.capacity = append(r.capacity, workers[w].cfg.KVBlocks)
		r.inFlight, r.prefill = append(r.inFlight, 0), append(r.prefill, 0)
		if r.refs != nil {
			r.nStored = append(r.nStored, 0)
		}
		if r.engine != nil {
			r.engine = append(r.engine, engineFeed{})
		}
	}
	if r.refs != nil {
		r.refs.distinct = grown(r.refs.distinct, n)
		r.scan.stamp, r.scan.present = grown(r.scan.stamp, n), grown(r.scan.present, n)
		r.overlaps.matched = grown(r.overlaps.matched, n)
		if r.tierScan != nil {
			r.tierScan.hostEnd, r.tierScan.diskEnd = grown(r.tierScan.hostEnd, n), grown(r.tierScan.diskEnd, n)
		}
		r.forgetScans()
	}
}

// grown returns s with length at least n, new elements zero.
func grown[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	return append(s, make([]T, n-len(s))...)
}

// BlockSize implements policy.View.
func (r *router) BlockSize() int { return r.blockSize }

// InFlight implements policy.View.
func (r *router) InFlight(w int) int { return r.inFlight[w] }

// PrefillTokens implements policy.View.
func (r *router) PrefillTokens(w int) int { return r.prefill[w] }

// KVCapacity implements policy.View.
func (r *router) KVCapacity(w int) int { return r.capacity[w] }

// MaxNumBatchedTokens implements policy.View.
func (r *router) MaxNumBatchedTokens(w int) int { return r.mnbt[w] }

// QueuedISLTokens implements policy.View.
func (r *router) QueuedISLTokens() int { return r.queuedISL }

// ActiveBlocks implements policy.View.
func (r *router) ActiveBlocks(w int) int {
	if r.refs == nil {
		return 0
	}
	return r.refs.held(w)
}

// NewBlocks implements policy.View. The first call for a request's blocks
// walks them down the tree of in-flight blocks for every worker at once
// (prefixScan, O(matched blocks + holders of the matched nodes)); later
// calls for the same blocks and state are lookups.
func (r *router) NewBlocks(w int, blocks []uint64) int {
	if r.refs == nil {
		return len(blocks)
	}
	return r.scanned(blocks).newBlocks(w, len(blocks))
}

// Overlap implements policy.View: the first call for a request's blocks
// walks them once against the inverted index of stored blocks for every
// worker (overlapScan); later calls for the same blocks and state are
// lookups, so a decision costs O(N) array reads plus the matched holders.
func (r *router) Overlap(w int, blocks []uint64) int {
	if r.using != nil {
		return frozenOf(r.using, w)
	}
	if r.stored == nil {
		return 0
	}
	return r.overlapped(blocks).of(w)
}

// frozenOf is worker w's overlap among a parked request's frozen ones: 0
// for a worker that joined after it parked.
func frozenOf(o []int, w int) int {
	if w < len(o) {
		return o[w]
	}
	return 0
}

// forgetScans drops the cached scans: the blocks they were keyed by (a
// buffer's address) may now hold another request's blocks.
func (r *router) forgetScans() {
	if r.scan != nil {
		r.scan.forget()
		r.overlaps.forget()
	}
	if r.tierScan != nil {
		r.tierScan.forget()
	}
}

func (r *router) scanned(blocks []uint64) *prefixScan {
	if !r.scan.valid(blocks, r.version) {
		r.scan.run(blocks, r.version, r.refs)
	}
	return r.scan
}

func (r *router) overlapped(blocks []uint64) *overlapScan {
	if !r.overlaps.valid(blocks, r.storedVer) {
		r.overlaps.run(blocks, r.storedVer, r.stored)
	}
	return r.overlaps
}

// Loads implements policy.LoadsView: every live worker's load for blocks,
// by id, from the router's arrays and one scan of each inverted index.
// When the live workers are not exactly 0..n−1 (other pools' workers, or
// workers that left, have ids below the bound) it reads them id by id.
func (r *router) Loads(blocks []uint64, dst []policy.WorkerLoad) []policy.WorkerLoad {
	n := policy.IDBound(r.ids)
	dst = slices.Grow(dst[:0], n)[:n]
	if len(r.ids) < n {
		for _, w := range r.ids {
			dst[w] = policy.LoadOf(r, w, blocks)
		}
		return dst
	}
	var scan *prefixScan
	var overlaps *overlapScan
	if r.refs != nil {
		scan, overlaps = r.scanned(blocks), r.overlapped(blocks)
	}
	prefill, capacity, mnbt := r.prefill[:n], r.capacity[:n], r.mnbt[:n]
	if scan == nil {
		for w := range dst {
			dst[w] = policy.WorkerLoad{Prefill: prefill[w], New: len(blocks), Capacity: capacity[w], MaxBatched: mnbt[w]}
		}
		return dst
	}
	// scan.newBlocks and overlaps.of, on the scans' arrays hoisted out of
	// the loop: at N = 4096 the scoring this loop feeds is a quarter of a
	// kv run.
	held, stamp, present, matched := r.refs.distinct[:n], scan.stamp[:n], scan.present[:n], overlaps.matched[:n]
	nb, e1, e2 := len(blocks), scan.epoch, overlaps.epoch
	for w := range dst {
		dst[w] = policy.WorkerLoad{
			Prefill: prefill[w], Active: held[w], New: newOf(nb, stamp[w], e1, present[w]),
			Overlap: overlapOf(matched[w], e2), Capacity: capacity[w], MaxBatched: mnbt[w],
		}
	}
	if r.using != nil {
		for w := range dst {
			dst[w].Overlap = frozenOf(r.using, w)
		}
	}
	return dst
}

// EngineKVUsed implements policy.View: the newest usage published at least
// MetricsLag ago.
func (r *router) EngineKVUsed(w int) int { return r.published(w).used }

// EngineWaiting implements policy.View: the waiting queue published at
// least MetricsLag ago.
func (r *router) EngineWaiting(w int) int { return r.published(w).waiting }

// Now implements policy.View.
func (r *router) Now() int64 { return int64(r.now()) }

// published is worker w's newest sample published at least MetricsLag ago
// (zero without the engine feed).
func (r *router) published(w int) usageSample {
	if r.engine == nil {
		return usageSample{}
	}
	f := &r.engine[w]
	cut := r.now() - r.metricsLag
	if r.scrape > 0 { // the values of the last scrape
		cut -= ((cut % r.scrape) + r.scrape) % r.scrape
	}
	i := 0
	for ; i < len(f.queue) && f.queue[i].at <= cut; i++ {
		f.visible = f.queue[i]
	}
	f.queue = f.queue[:copy(f.queue, f.queue[i:])]
	return f.visible
}

// publishUsage records a worker's KV usage and waiting queue as published
// at time at.
func (r *router) publishUsage(w int, at Time, used, waiting int) {
	if r.engine == nil {
		return
	}
	f := &r.engine[w]
	if n := len(f.queue); n > 0 && f.queue[n-1].at == at {
		f.queue[n-1].used, f.queue[n-1].waiting = used, waiting
		return
	}
	f.queue = append(f.queue, usageSample{at, used, waiting})
}

// book records a dispatch: the request's uncached prompt tokens and its
// blocks now load worker w. It returns the booked prefill tokens.
func (r *router) book(w int, isl int, blocks []uint64) int {
	booked := isl - r.Overlap(w, blocks)*r.blockSize
	if r.host != nil {
		booked = isl - r.cachedTokens(w, isl, blocks)
	}
	r.inFlight[w]++
	r.prefill[w] += booked
	if r.refs != nil {
		r.refs.book(w, blocks)
		r.version++
	}
	return booked
}

// firstToken releases a request's prefill load.
func (r *router) firstToken(w, booked int) { r.prefill[w] -= booked }

// finish releases a request's blocks.
func (r *router) finish(w int, blocks []uint64) {
	r.inFlight[w]--
	if r.refs == nil {
		return
	}
	r.refs.finish(w, blocks)
	r.version++
}

func (r *router) applyKV(e kvEvent) {
	if e.medium != MediumGPU {
		r.applyTier(e) // as the policy reads the tier (tierindex.go)
		return
	}
	w := int(e.worker)
	if e.stored {
		if r.stored.add(w, e.hash) {
			r.nStored[w]++
		}
	} else if r.stored.remove(w, e.hash) {
		r.nStored[w]--
	}
	r.storedVer++
}

// Overloaded implements policy.OverloadView: worker w is in the busy set
// the monitor last pushed.
func (r *router) Overloaded(w int) bool { return r.mon != nil && r.mon.overloaded(w) }

// StoredBlocks implements policy.TreeView: the blocks the prefix index
// holds for worker w.
func (r *router) StoredBlocks(w int) int {
	if r.nStored == nil {
		return 0
	}
	return r.nStored[w]
}

// park queues request i; with freeze, it keeps the overlaps of blocks
// as the router sees them now.
func (r *router) park(i int32, isl int, blocks []uint64) {
	r.queue = append(r.queue, i)
	r.queuedISL += isl
	if r.freeze && r.stored != nil {
		o := make([]int, len(r.inFlight))
		for _, w := range r.ids {
			o[w] = r.Overlap(w, blocks)
		}
		if r.frozen == nil {
			r.frozen = map[int32][]int{}
		}
		r.frozen[i] = o
		if r.host != nil {
			if r.frozenTiers == nil {
				r.frozenTiers = map[int32][]policy.TierHits{}
			}
			r.frozenTiers[i] = r.TierHits(blocks, nil)
		}
	}
}

// thaw ends request i's frozen overlaps (dispatched, refused or gone).
func (r *router) thaw(i int32) {
	if r.frozen != nil {
		delete(r.frozen, i)
	}
	if r.frozenTiers != nil {
		delete(r.frozenTiers, i)
	}
}

func (r *router) queueLen() int { return len(r.queue) - r.qHead }

// remove takes request i out of the router queue, wherever it waits (its
// client gave up); it reports whether i was parked.
func (r *router) remove(i int32, isl int) bool {
	for k := r.qHead; k < len(r.queue); k++ {
		if r.queue[k] == i {
			r.queue = append(r.queue[:k], r.queue[k+1:]...)
			r.queuedISL -= isl
			if r.qHead == len(r.queue) {
				r.queue, r.qHead = r.queue[:0], 0
			}
			return true
		}
	}
	return false
}

func (r *router) unpark(isl int) {
	r.qHead++
	r.queuedISL -= isl
	if r.qHead == len(r.queue) {
		r.queue, r.qHead = r.queue[:0], 0
	}
}
