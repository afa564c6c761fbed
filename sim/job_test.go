package sim_test

import (
	"testing"

	"github.com/routesim/routesim/workload"
)

func TestPrepareExpandsMooncakeBlocks(t *testing.T) {
	tr := mkTrace(
		treq{isl: 1100, osl: 1, ids: []int64{5, 6, 7}},
		treq{isl: 1024, osl: 1, ids: []int64{5, 6}},
		treq{isl: 600, osl: 1, ids: []int64{5, 9}},
		treq{isl: 512, osl: 1, ids: []int64{6}},
	)
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	blocks := func(i int) []uint64 { return wl.Jobs[i].AppendBlocks(nil, 64) }
	a, b, c, d := blocks(0), blocks(1), blocks(2), blocks(3)
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
		if _, err := workload.Prepare(tr, bad); err == nil {
			t.Errorf("block size %d accepted", bad)
		}
	}
}
