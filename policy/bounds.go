package policy

import "math"

// Upper bounds of parameters that are converted (seconds to nanoseconds)
// or multiplied (blocks to tokens) before use: past them the conversion
// would wrap. ParamList's Max fields and ParseScorers apply them.
const (
	// maxBlocks bounds a parameter counted in prompt blocks (an LRU's or
	// hash table's capacity, a prefix length): 2^36 blocks of 16 tokens
	// is 2^40 tokens, more KV than any worker holds.
	maxBlocks = 1 << 36
	// maxScorerWeight bounds an llm-d scorer's weight: weights are
	// relative (upstream's are 2 and 3), and the weighted sum of scores in
	// [0, 1] must stay finite to rank workers.
	maxScorerWeight = 1e6
)

// nanos is s seconds in nanoseconds, rounded; a positive s below a
// nanosecond is one nanosecond, never 0, which means "off" (an eviction
// interval of 4e-10 s must not mean "never evict").
func nanos(s float64) int64 {
	n := int64(math.Round(s * 1e9))
	if n == 0 && s > 0 {
		return 1
	}
	return n
}
