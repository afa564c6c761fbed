package sim_test

import (
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// testProfile: 1 ms per step, 1 µs per prefill token, 10 µs per decode.
func testProfile() *model.Profile {
	return &model.Profile{Name: "test", GPU: "g", Model: "m", TP: 1, Quant: model.BF16, Kind: "roofline",
		StepBaseNs: 1e6, PrefillNsPerToken: 1e3, DecodeNsPerSeq: 1e4}
}

// routerFor gives cfg the router features policy e needs with p, as a
// scenario would (policy.Entry.Needs).
func routerFor(cfg Config, e policy.Entry, p policy.Params) Config {
	n := e.Needs(p)
	cfg.Router.KVAware, cfg.Router.EngineSignal, cfg.Router.MetricsScrapePeriod = n.KV, n.EngineMetrics, Time(n.ScrapePeriod)
	return cfg
}

func testConfig(n int) Config {
	return Config{Pools: Single(n, WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 1000, MaxModelLen: 40000}, testProfile())}
}

// treq is a hand-built request: arrival, lengths and Mooncake hash ids
// (nil = ids unique to this request).
type treq struct {
	at       Time
	isl, osl int
	ids      []int64
}

func mkTrace(reqs ...treq) *workload.Trace {
	t := &workload.Trace{Name: "test"}
	next := int64(1_000_000)
	for i, r := range reqs {
		ids := r.ids
		if ids == nil {
			for k := 0; k < (r.isl+511)/512; k++ {
				ids = append(ids, next)
				next++
			}
		}
		t.Requests = append(t.Requests, workload.Request{Line: i + 1, ArrivalNs: int64(r.at), InputTokens: r.isl, OutputTokens: r.osl, HashIDs: ids})
	}
	return t
}

func seqIDs(from, n int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = from + int64(i)
	}
	return ids
}

// stepLog records every step and checks the per-step invariants.
type stepLog struct {
	t     *testing.T
	cfg   Config
	steps []stepRec
}

type stepRec struct {
	w          int
	start, dur Time
	b          model.Batch
	seqs, kv   int
}

func (l *stepLog) Step(w int, start, dur Time, b model.Batch, seqs, kv int) {
	l.t.Helper()
	// (A TensorRT-LLM request paused to recompute may have grown past
	// max_num_tokens; it then runs alone: trtllm.go microBatch.)
	if tok := b.PrefillTokens + b.DecodeSeqs; tok > l.cfg.Pools[0].Worker.MaxNumBatchedTokens && !(seqs == 1 && l.cfg.Pools[0].Worker.Engine == TRTLLM) {
		l.t.Errorf("worker %d step at %d: %d tokens > budget %d", w, start, tok, l.cfg.Pools[0].Worker.MaxNumBatchedTokens)
	}
	if seqs > l.cfg.Pools[0].Worker.MaxNumSeqs {
		l.t.Errorf("worker %d step at %d: %d sequences > max %d", w, start, seqs, l.cfg.Pools[0].Worker.MaxNumSeqs)
	}
	if kv > l.cfg.Pools[0].Worker.KVBlocks {
		l.t.Errorf("worker %d step at %d: %d KV blocks in use > capacity %d", w, start, kv, l.cfg.Pools[0].Worker.KVBlocks)
	}
	l.steps = append(l.steps, stepRec{w, start, dur, b, seqs, kv})
}

// simulate runs tr on cfg with round-robin, checking every invariant.
func simulate(t *testing.T, cfg Config, tr *workload.Trace) (*Result, *stepLog) {
	t.Helper()
	return simulateWith(t, cfg, tr, &policy.RoundRobin{})
}

func simulateWith(t *testing.T, cfg Config, tr *workload.Trace, pol policy.Policy) (*Result, *stepLog) {
	t.Helper()
	log := &stepLog{t: t, cfg: cfg}
	cfg.Observer = log
	cfg.CheckInvariants = true
	wl, err := workload.Prepare(tr, cfg.Pools[0].Worker.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(cfg, wl, pol)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, res)
	return res, log
}

// checkRecords verifies conservation and per-request time order.
func checkRecords(t *testing.T, res *Result) {
	t.Helper()
	counts := map[Status]int{}
	for _, r := range res.Records {
		counts[r.Status]++
		switch r.Status {
		case StatusOK:
			if !(r.Arrival <= r.Routed && r.Routed <= r.FirstToken && r.FirstToken <= r.End) {
				t.Errorf("request %d: times out of order: %+v", r.ID, r)
			}
			if r.OutputTokens >= 2 && !(r.FirstToken < r.SecondToken && r.SecondToken <= r.End) {
				t.Errorf("request %d: second token out of order: %+v", r.ID, r)
			}
			if r.CachedTokens < 0 || r.CachedTokens >= r.InputTokens {
				t.Errorf("request %d: %d cached of %d prompt tokens", r.ID, r.CachedTokens, r.InputTokens)
			}
		case StatusPending:
			t.Errorf("request %d never ended", r.ID)
		case StatusFailedTimeout:
			if r.Reason == "" || r.End < r.Arrival || (r.FirstToken >= 0 && r.FirstToken > r.End) {
				t.Errorf("request %d: timed out without a reason, or times out of order: %+v", r.ID, r)
			}
		default:
			if r.Reason == "" || r.FirstToken >= 0 {
				t.Errorf("request %d: rejected without a reason, or after a token: %+v", r.ID, r)
			}
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != len(res.Records) {
		t.Errorf("conservation: %d outcomes for %d requests", total, len(res.Records))
	}
}

// costOnly turns off the Dynamo release's router queue and busy monitor:
// kv is then the cost argmin alone.
func costOnly(p policy.Params) policy.Params {
	p.RouterQueueThreshold, p.ActiveDecodeBlocksThreshold, p.ActivePrefillTokensThreshold, p.ActivePrefillTokensThresholdFrac = 0, 0, 0, 0
	return p
}
