package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
)

// TestClientTimeouts: on one overloaded worker, clients that wait T give
// up at exactly arrival + T wherever their request is (queued, in prefill,
// decoding); the engine frees their blocks (the run's end-of-run check
// finds none referenced); every completed request finished within T.
func TestClientTimeouts(t *testing.T) {
	cfg := testConfig(1)
	cfg.Pools[0].Worker.MaxNumSeqs = 4
	cfg.Pools[0].Worker.MaxNumBatchedTokens = 512
	const T = 3 * Second
	cfg.Router.Timeout = T
	var reqs []treq
	for i := 0; i < 40; i++ {
		reqs = append(reqs, treq{at: Time(i) * 50 * Millisecond, isl: 600, osl: 1500})
	}
	res, _ := simulate(t, cfg, mkTrace(reqs...))
	s := Summarize(res)
	failed := s.Rejected[StatusFailedTimeout.String()]
	if failed == 0 || s.Completed == 0 || s.Completed+failed != s.Offered {
		t.Fatalf("completed %d, timed out %d of %d: want both, and nothing else", s.Completed, failed, s.Offered)
	}
	started := 0
	for _, r := range res.Records {
		switch r.Status {
		case StatusOK:
			if r.End-r.Arrival > T {
				t.Errorf("request %d completed after %v, past the client's %v", r.ID, r.End-r.Arrival, T)
			}
		case StatusFailedTimeout:
			if r.End-r.Arrival != T {
				t.Errorf("request %d timed out after %v, want %v", r.ID, r.End-r.Arrival, T)
			}
			if r.FirstToken >= 0 {
				started++
			}
		}
	}
	if started == 0 {
		t.Error("no request timed out while decoding: the abort of a running request is untested")
	}
	cfg.Router.Timeout = 0
	res, _ = simulate(t, cfg, mkTrace(reqs...))
	if s := Summarize(res); s.Completed != s.Offered {
		t.Errorf("without a timeout %d of %d completed", s.Completed, s.Offered)
	}
}

// TestTimeoutLeavesRouterQueue: a parked request whose client gives up
// leaves the router queue at once. X (6,000 tokens, sent at 0) passes the
// frontend (10 µs/token) at 60 ms, after Y (3,000 tokens, sent at 1 ms,
// routed at 31 ms), and parks behind Y's prefill, which would last until
// ≈81 ms; X's client gives up at 70 ms, while X is still parked, Y's at
// 71 ms, in prefill.
func TestTimeoutLeavesRouterQueue(t *testing.T) {
	cfg := kvConfig(1)
	cfg.Pools[0].Worker.MaxNumBatchedTokens = 64
	cfg.Pools[0].Profile.FrontendNsPerInputToken = 10e3
	cfg.Router.Timeout = 70 * Millisecond
	p := policy.DefaultParams()
	p.RouterQueueThreshold = 1
	reqs := []treq{{at: 0, isl: 6000, osl: 5}, {at: Millisecond, isl: 3000, osl: 5}}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), newPolicy(t, "kv-backpressure", p))
	x, y := res.Records[0], res.Records[1]
	if x.Status != StatusFailedTimeout || x.Worker >= 0 || x.End != 70*Millisecond {
		t.Errorf("X: %v on worker %d at %v; want a time-out in the router queue at 70 ms", x.Status, x.Worker, x.End)
	}
	if y.Dispatched != 31*Millisecond || y.End != 71*Millisecond {
		t.Errorf("Y: dispatched at %v, ended at %v; want 31 ms, and a time-out in prefill at 71 ms", y.Dispatched, y.End)
	}
}

// TestInvariantsWithTimeouts: random overloaded runs with client timeouts
// and retries keep conservation and release every block.
func TestInvariantsWithTimeouts(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := testConfig(1 + rng.IntN(3))
		cfg.Seed = seed
		cfg.Pools[0].Worker.BlockSize = []int{16, 64}[rng.IntN(2)]
		cfg.Pools[0].Worker.MaxNumSeqs = 1 + rng.IntN(8)
		cfg.Pools[0].Worker.MaxNumBatchedTokens = 64 + rng.IntN(2048)
		cfg.Pools[0].Worker.MaxModelLen = 3000
		cfg.Pools[0].Worker.KVBlocks = (3000+cfg.Pools[0].Worker.BlockSize-1)/cfg.Pools[0].Worker.BlockSize + rng.IntN(100)
		cfg.Router.Timeout = Time(1+rng.IntN(3000)) * Millisecond
		reqs := randomTrace(rng, 1+rng.IntN(80))
		res, _ := simulate(t, cfg, mkTrace(*reqs...))
		s := Summarize(res)
		n := s.Completed
		for _, v := range s.Rejected {
			n += v
		}
		if n != s.Offered {
			t.Errorf("seed %d: offered %d ≠ completed %d + not completed %v", seed, s.Offered, s.Completed, s.Rejected)
		}
	}
}

// TestRetryWaitIsCapped: the client's backoff doubles per re-send up to
// MaxRetryWait, and never overflows (100 retries of a 1 s backoff).
func TestRetryWaitIsCapped(t *testing.T) {
	for _, tc := range []struct {
		backoff Time
		k       int
		want    Time
	}{{Second, 0, Second}, {Second, 3, 8 * Second}, {Second, 12, MaxRetryWait}, {Second, 99, MaxRetryWait}, {2 * MaxRetryWait, 0, MaxRetryWait}} {
		if got := RetryWait(tc.backoff, tc.k); got != tc.want {
			t.Errorf("backoff %v, re-send %d: %v, want %v", tc.backoff, tc.k, got, tc.want)
		}
	}
}
