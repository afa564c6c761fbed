package sim_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// runBothWays runs wl on cfg twice, step by step and with decode runs,
// under fresh policies built by newPol, and fails on any difference in
// the records, the worker counters, the GPU sampler or the event count.
// It returns how many step ends the decode runs applied without an event.
func runBothWays(t *testing.T, name string, cfg Config, wl *Workload, newPol func() policy.Policy, clients func() FollowUp) uint64 {
	t.Helper()
	cfg.NVML.Series = true
	var res [2]*Result
	var absorbed uint64
	for i, stepByStep := range []bool{true, false} {
		c := cfg
		c.StepByStep = stepByStep
		if clients != nil {
			c.FollowUp = clients()
		}
		r, stats, err := RunCounted(c, wl, newPol())
		if err != nil {
			t.Fatalf("%s (step by step %v): %v", name, stepByStep, err)
		}
		checkRecords(t, r)
		res[i], absorbed = r, stats.Absorbed
	}
	a, b := res[0], res[1]
	for k := range a.Records {
		if !reflect.DeepEqual(a.Records[k], b.Records[k]) {
			t.Fatalf("%s: request %d differs:\nstep by step %+v\ndecode runs  %+v", name, k, a.Records[k], b.Records[k])
		}
	}
	power := func(w int, u float64) float64 { return 100 + 200*u }
	switch {
	case len(a.Records) != len(b.Records):
		t.Fatalf("%s: %d records step by step, %d with decode runs", name, len(a.Records), len(b.Records))
	case !reflect.DeepEqual(a.Workers, b.Workers):
		t.Fatalf("%s: worker counters differ:\n%+v\n%+v", name, a.Workers, b.Workers)
	case !reflect.DeepEqual(a.GPU, b.GPU):
		t.Fatalf("%s: GPU samples differ", name)
	case !reflect.DeepEqual(a.GPUStats(power), b.GPUStats(power)):
		t.Fatalf("%s: GPU statistics differ", name)
	case a.Makespan != b.Makespan || a.Events != b.Events:
		t.Fatalf("%s: makespan %d / %d, events %d / %d", name, a.Makespan, b.Makespan, a.Events, b.Events)
	}
	return absorbed
}

// seededPolicy builds fresh policies name with parameters p, each on the
// router stream of seed, so that two runs decide alike.
func seededPolicy(t *testing.T, name string, p policy.Params, seed uint64) func() policy.Policy {
	return func() policy.Policy {
		p.Rand = Stream(seed, "router")
		pol, err := policy.New(name, p)
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
}

// kernelProfiles are the built-in profiles with a measured layer curve.
var kernelProfiles = func() []*model.Profile {
	var out []*model.Profile
	for _, p := range model.BuiltinProfiles() {
		if p.IsKernel() {
			out = append(out, p)
		}
	}
	return out
}()

// TestDecodeRunsMatchStepByStep holds decode runs to the step-by-step
// simulation on random clusters: every policy, tiny KV pools that
// preempt, prefix caching on and off, client timeouts and retries, KV
// event lags, FLOP-driven power and closed-loop clients.
func TestDecodeRunsMatchStepByStep(t *testing.T) {
	var absorbed uint64
	for seed := uint64(1); seed <= 80; seed++ {
		absorbed += randomRunCase(t, seed)
	}
	if absorbed == 0 {
		t.Fatal("no decode run took a step: the comparison tested nothing")
	}
	t.Logf("%d step ends applied inside decode runs", absorbed)
}

// FuzzDecodeRunsMatchStepByStep is the same comparison on any seed:
//
//	go test ./sim -run '^$' -fuzz FuzzDecodeRunsMatchStepByStep -fuzztime 5m
func FuzzDecodeRunsMatchStepByStep(f *testing.F) {
	for seed := uint64(1); seed <= 4; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { randomRunCase(t, seed) })
}

