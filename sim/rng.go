package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns the named random stream of a run: a PCG seeded with the
// run seed and a hash of the name, so adding a draw to one stream never
// shifts another. Names in use: "router", "workload" (service noise is counter-based: stepNoise).
func Stream(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
