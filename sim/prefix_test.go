package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/routesim/routesim/workload"
)

// TestSyntheticSharedPrefixBelowMooncakeBlock: a 100-token shared prefix
// (shorter than a 512-token Mooncake block) is still shared at the
// worker's block granularity: six 16-token blocks, the same within a
// group and different across groups; the blocks after it are unique.
func TestSyntheticSharedPrefixBelowMooncakeBlock(t *testing.T) {
	s := workload.Synthetic{Requests: 40, RatePerS: 5, Arrival: "poisson", ISLMean: 400, ISLCV: 0.0001, OSLMean: 10, OSLCV: 0.0001, PrefixGroups: 2, PrefixTokens: 100}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	tr := s.Generate(rand.New(rand.NewPCG(1, 2)))
	wl, err := workload.Prepare(tr, 16)
	if err != nil {
		t.Fatal(err)
	}
	byGroup := map[int][][]uint64{}
	for i := range wl.Jobs {
		g := tr.Requests[i].PrefixGroup
		byGroup[g] = append(byGroup[g], wl.Jobs[i].AppendBlocks(nil, 16))
	}
	if len(byGroup) != 2 {
		t.Fatalf("%d groups", len(byGroup))
	}
	a, b := byGroup[0], byGroup[1]
	for k := 0; k < 6; k++ {
		if a[0][k] != a[1][k] || b[0][k] != b[1][k] {
			t.Errorf("block %d differs within a group", k)
		}
		if a[0][k] == b[0][k] {
			t.Errorf("block %d shared across groups", k)
		}
	}
	if a[0][6] == a[1][6] {
		t.Error("the block after the 96 shared tokens is shared")
	}
}
