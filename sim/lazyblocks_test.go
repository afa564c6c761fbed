package sim_test

import (
	"reflect"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// TestLazyBlocksMatchEager: a trace workload keeps its prompts compact
// (Chains) and the simulator expands each request's blocks on arrival into
// recycled buffers. Against the same workload expanded up front, every
// record and worker statistic is identical, under kv routing with retries
// and client timeouts that abort requests mid-step (the buffer of such a
// request is recycled only after the step, and the router's cached scans
// never outlive a recycled buffer).
func TestLazyBlocksMatchEager(t *testing.T) {
	tr, err := workload.Open("conversation")
	if err != nil {
		t.Fatal(err)
	}
	if tr, err = tr.Apply(workload.Filter{First: 200, RateScale: 20}); err != nil {
		t.Fatal(err)
	}
	lazy, err := workload.Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	eager := &Workload{Name: lazy.Name, BlockSize: lazy.BlockSize, Jobs: append([]Job(nil), lazy.Jobs...)}
	for i := range eager.Jobs {
		j := &eager.Jobs[i]
		if j.Chains == nil || j.Blocks != nil {
			t.Fatalf("job %d is not in compact form", i)
		}
		j.Blocks, j.Chains = j.AppendBlocks(make([]uint64, 0, j.PromptBlocks), 64), nil
	}
	for _, timeout := range []Time{0, 2 * Second} {
		cfg := testConfig(2)
		cfg.Pools[0].Worker = WorkerConfig{MaxNumSeqs: 64, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 1500, MaxModelLen: 40960}
		cfg.Router = RouterConfig{KVAware: true, Timeout: timeout, Retries: 2, RetryBackoff: 100 * Millisecond}
		cfg.CheckInvariants = true
		run := func(wl *Workload) *Result {
			p := costOnly(policy.DefaultParams())
			p.Rand = Stream(3, "router")
			pol, err := policy.New("kv", p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(cfg, wl, pol)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		a, b := run(lazy), run(eager)
		if !reflect.DeepEqual(a.Records, b.Records) || !reflect.DeepEqual(a.Workers, b.Workers) {
			t.Fatalf("timeout %v: lazy and eager blocks give different runs", timeout)
		}
		s := Summarize(a)
		if timeout > 0 && s.Rejected[StatusFailedTimeout.String()] == 0 {
			t.Errorf("timeout %v: no request timed out; the recycling of aborted requests is untested", timeout)
		}
		t.Logf("timeout %v: %d completed of %d, rejected %v", timeout, s.Completed, s.Offered, s.Rejected)
	}
}
