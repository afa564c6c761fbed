package sim_test

import (
	"math/rand/v2"
	"testing"

	. "github.com/routesim/routesim/sim"
)

// The LMCache rules these tests check are read in docs/readings/lmcache.md
// (spring-2025 LMCache "experimental" engine and vLLM's LMCacheConnectorV1
// of that time); each test names the source it follows.

const lmcChunkNs = 50_000 // one chunk's copy, one way

// lmcCfg is one worker of KV blocks of 64 tokens with vLLM's prefix
// caching off (the validation case's setting) and an LMCache tier of
// chunks of 4 blocks (256 tokens), copied in lmcChunkNs each (none if
// chunks is 0).
func lmcCfg(chunks, budget int) Config {
	cfg := testConfig(1)
	w := &cfg.Pools[0].Worker
	w.MaxNumBatchedTokens, w.NoPrefixCaching = budget, true
	if chunks > 0 {
		w.LMCache = LMCacheConfig{Chunks: chunks, ChunkBlocks: 4, ChunkBytes: 1 << 25, ChunkNs: lmcChunkNs}
	}
	return cfg
}

// stepsOf are the steps of a run whose batch computes prompt tokens.
func prefillSteps(l *stepLog) []stepRec {
	var out []stepRec
	for _, s := range l.steps {
		if s.b.PrefillTokens > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Store after the step, full chunks of the prompt only
// (cache_engine.py LMCacheEngine.store over ChunkedTokenDatabase chunks;
// the connector's wait_for_save after the forward; save_decode_cache
// false): a 1,000-token prompt prefilled in chunks of 512 stores 2 chunks
// with its first step and 1 with its second (15 full blocks hold 3 full
// chunks; the partial fourth is not kept), nothing while it decodes, and
// each store is paid in the step that computes it.
func TestLMCacheStoresFullPromptChunksAfterTheStep(t *testing.T) {
	tr := mkTrace(treq{at: 0, isl: 1000, osl: 4, ids: []int64{1, 2}})
	res, log := simulate(t, lmcCfg(100, 512), tr)
	_, none := simulate(t, lmcCfg(0, 512), tr)
	st := res.Workers[0].LMCache
	if st == nil || st.StoredChunks != 3 || st.LoadedChunks != 0 {
		t.Fatalf("LMCache stats %+v: want 3 chunks stored, none loaded", st)
	}
	if len(log.steps) != len(none.steps) {
		t.Fatalf("%d steps with the tier, %d without", len(log.steps), len(none.steps))
	}
	wantExtra := []Time{2 * lmcChunkNs, 1 * lmcChunkNs, 0, 0, 0} // 2 prefill steps, 3 decodes
	for i, s := range log.steps {
		if got := s.dur - none.steps[i].dur; i < len(wantExtra) && got != wantExtra[i] {
			t.Errorf("step %d (%d prefill tokens) lasts %v more with the tier, want %v (its chunks' store)", i, s.b.PrefillTokens, got, wantExtra[i])
		}
	}
}

// Synchronous load inside the admitting step (the connector's
// get_num_new_matched_tokens and start_load_kv before the forward;
// LMCacheEngine.lookup counts the consecutive chunks from the prompt's
// start): B shares A's first 15 blocks, of which the tier holds 3 full
// chunks (768 tokens); B is admitted at once with them computed, and its
// first step computes the other 332 tokens and lasts the profile's time
// plus 3 chunks loaded and 1 new chunk stored.
func TestLMCacheSyncLoadInTheAdmittingStep(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 1000, osl: 2, ids: []int64{1, 2}},
		treq{at: 100 * Millisecond, isl: 1100, osl: 2, ids: []int64{1, 2, 3}},
	)
	res, log := simulate(t, lmcCfg(100, 2048), tr)
	off, _ := simulate(t, lmcCfg(0, 2048), tr)
	if c := recordOf(res, 1).CachedTokens; c != 768 {
		t.Fatalf("B starts with %d tokens from the tier, want 768 (3 chunks of 256)", c)
	}
	if c := recordOf(off, 1).CachedTokens; c != 0 {
		t.Fatalf("control: without the tier B found %d cached tokens", c)
	}
	p := prefillSteps(log)
	if len(p) != 2 || p[1].b.PrefillTokens != 1100-768 {
		t.Fatalf("prefill steps %+v: want A's and B's, B's of %d tokens", p, 1100-768)
	}
	prof := testProfile()
	if got, want := p[1].dur, Time(prof.StepNs(p[1].b))+4*lmcChunkNs; got != want {
		t.Errorf("B's step lasts %v, want the profile's %v + 3 chunks loaded + 1 stored (%v)", got, Time(prof.StepNs(p[1].b)), 4*lmcChunkNs)
	}
	if st := res.Workers[0].LMCache; st.LoadedChunks != 3 || st.StoredChunks != 4 || st.LoadedTokens != 768 {
		t.Errorf("LMCache stats %+v: want 3 chunks loaded (768 tokens), 4 stored", st)
	}
	if recordOf(res, 1).TTFT() >= recordOf(off, 1).TTFT() {
		t.Errorf("B's TTFT %v with the tier, %v without: the load should beat recomputing 768 tokens here", recordOf(res, 1).TTFT(), recordOf(off, 1).TTFT())
	}
}

