package sim

import (
	"fmt"
	"math"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

// A vLLM worker's LMCache CPU tier, as vLLM's LMCacheConnectorV1 drove
// LMCache's "experimental" engine in spring 2025 (the llm-d LMBench runs:
// LMCache built from commit 71d41f0f of a fork, image llm-d-dev:0.0.4).
// docs/readings/lmcache.md reads the source; its rules:
//
//   - Chunks (token_database.py ChunkedTokenDatabase): a prompt is cut
//     into chunks of chunk_size tokens (256), each keyed by the prefix
//     hash up to its end. routesim keys a chunk by the hash of its last
//     block (block hashes are prefix hashes) and keeps full chunks only:
//     LMCache also stores a prompt's partial last chunk, but its key
//     matches only a prompt identical to its last token, which a trace
//     cannot name.
//   - Store (cache_engine.py store; the connector's wait_for_save): after
//     the forward, synchronously, the prompt's chunks the step computed
//     that the tier lacks; prompt only (save_decode_cache false by
//     default). A chunk the tier has is skipped and not touched.
//   - LRU (local_cpu_backend.py LocalCPUBackend): an ordered map; a store
//     appends (most recent), a retrieve moves the chunk to the end, and an
//     allocation that finds no room evicts from the front. Capacity:
//     max_local_cpu_size GiB (MixedMemoryAllocator(int(size·1024³))) over
//     the bytes of one chunk.
//   - Lookup (cache_engine.py lookup; the connector's
//     get_num_new_matched_tokens): the consecutive chunks from the
//     prompt's start the tier holds, without touching them; a hit of the
//     whole sequence gives back its last token (it must be computed).
//   - Retrieve (the connector's start_load_kv): synchronous, before the
//     forward of the step that admits the request, from the chunk holding
//     the first token vLLM's own prefix cache lacks, until a miss. The
//     step's duration grows by the bytes moved over the host link; the
//     store's bytes likewise. No layer-wise overlap (use_layerwise did not
//     exist in that engine; wait_for_layer_load returns at once).
//   - Router-invisible: that LMCache published no KV events (it is never
//     published here).
//
// Simplifications: allocator fragmentation is not modelled (capacity is
// whole chunks); a request's chunk bytes are those of the tokens, not of
// LMCache's per-chunk tensor layout.

// LMCacheConfig is a worker's LMCache CPU tier (zero: none).
type LMCacheConfig struct {
	// Chunks is the capacity: ⌊max_local_cpu_size·2³⁰ / ChunkBytes⌋.
	Chunks int `json:",omitempty"`
	// ChunkBlocks is chunk_size over the KV block size.
	ChunkBlocks int `json:",omitempty"`
	// ChunkBytes is one chunk's KV over the worker's GPUs.
	ChunkBytes int64 `json:",omitempty"`
	// ChunkNs is the time to copy one chunk one way: one GPU's share of it
	// over that GPU's host link.
	ChunkNs float64 `json:",omitempty"`
	// Warm fills the tier, before the run, with every request's prompt
	// chunks in trace order (LMBench's run script sends a warm-up pass of
	// the run's own users first; docs/readings/lmcache.md §4).
	Warm bool `json:",omitempty"`
}

func (l LMCacheConfig) on() bool { return l.Chunks > 0 }

func (l LMCacheConfig) validate(w WorkerConfig) []error {
	if l == (LMCacheConfig{}) {
		return nil
	}
	var errs []error
	if w.Engine != VLLM {
		errs = append(errs, inputerr.Fieldf("lmcache_max_local_cpu_size", "is LMCache's through vLLM: it needs `engine` vllm"))
	}
	if w.HostTier.on() {
		errs = append(errs, inputerr.Fieldf("lmcache_max_local_cpu_size", "and `kv_offloading_size_gib` are two CPU tiers for one worker: choose one"))
	}
	if l.Chunks < 1 || l.ChunkBlocks < 1 || l.ChunkBytes < 1 || !(l.ChunkNs > 0) || math.IsInf(l.ChunkNs, 0) {
		errs = append(errs, inputerr.Fieldf("lmcache_max_local_cpu_size", "an LMCache tier of %d chunks of %d blocks (%d bytes, copied in %g ns): want ≥ 1 chunk of ≥ 1 block, ≥ 1 byte and a finite time > 0", l.Chunks, l.ChunkBlocks, l.ChunkBytes, l.ChunkNs))
	}
	return errs
}

// LMCacheDefaultChunkSize is LMCache's chunk_size default (config.py
// from_defaults).
const LMCacheDefaultChunkSize = 256

// MaxLMCacheChunkSize bounds lmcache_chunk_size (a chunk past a million
// tokens is no prefix granularity).
const MaxLMCacheChunkSize = 1 << 20

// lmcacheConfig is the tier f's LMCache fields give a worker of dep.
func lmcacheConfig(dep model.Deployment, f EngineFlags) (LMCacheConfig, error) {
	gib, chunk := f.LMCacheMaxLocalCPUSizeGiB, f.LMCacheChunkSize
	if gib == 0 {
		switch {
		case chunk != 0:
			return LMCacheConfig{}, inputerr.Fieldf("lmcache_chunk_size", "needs `lmcache_max_local_cpu_size` (the LMCache tier)")
		case f.LMCacheWarm:
			return LMCacheConfig{}, inputerr.Fieldf("lmcache_warm", "needs `lmcache_max_local_cpu_size` (the LMCache tier)")
		}
		return LMCacheConfig{}, nil
	}
	if chunk == 0 {
		chunk = LMCacheDefaultChunkSize
	}
	switch {
	case !(gib > 0 && gib <= MaxKVOffloadingGiB):
		return LMCacheConfig{}, inputerr.Fieldf("lmcache_max_local_cpu_size", "%g must be in (0, %d] GiB (0 = no LMCache tier)", gib, MaxKVOffloadingGiB)
	case chunk < 1 || chunk > MaxLMCacheChunkSize || f.BlockSize < 1 || chunk%f.BlockSize != 0:
		return LMCacheConfig{}, inputerr.Fieldf("lmcache_chunk_size", "%d must be a multiple of the block size %d in [%d, %d] tokens", chunk, f.BlockSize, max(f.BlockSize, 1), MaxLMCacheChunkSize)
	case f.Engine != VLLM:
		return LMCacheConfig{}, inputerr.Fieldf("lmcache_max_local_cpu_size", "is LMCache's through vLLM: it needs `engine` vllm")
	case f.KVOffloadingSizeGiB != 0:
		return LMCacheConfig{}, inputerr.Fieldf("lmcache_max_local_cpu_size", "and `kv_offloading_size_gib` are two CPU tiers for one worker: choose one")
	case dep.GPU.HostLinkBytesPerSec <= 0:
		return LMCacheConfig{}, inputerr.Fieldf("lmcache_max_local_cpu_size", "GPU %s has no host-link bandwidth (host_link_bytes_per_s; a GPU file's pcie_gb_s)", dep.GPU.Name)
	}
	tp := int64(max(dep.TP, 1))
	perGPU := dep.KVBytesPerTokenPerGPU() * int64(chunk)
	l := LMCacheConfig{ChunkBlocks: chunk / f.BlockSize, ChunkBytes: perGPU * tp,
		ChunkNs: float64(perGPU) / dep.GPU.HostLinkBytesPerSec * 1e9, Warm: f.LMCacheWarm}
	l.Chunks = int(int64(gib*(1<<30)) / l.ChunkBytes)
	if l.Chunks < 1 {
		return LMCacheConfig{}, inputerr.Fieldf("lmcache_max_local_cpu_size", "%g GiB holds no chunk of %d bytes", gib, l.ChunkBytes)
	}
	return l, nil
}

// LMCacheStats are a worker's LMCache counters over a run.
type LMCacheStats struct {
	Chunks       int   // capacity
	ChunkBytes   int64 // bytes per chunk
	StoredChunks int   // copied GPU → CPU (warm-up not counted)
	LoadedChunks int   // copied CPU → GPU
	Evictions    int   // chunks evicted
	WarmChunks   int   // chunks stored before the run (Warm)
	PeakChunks   int   // most chunks held at once
	LoadNs       int64 // step time spent loading
	StoreNs      int64 // step time spent storing
	LoadedTokens int   // prompt tokens admitted from the tier
	Lookups      int   // admissions that looked the tier up
}

// lmcacheTier is the tier at run time: chunk keys in slots, an LRU list
// of the slots that hold one (head = least recently used).
type lmcacheTier struct {
	cfg       LMCacheConfig
	index     map[uint64]int32 // chunk key → slot
	key       []uint64
	blockList // LRU (head = least recently used)
	free      []int32
	stepNs    float64 // load and store time of the step being scheduled
	stats     LMCacheStats
}

func newLMCacheTier(cfg LMCacheConfig) *lmcacheTier {
	return &lmcacheTier{cfg: cfg, index: make(map[uint64]int32, min(cfg.Chunks, 1<<16)), blockList: emptyBlockList(),
		stats: LMCacheStats{Chunks: cfg.Chunks, ChunkBytes: cfg.ChunkBytes}}
}

func (t *lmcacheTier) held() int { return len(t.index) }

// chunkKey is chunk c's key: the hash of its last block.
func (t *lmcacheTier) chunkKey(blocks []uint64, c int) uint64 {
	return blocks[(c+1)*t.cfg.ChunkBlocks-1]
}

// fullChunks is the number of full chunks in the first n blocks.
func (t *lmcacheTier) fullChunks(n int) int { return n / t.cfg.ChunkBlocks }

// lookup counts the consecutive chunks of blocks, from the first, the tier
// holds (LMCacheEngine.lookup: contains, no touch).
func (t *lmcacheTier) lookup(blocks []uint64) int {
	n := t.fullChunks(len(blocks))
	for c := range n {
		if _, ok := t.index[t.chunkKey(blocks, c)]; !ok {
			return c
		}
	}
	return n
}

// retrieve touches chunks [from, to) of blocks (they were found by lookup
// in this schedule: get_blocking moves each to the end) and books their
// copy in the step.
func (t *lmcacheTier) retrieve(blocks []uint64, from, to int) {
	for c := from; c < to; c++ {
		s := t.index[t.chunkKey(blocks, c)]
		if s != t.tail {
			t.unlink(s)
			t.pushTail(s)
		}
	}
	n := to - from
	t.stats.LoadedChunks += n
	ns := float64(n) * t.cfg.ChunkNs
	t.stepNs += ns
	t.stats.LoadNs += int64(ns)
}

// store puts the chunks of blocks[:n full chunks] the tier lacks, evicting
// from the least recently used end; it returns how many it stored. A chunk
// held is skipped untouched (LMCacheEngine.store: contains → continue).
func (t *lmcacheTier) store(blocks []uint64, chunks int) int {
	stored := 0
	for c := range chunks {
		k := t.chunkKey(blocks, c)
		if _, ok := t.index[k]; ok {
			continue
		}
		if t.held() >= t.cfg.Chunks {
			t.evict(t.head)
		}
		var s int32
		if m := len(t.free); m > 0 {
			s, t.free = t.free[m-1], t.free[:m-1]
		} else {
			s = int32(len(t.key))
			t.key = append(t.key, 0)
			t.prev = append(t.prev, -1)
			t.next = append(t.next, -1)
		}
		t.key[s] = k
		t.index[k] = s
		t.pushTail(s)
		stored++
	}
	t.stats.PeakChunks = max(t.stats.PeakChunks, t.held())
	return stored
}

func (t *lmcacheTier) evict(s int32) {
	t.unlink(s)
	delete(t.index, t.key[s])
	t.free = append(t.free, s)
	t.stats.Evictions++
}

// check verifies the tier's accounting: at most its capacity, every chunk
// once in the index and the LRU list.
func (t *lmcacheTier) check() error {
	if t.held() > t.cfg.Chunks {
		return fmt.Errorf("LMCache tier holds %d chunks, more than its %d", t.held(), t.cfg.Chunks)
	}
	if t.held()+len(t.free) != len(t.key) {
		return fmt.Errorf("LMCache tier: %d held + %d empty slots ≠ %d slots", t.held(), len(t.free), len(t.key))
	}
	n := 0
	for s := t.head; s >= 0; s = t.next[s] {
		if n++; n > t.held() {
			return fmt.Errorf("LMCache tier: LRU list longer than the %d chunks held", t.held())
		}
		if t.index[t.key[s]] != s {
			return fmt.Errorf("LMCache tier: slot %d is listed but not indexed to it", s)
		}
	}
	if n != t.held() {
		return fmt.Errorf("LMCache tier: LRU list has %d chunks, the index %d", n, t.held())
	}
	if got := t.stats.WarmChunks + t.stats.StoredChunks - t.stats.Evictions; got != t.held() {
		return fmt.Errorf("LMCache tier: %d warm + %d stored − %d evicted ≠ %d held", t.stats.WarmChunks, t.stats.StoredChunks, t.stats.Evictions, t.held())
	}
	return nil
}
