package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/routesim/routesim/internal/hashmix"
)

// Service noise is counter-based: the factor on worker w's k-th step is a
// function of (seed, w, k) alone, not a draw from a stream the workers
// share. So a step's noise is the same whichever way it is simulated —
// step by step, or inside a decode run planned ahead and perhaps cut — and
// whatever other workers do in between.

// stepNoise draws the standard normal of a worker's steps: math/rand/v2's
// ziggurat over a source that hashes (key, step, draw), so step k's value
// depends on nothing else. The ziggurat takes one draw most of the time,
// a few rarely; 2⁸ per step is never reached in practice, and were it,
// the draws would continue into the next step's range, still
// deterministically.
type stepNoise struct {
	src hashSource
	rng *rand.Rand
}

// hashSource is a rand.Source whose n-th output is a hash of (key, n).
type hashSource struct {
	key, n uint64
}

// Uint64 returns the hash of the key and the next counter value.
func (h *hashSource) Uint64() uint64 {
	h.n++
	return hashmix.Mix(h.key, h.n)
}

// newStepNoise returns the noise of worker id's steps under seed.
func newStepNoise(seed uint64, id int) *stepNoise {
	f := fnv.New64a()
	f.Write([]byte("service"))
	s := &stepNoise{src: hashSource{key: hashmix.Mix(hashmix.Mix(seed, f.Sum64()), uint64(id))}}
	s.rng = rand.New(&s.src)
	return s
}

// factor is the lognormal factor, mean 1 and log-sd sigma, on the step
// with index k (0-based, counting every step the worker began):
// exp(σz − σ²/2).
func (s *stepNoise) factor(k int, sigma float64) float64 {
	s.src.n = uint64(k) << 8
	z := s.rng.NormFloat64()
	return math.Exp(sigma*z - sigma*sigma/2)
}