// A hit of the whole prompt gives its last token back (the connector:
// "num_external_hit_tokens == request.num_tokens" → one less): a 1,024-token
// prompt asked again loads its 4 chunks and computes 1 token.
func TestLMCacheWholePromptHitComputesTheLastToken(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 100 * Millisecond, isl: 1024, osl: 2, ids: []int64{1, 2}},
	)
	res, log := simulate(t, lmcCfg(100, 2048), tr)
	if c := recordOf(res, 1).CachedTokens; c != 1023 {
		t.Errorf("the repeat starts with %d tokens from the tier, want 1023", c)
	}
	if p := prefillSteps(log); len(p) != 2 || p[1].b.PrefillTokens != 1 {
		t.Errorf("prefill steps %+v: want the repeat's of 1 token", p)
	}
	if st := res.Workers[0].LMCache; st.LoadedChunks != 4 {
		t.Errorf("LMCache stats %+v: want 4 chunks loaded", st)
	}
}

// LRU (local_cpu_backend.py LocalCPUBackend: an OrderedDict; a put
// appends, get_blocking — the retrieve — moves a key to the end, and an
// allocation without room evicts from the front; a store skips a chunk
// the tier holds without touching it). With room for 4 chunks: A stores
// its 2, B its 2; C retrieves A's 2 (now the most recent) and stores its
// own 2 (evicting B's, the least recent); so D, asking A's prompt again,
// hits both chunks, and E, asking B's, misses.
func TestLMCacheLRUEvictsLeastRecentlyRetrieved(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 512, osl: 2, ids: []int64{10}},
		treq{at: 100 * Millisecond, isl: 512, osl: 2, ids: []int64{20}},
		treq{at: 200 * Millisecond, isl: 1024, osl: 2, ids: []int64{10, 30}},
		treq{at: 300 * Millisecond, isl: 512, osl: 2, ids: []int64{10}},
		treq{at: 400 * Millisecond, isl: 512, osl: 2, ids: []int64{20}},
	)
	res, _ := simulate(t, lmcCfg(4, 2048), tr)
	for _, c := range []struct {
		id, cached int
		why        string
	}{{2, 512, "A's 2 chunks"}, {3, 511, "A's chunks, retrieved by C, survived (the last token is computed)"}, {4, 0, "B's chunks were evicted"}} {
		if got := recordOf(res, c.id).CachedTokens; got != c.cached {
			t.Errorf("request %d starts with %d tokens from the tier, want %d (%s)", c.id, got, c.cached, c.why)
		}
	}
	if st := res.Workers[0].LMCache; st.PeakChunks != 4 || st.Evictions == 0 {
		t.Errorf("LMCache stats %+v: want a full tier (4 chunks) that evicted", st)
	}
}

// Warm start: the tier holds every request's prompt chunks, in trace
// order, before the run; a request's first admission then loads them.
func TestLMCacheWarmStart(t *testing.T) {
	tr := mkTrace(treq{at: 0, isl: 1000, osl: 2, ids: []int64{1, 2}})
	cfg := lmcCfg(100, 2048)
	cfg.Pools[0].Worker.LMCache.Warm = true
	res, _ := simulate(t, cfg, tr)
	st := res.Workers[0].LMCache
	if st.WarmChunks != 3 || st.LoadedChunks != 3 || st.StoredChunks != 0 {
		t.Errorf("LMCache stats %+v: want 3 chunks warmed, loaded at admission, none stored again", st)
	}
	if c := recordOf(res, 0).CachedTokens; c != 768 {
		t.Errorf("the first request starts with %d tokens from the warm tier, want 768", c)
	}
}

// Random traces of users sharing long prefixes, on tiers of 1 to 40
// chunks, with vLLM's prefix caching on and off, warm and cold: every
// invariant holds after every step (simulate checks the KV cache and the
// tier: at most its capacity, each chunk once in index and LRU, warm +
// stored − evicted = held), every request ends exactly once, and a request
// never starts with more tokens than its prompt less one.
func TestLMCacheRandomTracesKeepInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 4))
	loaded, evicted := 0, 0
	for trial := range 40 {
		var reqs []treq
		at := Time(0)
		for range 30 {
			user := int64(rng.IntN(6))
			ids := seqIDs(100*user, 1+int64(rng.IntN(4)))
			ids = append(ids, 10_000+int64(len(reqs))) // a question of its own
			isl := 512*(len(ids)-1) + 1 + rng.IntN(511)
			at += Time(rng.IntN(40)) * Millisecond
			reqs = append(reqs, treq{at: at, isl: isl, osl: 1 + rng.IntN(20), ids: ids})
		}
		cfg := lmcCfg(1+rng.IntN(40), 256+rng.IntN(2048))
		w := &cfg.Pools[0].Worker
		w.NoPrefixCaching = trial%2 == 0
		w.LMCache.Warm = trial%3 == 0
		w.KVBlocks = 50 + rng.IntN(200)
		w.MaxModelLen = w.KVBlocks * 64
		res, _ := simulate(t, cfg, mkTrace(reqs...))
		if len(res.Records) != len(reqs) {
			t.Fatalf("trial %d: %d records for %d requests", trial, len(res.Records), len(reqs))
		}
		seen := map[int]bool{}
		for _, r := range res.Records {
			if seen[r.ID] {
				t.Fatalf("trial %d: request %d ended twice", trial, r.ID)
			}
			seen[r.ID] = true
			if r.CachedTokens > reqs[r.ID].isl-1 {
				t.Errorf("trial %d: request %d starts with %d of its %d prompt tokens", trial, r.ID, r.CachedTokens, reqs[r.ID].isl)
			}
		}
		st := res.Workers[0].LMCache
		if st.PeakChunks > w.LMCache.Chunks {
			t.Errorf("trial %d: the tier held %d chunks, more than its %d", trial, st.PeakChunks, w.LMCache.Chunks)
		}
		loaded += st.LoadedChunks
		evicted += st.Evictions
	}
	if loaded == 0 || evicted == 0 {
		t.Errorf("%d chunks loaded, %d evicted over all trials: the traces do not exercise the tier", loaded, evicted)
	}
}
