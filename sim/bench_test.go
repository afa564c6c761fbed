package sim_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// benchSetup is the first 1,000 requests of the embedded conversation
// trace on 8 A100 workers with the stand-in profile's coefficients.
func benchSetup(b *testing.B) (Config, *Workload) {
	tr, err := workload.Open("conversation")
	if err != nil {
		b.Fatal(err)
	}
	if tr, err = tr.Apply(workload.Filter{First: 1000}); err != nil {
		b.Fatal(err)
	}
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		b.Fatal(err)
	}
	cfg := testConfig(8)
	cfg.Pools[0].Worker = WorkerConfig{MaxNumSeqs: 256, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 2127, MaxModelLen: 40960}
	cfg.Pools[0].Profile.StepBaseNs, cfg.Pools[0].Profile.PrefillNsPerToken, cfg.Pools[0].Profile.DecodeNsPerSeq = 16441532, 47837, 18206
	return cfg, wl
}

func benchRun(b *testing.B, cfg Config, wl *Workload, newPol func() policy.Policy) {
	b.ReportAllocs()
	b.ResetTimer()
	var events uint64
	for i := 0; i < b.N; i++ {
		res, err := Run(cfg, wl, newPol())
		if err != nil {
			b.Fatal(err)
		}
		events = res.Events
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkReplay: one replay under round-robin.
func BenchmarkReplay(b *testing.B) {
	cfg, wl := benchSetup(b)
	benchRun(b, cfg, wl, func() policy.Policy { return &policy.RoundRobin{} })
}

// BenchmarkReplayKVAdmission: the same replay under kv-admission, with the
// router's block bookkeeping and KV events.
func BenchmarkReplayKVAdmission(b *testing.B) {
	cfg, wl := benchSetup(b)
	cfg.Router.KVAware = true
	benchRun(b, cfg, wl, func() policy.Policy {
		p := policy.DefaultParams()
		p.Rand = Stream(0, "router")
		pol, err := policy.New("kv-admission", p)
		if err != nil {
			b.Fatal(err)
		}
		return pol
	})
}

// scaleSetup is requests requests of the conversation trace (its first
// 1,000, or shifted copies of its first 10,000 for more) on n workers,
// arriving n/8 times as fast: the same load per worker as benchSetup at
// N = 8.
func scaleSetup(b *testing.B, n, requests int) (Config, *Workload) {
	tr, err := workload.Open("conversation")
	if err != nil {
		b.Fatal(err)
	}
	f := workload.Filter{First: requests, RateScale: float64(n) / 8}
	if requests > 10000 {
		f.First, f.Repeat = 10000, requests/10000
	}
	if tr, err = tr.Apply(f); err != nil {
		b.Fatal(err)
	}
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		b.Fatal(err)
	}
	cfg := testConfig(n)
	cfg.Pools[0].Worker = WorkerConfig{MaxNumSeqs: 256, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 2127, MaxModelLen: 40960}
	cfg.Pools[0].Profile.StepBaseNs, cfg.Pools[0].Profile.PrefillNsPerToken, cfg.Pools[0].Profile.DecodeNsPerSeq = 16441532, 47837, 18206
	return cfg, wl
}

// BenchmarkScale: round-robin and kv-admission at N = 8, 64, 512 and 4096
// on the same load per worker, 1,000 requests each (100,000 at N = 512
// and 4096 too, with -bench 'Scale/100k'): the kv decision's cost against
// N, and memory per request. Reported: ns/event, events/op and B/req
// (bytes allocated per request). The README's speed table comes from
//
//	go test ./sim -run '^$' -bench 'Scale/' -benchtime 1x
func BenchmarkScale(b *testing.B) {
	type size struct {
		name     string
		requests int
		ns       []int
	}
	for _, sz := range []size{{"1k", 1000, []int{8, 64, 512, 4096}}, {"100k", 100000, []int{512, 4096}}} {
		for _, n := range sz.ns {
			for _, pol := range []string{"round-robin", "kv-admission"} {
				b.Run(fmt.Sprintf("%s/N=%d/%s", sz.name, n, pol), func(b *testing.B) {
					cfg, wl := scaleSetup(b, n, sz.requests)
					cfg.Router.KVAware = pol != "round-robin"
					b.ReportAllocs()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					b.ResetTimer()
					events := runPolicy(b, cfg, wl, pol, policy.DefaultParams())
					b.StopTimer()
					runtime.ReadMemStats(&after)
					b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(wl.Jobs)), "B/req")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
					b.ReportMetric(float64(events), "events/op")
				})
			}
		}
	}
}

// runPolicy runs wl b.N times under a fresh policy name (router stream of
// seed 0) and returns the events of a run.
func runPolicy(b *testing.B, cfg Config, wl *Workload, name string, p policy.Params) uint64 {
	var events uint64
	for i := 0; i < b.N; i++ {
		p.Rand = Stream(0, "router")
		pl, err := policy.New(name, p)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Run(cfg, wl, pl)
		if err != nil {
			b.Fatal(err)
		}
		events = res.Events
	}
	return events
}

// BenchmarkRouters: every registered policy on the 1,000-request replay
// at N = 8 and 64 (the same load per worker), with the router features
// its registry entry asks for: what each decision rule costs per event.
//
//	go test ./sim -run '^$' -bench 'Routers/'
func BenchmarkRouters(b *testing.B) {
	for _, n := range []int{8, 64} {
		for _, name := range policy.Names() {
			b.Run(fmt.Sprintf("N=%d/%s", n, name), func(b *testing.B) {
				cfg, wl := scaleSetup(b, n, 1000)
				e, _ := policy.Lookup(name)
				cfg = routerFor(cfg, e, policy.DefaultParams())
				b.ReportAllocs()
				b.ResetTimer()
				events := runPolicy(b, cfg, wl, name, policy.DefaultParams())
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
			})
		}
	}
}
