package sim_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	. "github.com/routesim/routesim/sim"
)

// randomTrace draws a small trace with shared prefixes, bursts and long
// outputs, so that caching, chunking and preemption all happen.
func randomTrace(rng *rand.Rand, n int) *[]treq {
	reqs := make([]treq, n)
	at := Time(0)
	for i := range reqs {
		if rng.IntN(3) > 0 {
			at += Time(rng.IntN(200)) * Millisecond
		}
		isl := 1 + rng.IntN(3000)
		nb := (isl + 511) / 512
		ids := make([]int64, nb)
		shared := rng.IntN(nb + 1)
		group := int64(rng.IntN(3)) * 1000
		for k := range ids {
			if k < shared {
				ids[k] = group + int64(k)
			} else {
				ids[k] = int64(1_000_000 + i*100 + k)
			}
		}
		reqs[i] = treq{at: at, isl: isl, osl: 1 + rng.IntN(300), ids: ids}
	}
	return &reqs
}

func TestInvariantsOnRandomRuns(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		cfg := testConfig(1 + rng.IntN(4))
		cfg.Seed = seed
		cfg.Pools[0].Worker.BlockSize = []int{16, 32, 64}[rng.IntN(3)]
		cfg.Pools[0].Worker.MaxNumSeqs = 1 + rng.IntN(16)
		cfg.Pools[0].Worker.MaxNumBatchedTokens = 64 + rng.IntN(4096)
		cfg.Pools[0].Worker.MaxModelLen = 3000 // some requests are too long
		cfg.Pools[0].Worker.KVBlocks = (3000+cfg.Pools[0].Worker.BlockSize-1)/cfg.Pools[0].Worker.BlockSize + rng.IntN(200)
		cfg.Pools[0].Profile.NoiseSigma = rng.Float64() * 0.5
		reqs := randomTrace(rng, 1+rng.IntN(60))
		res, _ := simulate(t, cfg, mkTrace(*reqs...))
		s := Summarize(res)
		if s.Completed+s.Rejected["rejected-too-long"] != s.Offered {
			t.Errorf("seed %d: offered %d ≠ completed %d + rejected %v", seed, s.Offered, s.Completed, s.Rejected)
		}
	}
}

func TestSameSeedSameResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	reqs := randomTrace(rng, 80)
	cfg := testConfig(3)
	cfg.Pools[0].Profile.NoiseSigma = 0.3
	cfg.Seed = 42
	a, _ := simulate(t, cfg, mkTrace(*reqs...))
	b, _ := simulate(t, cfg, mkTrace(*reqs...))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	cfg.Seed = 43
	c, _ := simulate(t, cfg, mkTrace(*reqs...))
	if reflect.DeepEqual(a.Records, c.Records) {
		t.Error("a different seed changed nothing though service noise is on")
	}
}
