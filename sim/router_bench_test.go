package sim

import "testing"

// BenchmarkRouterBookFinish is the router's in-flight bookkeeping at
// fleet scale: 4,000 requests of 190 unique blocks in flight on 512
// workers (760k blocks, far larger than the cache), each operation
// finishing one request and booking a new one. Reported: ns per block
// booked and finished, including drawing its hash (a unique suffix is
// one leaf of the in-flight tree: one probe and a copy per request; the
// per-block hash index before it took two probes of a table in memory,
// 198–204 ns per block).
func BenchmarkRouterBookFinish(b *testing.B) {
	const n, live, per = 512, 4000, 190
	workers := make([]*worker, n)
	for w := range workers {
		workers[w] = &worker{id: w, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 100, MaxNumBatchedTokens: 512}}
	}
	r := newRouter(workers, RouterConfig{KVAware: true}, func() Time { return 0 })
	var h uint64
	fresh := func(bl []uint64) []uint64 {
		for i := range bl {
			h++
			bl[i] = Mix(h, 7)
		}
		return bl
	}
	reqs := make([][]uint64, live)
	for i := range reqs {
		reqs[i] = fresh(make([]uint64, per))
		r.book(i%n, per*16, reqs[i])
	}
	spare := make([]uint64, per)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % live
		r.finish(k%n, reqs[k])
		reqs[k], spare = fresh(spare), reqs[k]
		r.book(k%n, per*16, reqs[k])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, "ns/block")
}
