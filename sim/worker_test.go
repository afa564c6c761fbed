package sim_test

import (
	"strings"
	"testing"

	. "github.com/routesim/routesim/sim"
)

func TestBatchBudgetAndSeqLimit(t *testing.T) {
	cfg := testConfig(1)
	cfg.Pools[0].Worker.MaxNumSeqs = 4
	var reqs []treq
	for i := 0; i < 20; i++ {
		reqs = append(reqs, treq{at: 0, isl: 1000, osl: 20})
	}
	res, log := simulate(t, cfg, mkTrace(reqs...))
	full, maxSeqs := false, 0
	for _, s := range log.steps {
		full = full || s.b.PrefillTokens+s.b.DecodeSeqs == cfg.Pools[0].Worker.MaxNumBatchedTokens
		maxSeqs = max(maxSeqs, s.seqs)
	}
	if !full {
		t.Error("no step used the whole token budget though 20 prompts were waiting")
	}
	if maxSeqs != 4 {
		t.Errorf("largest batch had %d sequences, want the limit 4", maxSeqs)
	}
	if got := Summarize(res).Completed; got != 20 {
		t.Errorf("completed %d of 20", got)
	}
}

func TestChunkedPrefillSplitsLongPrompt(t *testing.T) {
	cfg := testConfig(1)
	res, log := simulate(t, cfg, mkTrace(treq{at: 0, isl: 5000, osl: 3}))
	var chunks []int
	for _, s := range log.steps {
		if s.b.PrefillTokens > 0 {
			chunks = append(chunks, s.b.PrefillTokens)
		}
	}
	if want := []int{2048, 2048, 904}; !equalInts(chunks, want) {
		t.Fatalf("prefill chunks %v, want %v", chunks, want)
	}
	// Three steps of 1 ms plus 1 µs per prompt token: TTFT = 3 ms + 5 ms.
	if got, want := res.Records[0].TTFT(), 8*Millisecond; got != want {
		t.Errorf("TTFT %d ns, want %d: the first token comes from the step that completes the prompt", got, want)
	}
}

func TestSharedPrefixHitsCacheAndShortensTTFT(t *testing.T) {
	cfg := testConfig(1)
	ids := seqIDs(0, 8) // 4,096 tokens
	half := append(seqIDs(0, 4), seqIDs(100, 4)...)
	res, _ := simulate(t, cfg, mkTrace(
		treq{at: 0, isl: 4096, osl: 2, ids: ids},
		treq{at: Second, isl: 4096, osl: 2, ids: ids},
		treq{at: 2 * Second, isl: 4096, osl: 2, ids: half},
	))
	r := res.Records
	if r[0].CachedTokens != 0 {
		t.Errorf("first request: %d cached tokens on a cold cache", r[0].CachedTokens)
	}
	// All but the last block: one token must be computed to sample from.
	if r[1].CachedTokens != 4096-64 {
		t.Errorf("identical prompt: %d cached tokens, want %d", r[1].CachedTokens, 4096-64)
	}
	if r[2].CachedTokens != 2048 {
		t.Errorf("half-shared prompt: %d cached tokens, want 2048", r[2].CachedTokens)
	}
	if !(r[1].TTFT() < r[2].TTFT() && r[2].TTFT() < r[0].TTFT()) {
		t.Errorf("TTFT should fall with cache hits: cold %d, half %d, full %d", r[0].TTFT(), r[2].TTFT(), r[1].TTFT())
	}
	if s := Summarize(res); s.PrefixHitRate <= 0 {
		t.Errorf("hit rate %v", s.PrefixHitRate)
	}
}

func TestPrefixCachingCanBeDisabled(t *testing.T) {
	cfg := testConfig(1)
	cfg.Pools[0].Worker.NoPrefixCaching = true
	ids := seqIDs(0, 8)
	res, _ := simulate(t, cfg, mkTrace(treq{at: 0, isl: 4096, osl: 2, ids: ids}, treq{at: Second, isl: 4096, osl: 2, ids: ids}))
	if c := res.Records[1].CachedTokens; c != 0 {
		t.Errorf("%d cached tokens with prefix caching off", c)
	}
}

func TestPreemptionWhenKVExhausted(t *testing.T) {
	cfg := testConfig(1)
	cfg.Pools[0].Worker.BlockSize = 16
	cfg.Pools[0].Worker.KVBlocks = 40 // 640 tokens
	cfg.Pools[0].Worker.MaxModelLen = 600
	var reqs []treq
	for i := 0; i < 4; i++ {
		reqs = append(reqs, treq{at: 0, isl: 100, osl: 400})
	}
	res, log := simulate(t, cfg, mkTrace(reqs...))
	s := Summarize(res)
	if s.Preemptions == 0 {
		t.Fatal("4 requests needing 125 blocks on a 40-block worker were never preempted")
	}
	if s.Completed != 4 {
		t.Errorf("completed %d of 4 after preemption", s.Completed)
	}
	peak := 0
	for _, st := range log.steps {
		peak = max(peak, st.kv)
	}
	if peak != cfg.Pools[0].Worker.KVBlocks {
		t.Errorf("peak KV use %d blocks; the run should fill all %d before preempting", peak, cfg.Pools[0].Worker.KVBlocks)
	}
	// Newest first: the request admitted last is preempted, the first never.
	if res.Records[0].Preemptions != 0 || res.Records[3].Preemptions == 0 {
		t.Errorf("preemptions by request: %d %d %d %d; want the newest preempted, the oldest never",
			res.Records[0].Preemptions, res.Records[1].Preemptions, res.Records[2].Preemptions, res.Records[3].Preemptions)
	}
}

func TestOverLengthRejectedWithReason(t *testing.T) {
	cfg := testConfig(2)
	cfg.Pools[0].Worker.MaxModelLen = 1000
	res, _ := simulate(t, cfg, mkTrace(treq{at: 0, isl: 900, osl: 200}, treq{at: 0, isl: 500, osl: 100}))
	r := res.Records[0]
	if r.Status != StatusRejectedTooLong || r.Worker != -1 || r.Status.HTTPCode() != 400 {
		t.Fatalf("over-length request: %+v", r)
	}
	if !strings.Contains(r.Reason, "maximum context length is 1000 tokens") || !strings.Contains(r.Reason, "1100 tokens") {
		t.Errorf("reason %q should name the limit and the request", r.Reason)
	}
	if res.Records[1].Status != StatusOK {
		t.Errorf("in-length request: %v", res.Records[1].Status)
	}
	s := Summarize(res)
	if s.Rejected["rejected-too-long"] != 1 || s.Completeness != 0.5 {
		t.Errorf("summary: rejected %v, completeness %v", s.Rejected, s.Completeness)
	}
	if s.TTFTOfferedMs["p90"] != nil {
		t.Errorf("TTFT p90 over offered must be undefined at 50%% completeness, got %v", *s.TTFTOfferedMs["p90"])
	}
}

func TestBurstOnOneTimestampIsBatched(t *testing.T) {
	cfg := testConfig(1)
	var reqs []treq
	for i := 0; i < 5; i++ {
		reqs = append(reqs, treq{at: 0, isl: 300, osl: 2})
	}
	_, log := simulate(t, cfg, mkTrace(reqs...))
	if first := log.steps[0]; first.seqs != 5 {
		t.Errorf("first step holds %d of 5 simultaneous arrivals", first.seqs)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