// TestDecodeRunsMatchStepByStepTRTLLM is the comparison with
// TensorRT-LLM workers: every capacity policy, chunked prefill and the
// overlap scheduler on and off.
func TestDecodeRunsMatchStepByStepTRTLLM(t *testing.T) {
	var absorbed uint64
	for seed := uint64(1); seed <= 60; seed++ {
		absorbed += randomRunCaseOn(t, seed, true, false)
	}
	if absorbed == 0 {
		t.Fatal("no decode run took a step: the comparison tested nothing")
	}
	t.Logf("%d step ends applied inside decode runs", absorbed)
}

// randomRunCase draws cluster and workload seed, runs it both ways
// (runBothWays) and returns the step ends decode runs applied.
func randomRunCase(t *testing.T, seed uint64) uint64 { return randomRunCaseOn(t, seed, false, false) }

// TestDecodeRunsMatchStepByStepAsync is the comparison with vLLM's async
// scheduling: a request dispatched during a decode run waits for the step
// after the one in flight at its arrival.
func TestDecodeRunsMatchStepByStepAsync(t *testing.T) {
	var absorbed uint64
	for seed := uint64(1); seed <= 60; seed++ {
		absorbed += randomRunCaseOn(t, seed, false, true)
	}
	if absorbed == 0 {
		t.Fatal("no decode run took a step: the comparison tested nothing")
	}
	t.Logf("%d step ends applied inside decode runs", absorbed)
}

