package sim_test

import (
	"fmt"
	"testing"

	. "github.com/routesim/routesim/sim"
)

// BenchmarkKVBlockLifecycle is the prefix cache's work per prompt block in
// the replay's steady state: allocate it (evicting the least recently
// freed cached block), make it findable, free it. The replay of
// BenchmarkReplay does about one such cycle per engine step (139k block
// allocations, 139k commits and 122k evictions in 131k steps), so this is
// a floor under a step's cost at block-granular prefix caching.
func BenchmarkKVBlockLifecycle(b *testing.B) {
	const capacity, perRequest = 2127, 32
	c := NewKVCache(capacity)
	table := make([]int32, 0, perRequest)
	h := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i += perRequest {
		table, _ = c.Grow(table[:0], perRequest)
		for _, blk := range table {
			h++
			c.Commit(blk, Mix(h, 0))
		}
		c.Release(table)
	}
}

// stepper reschedules one step-end per worker, as a replay's busy workers
// do: the event loop's own cost per event.
type stepper struct {
	eng  *Engine
	left int
}

func (s *stepper) Handle(e Event) {
	if s.left--; s.left > 0 {
		s.eng.Schedule(e.At+Time(16_000_000+int64(e.Arg)*997), e.Kind, e.Arg)
	}
}

// BenchmarkEventLoop is the engine's cost per event with N workers' step
// ends in the queue (a replay keeps about one event per busy worker).
func BenchmarkEventLoop(b *testing.B) {
	for _, n := range []int32{8, 512, 4096} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var eng Engine
			s := &stepper{eng: &eng, left: b.N}
			for w := int32(0); w < n; w++ {
				eng.Schedule(Time(w), 5, w)
			}
			b.ResetTimer()
			eng.Run(s)
		})
	}
}
