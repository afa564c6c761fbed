package sim

import (
	"testing"

	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim/workload"
)

func TestPrepareExpandsMooncakeBlocks(t *testing.T) {
	tr := mkTrace(
		treq{isl: 1100, osl: 1, ids: []int64{5, 6, 7}},
		treq{isl: 1024, osl: 1, ids: []int64{5, 6}},
		treq{isl: 600, osl: 1, ids: []int64{5, 9}},
		treq{isl: 512, osl: 1, ids: []int64{6}},
	)
	wl, err := Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c, d := wl.Jobs[0].Blocks, wl.Jobs[1].Blocks, wl.Jobs[2].Blocks, wl.Jobs[3].Blocks
	// Only full 64-token blocks: 1100/64 = 17, 1024/64 = 16, 600/64 = 9.
	if len(a) != 17 || len(b) != 16 || len(c) != 9 || len(d) != 8 {
		t.Fatalf("block counts %d %d %d %d", len(a), len(b), len(c), len(d))
	}
	for k := 0; k < 16; k++ {
		if a[k] != b[k] {
			t.Fatalf("block %d differs between prompts sharing two Mooncake blocks", k)
		}
	}
	for k := 0; k < 8; k++ {
		if c[k] != a[k] {
			t.Fatalf("block %d of a shared first Mooncake block differs", k)
		}
	}
	if c[8] == a[8] {
		t.Error("different second Mooncake blocks gave the same worker block")
	}
	if d[0] == a[8] {
		t.Error("hash id 6 at position 0 matched id 6 at position 1: hashes must be chained")
	}
	seen := map[uint64]bool{}
	for _, h := range a {
		if seen[h] {
			t.Fatal("two blocks of one prompt share a hash")
		}
		seen[h] = true
	}
	for _, bad := range []int{0, 3, 48, 1024} {
		if _, err := Prepare(tr, bad); err == nil {
			t.Errorf("block size %d accepted", bad)
		}
	}
}

// BenchmarkReplay replays the first 1,000 requests of the embedded
// conversation trace on 8 workers (A100 + Qwen3-8B stand-in coefficients).
func BenchmarkReplay(b *testing.B) {
	tr, err := workload.Open("conversation")
	if err != nil {
		b.Fatal(err)
	}
	if tr, err = tr.Apply(workload.Filter{First: 1000}); err != nil {
		b.Fatal(err)
	}
	wl, err := Prepare(tr, 64)
	if err != nil {
		b.Fatal(err)
	}
	cfg := testConfig(8)
	cfg.Worker = WorkerConfig{MaxNumSeqs: 256, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 2127, MaxModelLen: 40960}
	cfg.Profile.StepBaseNs, cfg.Profile.PrefillNsPerToken, cfg.Profile.DecodeNsPerSeq = 16441532, 47837, 18206
	b.ReportAllocs()
	b.ResetTimer()
	var events uint64
	for i := 0; i < b.N; i++ {
		res, err := Run(cfg, wl, &policy.RoundRobin{})
		if err != nil {
			b.Fatal(err)
		}
		events = res.Events
	}
	b.ReportMetric(float64(events), "events/op")
}