// randomRunCaseOn is randomRunCase, with TensorRT-LLM workers if trt (its
// settings drawn from a stream of their own, so that the vLLM cases stay
// as they were), or vLLM's async scheduling if async.
func randomRunCaseOn(t *testing.T, seed uint64, trt, async bool) uint64 {
	t.Helper()
	names := policy.Names()
	rng := rand.New(rand.NewPCG(seed, 1234))
	cfg := testConfig(1 + rng.IntN(5))
	cfg.Seed = seed
	wc := &cfg.Pools[0].Worker
	wc.BlockSize = []int{16, 32, 64}[rng.IntN(3)]
	wc.MaxNumSeqs = 1 + rng.IntN(24)
	wc.MaxNumBatchedTokens = 64 + rng.IntN(4096)
	wc.MaxModelLen = 3400
	wc.KVBlocks = (3400+wc.BlockSize-1)/wc.BlockSize + rng.IntN(300)
	wc.NoPrefixCaching = rng.IntN(4) == 0
	prof := *cfg.Pools[0].Profile
	prof.DecodeNsPerCtxToken = float64(rng.IntN(40))
	if rng.IntN(3) == 0 { // a measured kernel profile: a layer curve, FLOP power
		prof = *kernelProfiles[rng.IntN(len(kernelProfiles))]
	}
	if rng.IntN(3) == 0 {
		prof.PowerPJPerFLOP, prof.FLOPsPerToken, prof.AttnFLOPsPerPair = 1, 1.6e10, 1e6
	}
	if rng.IntN(6) == 0 {
		prof.NoiseSigma = 0.2
	}
	cfg.Pools[0].Profile = &prof
	if rng.IntN(3) == 0 {
		cfg.Router.Timeout = Time(200+rng.IntN(3000)) * Millisecond
		cfg.Router.Retries, cfg.Router.RetryBackoff = rng.IntN(3), 50*Millisecond
	}
	if trt {
		r := rand.New(rand.NewPCG(seed, 3535))
		wc.Engine, wc.CapacityPolicy = TRTLLM, CapacityPolicy(r.IntN(3))
		wc.ChunkedPrefill, wc.NoOverlap = r.IntN(2) == 0, r.IntN(2) == 0
		if !wc.ChunkedPrefill && r.IntN(2) == 0 {
			wc.MaxNumBatchedTokens = 3400 // no prompt refused
		}
		if r.IntN(2) == 0 { // the executor's host time, hidden by the GPU's steps or not
			prof.ExecutorHostNs = []float64{580e3, 3e6}[r.IntN(2)]
		}
	}
	wc.AsyncScheduling = async
	name := names[rng.IntN(len(names))]
	p := policy.DefaultParams()
	e, _ := policy.Lookup(name)
	cfg = routerFor(cfg, e, p)
	if cfg.Router.KVAware && rng.IntN(2) == 0 {
		cfg.Router.KVEventLag = Time(rng.IntN(30)) * Millisecond
	}
	newPol := seededPolicy(t, name, p, seed)
	label := fmt.Sprintf("seed %d (%s, N=%d, async %v)", seed, name, cfg.NumWorkers(), async)
	if trt {
		label = fmt.Sprintf("seed %d (%s, N=%d, trtllm %v, chunked %v, overlap %v, executor host %g ns)", seed, name, cfg.NumWorkers(), wc.CapacityPolicy, wc.ChunkedPrefill, !wc.NoOverlap, prof.ExecutorHostNs)
	}
	if rng.IntN(4) == 0 { // closed-loop chat clients
		bs, clients := wc.BlockSize, rng.IntN(6)+1
		// Both runs need identical clients: each is built from one seed.
		newClients := func() (*chatClients, *Workload) {
			r := rand.New(rand.NewPCG(seed, 77))
			cc := newChatClients(bs, 2+r.IntN(3), Time(r.IntN(80))*Millisecond)
			wl := &Workload{Name: "chat", BlockSize: bs}
			for i := 0; i < clients; i++ {
				j := cc.job(nil, Time(i)*Millisecond)
				j.ID = i
				wl.Jobs = append(wl.Jobs, *j)
			}
			return cc, wl
		}
		_, wl := newClients()
		return runBothWays(t, label+" chat", cfg, wl, newPol, func() FollowUp {
			cc, _ := newClients()
			for i := range wl.Jobs { // the run's jobs are wl's
				cc.turn[&wl.Jobs[i]], cc.client[&wl.Jobs[i]] = 1, i
			}
			return cc
		})
	}
	reqs := randomTrace(rng, 1+rng.IntN(80))
	wl, err := workload.Prepare(mkTrace(*reqs...), wc.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	return runBothWays(t, label, cfg, wl, newPol, nil)
}

// TestDecodeRunsAtTies is the comparison on lockstep traffic: identical
// requests arriving together on workers with round step times, a router
// queue that parks and drains, and client deadlines on a 10 µs grid, so
// that dispatches and aborts land on the very nanosecond a decode run's
// step ends, on its own worker or another.
func TestDecodeRunsAtTies(t *testing.T) {
	var absorbed uint64
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 4321))
		n := 2 + rng.IntN(3)
		cfg := testConfig(n)
		cfg.Seed = seed
		wc := &cfg.Pools[0].Worker
		wc.BlockSize, wc.MaxNumSeqs, wc.KVBlocks = 16, 2+rng.IntN(6), 400+rng.IntN(400)
		wc.MaxModelLen = wc.KVBlocks * 16
		if rng.IntN(2) == 0 {
			cfg.Router.Timeout = Time(100+rng.IntN(200)) * 10 * Microsecond
		}
		name := []string{"kv-admission", "kv", "kv-backpressure", "round-robin", "least-loaded"}[rng.IntN(5)]
		p := policy.DefaultParams()
		p.RouterQueueThreshold = []float64{0.01, 0.1, 0.5}[rng.IntN(3)]
		e, _ := policy.Lookup(name)
		cfg = routerFor(cfg, e, p)
		var reqs []treq
		for g := 0; g < 4+rng.IntN(6); g++ {
			at := Time(rng.IntN(40)) * Millisecond
			isl, osl := 16*(1+rng.IntN(20)), 2+rng.IntN(60)
			ids := seqIDs(int64(rng.IntN(3))*100, int64((isl+511)/512))
			for k := 0; k < n+rng.IntN(n+1); k++ {
				reqs = append(reqs, treq{at: at, isl: isl, osl: osl, ids: ids})
			}
		}
		slices.SortStableFunc(reqs, func(a, b treq) int { return cmp.Compare(a.at, b.at) })
		wl, err := workload.Prepare(mkTrace(reqs...), wc.BlockSize)
		if err != nil {
			t.Fatal(err)
		}
		absorbed += runBothWays(t, fmt.Sprintf("seed %d (%s, N=%d)", seed, name, n), cfg, wl, seededPolicy(t, name, p, seed), nil)
	}
	if absorbed == 0 {
		t.Fatal("no decode run took a step: the comparison tested nothing")
	}
}
