package sim_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// tierDecisions keeps every decision's worker and scores, by request.
type tierDecisions struct {
	worker map[int]int
	scores map[int][]float64
}

func (l *tierDecisions) Decision(_ Time, id, _ int, d policy.Decision) {
	l.worker[id], l.scores[id] = d.Worker, slices.Clone(d.Scores)
}

// tierRun runs tr on two vLLM workers of 40 GPU blocks and a CPU tier of
// 200 blocks each, routed by pol: vLLM's native tier (publishing "CPU"
// events) if kvbm is nil, else KVBM's host tier, whose events reach the
// router through its consolidator in mode *kvbm.
func tierRun(t *testing.T, tr *workload.Trace, kvbm *KVBMEvents, pol policy.Policy) (*Result, *tierDecisions) {
	t.Helper()
	wc := WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 40, MaxModelLen: 2560,
		HostTier: HostTierConfig{Blocks: 200, BlockBytes: 1 << 20, BlockNs: 20_000}}
	if kvbm != nil {
		wc.KVBM = KVBMConfig{On: true, Events: *kvbm}
	}
	cfg := Config{Pools: Single(2, wc, testProfile())}
	cfg.Router.KVAware, cfg.CheckInvariants = true, true
	log := &tierDecisions{worker: map[int]int{}, scores: map[int][]float64{}}
	cfg.Decisions = log
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(cfg, wl, pol)
	if err != nil {
		t.Fatal(err)
	}
	return res, log
}

func kvAt(t *testing.T, version string) policy.Policy {
	t.Helper()
	p := policy.DefaultParams()
	p.Rand, p.DynamoVersion = rand.New(rand.NewPCG(3, 4)), version
	pol, err := policy.New("kv", p)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// gpuOnly hides a policy's TierReader: its router reads the GPU tier only.
func gpuOnly(p policy.Policy) policy.Policy { return policy.Func(p.Route) }

// A's 16 blocks land on one worker; two fillers of 39 blocks at once (the
// second sees the first's booked prefill, so one each) evict every GPU
// block; C shares A's prompt. Only the CPU tier of A's worker holds A's
// blocks. KVBM's host tier shows them to Dynamo's router through KVBM's
// consolidator in the worker: in dedup mode (the default) as Device
// events, which the router credits fully in its device index; in
// passthrough as CPU_PINNED events, credited 0.75 each in its host index.
// Either way C goes there and loads them. vLLM's native tier (medium
// "CPU", no token ids) shows nothing at v1.4, so every decision is the
// GPU-only router's.
func TestTierEventsChangeKVRouting(t *testing.T) {
	tr := &workload.Trace{Name: "tiers", Requests: []workload.Request{
		{Line: 1, ArrivalNs: 0, InputTokens: 1024, OutputTokens: 2, HashIDs: []int64{1, 2}},
		{Line: 2, ArrivalNs: int64(100 * Millisecond), InputTokens: 2496, OutputTokens: 2, HashIDs: []int64{11, 12, 13, 14, 15}},
		{Line: 3, ArrivalNs: int64(100 * Millisecond), InputTokens: 2496, OutputTokens: 2, HashIDs: []int64{21, 22, 23, 24, 25}},
		{Line: 4, ArrivalNs: int64(300 * Millisecond), InputTokens: 1536, OutputTokens: 2, HashIDs: []int64{1, 2, 777}},
	}}
	base, baseLog := tierRun(t, tr, nil, gpuOnly(kvAt(t, "1.4.0")))
	native, nativeLog := tierRun(t, tr, nil, kvAt(t, "1.4.0"))
	for id, w := range baseLog.worker {
		if nativeLog.worker[id] != w || !slices.Equal(nativeLog.scores[id], baseLog.scores[id]) {
			t.Errorf("request %d: the native CPU tier's events changed the decision: worker %d scores %v, GPU-only %d %v",
				id, nativeLog.worker[id], nativeLog.scores[id], w, baseLog.scores[id])
		}
	}
	if s := nativeLog.scores[3]; s[0] != s[1] {
		t.Errorf("native tier: C's costs %v, want equal (the router sees none of A's blocks)", s)
	}
	a := baseLog.worker[0]
	if baseLog.worker[1] == baseLog.worker[2] {
		t.Fatalf("fillers on one worker (%d): the setup needs one each", baseLog.worker[1])
	}
	dedup, passthrough := KVBMEventsDedup, KVBMEventsPassthrough
	for _, c := range []struct {
		v      string
		mode   *KVBMEvents
		credit float64
	}{{"1.2.0", &dedup, 16}, {"1.4.0", &dedup, 16}, {"1.2.0", &passthrough, 12}, {"1.4.0", &passthrough, 12}} {
		v := c.v + " " + c.mode.String()
		res, log := tierRun(t, tr, c.mode, kvAt(t, c.v))
		if log.worker[0] != a {
			t.Fatalf("%s: A went to %d, GPU-only to %d: the runs diverge before the tier matters", v, log.worker[0], a)
		}
		s := log.scores[3]
		// C: 24 prompt blocks, 16 on A's worker's host tier: credit 16
		// as Device blocks from the dedup consolidator, 0.75 × 16 = 12 in
		// the host index under passthrough.
		if got := s[1-a] - s[a]; got != c.credit {
			t.Errorf("%s: C's cost on the other worker less on A's = %g, want %g", v, got, c.credit)
		}
		if log.worker[3] != a {
			t.Errorf("%s: C went to %d, not to A's worker %d whose host tier holds its prefix", v, log.worker[3], a)
		}
		for i := range res.Records {
			if r := &res.Records[i]; r.ID == 3 && r.CachedTokens != 1024 {
				t.Errorf("%s: C found %d cached tokens on %d, want A's 1024 (loaded from the host tier)", v, r.CachedTokens, r.Worker)
			}
		}
	}
	if _, l := tierRun(t, tr, &passthrough, gpuOnly(kvAt(t, "1.4.0"))); l.scores[3][0] != l.scores[3][1] {
		t.Errorf("control: a GPU-only router sees C's costs %v, want equal", l.scores[3])
	}
	checkRecords(t, base)
	checkRecords(t, native)
}
