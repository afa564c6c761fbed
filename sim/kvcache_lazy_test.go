package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// queueModel is the KV pool as a plain free queue over all n blocks built
// up front (how NewKVCache behaved before blocks were materialised on
// first use): the lazy pool must hand out the same blocks in the same
// order.
type queueModel struct {
	queue  []int32
	ref    []int
	hashed map[int32]uint64
	where  map[uint64]int32
}

func newQueueModel(n int) *queueModel {
	m := &queueModel{ref: make([]int, n), hashed: map[int32]uint64{}, where: map[uint64]int32{}}
	for b := 0; b < n; b++ {
		m.queue = append(m.queue, int32(b))
	}
	return m
}

func (m *queueModel) remove(b int32) {
	i := slices.Index(m.queue, b)
	m.queue = slices.Delete(m.queue, i, i+1)
}

func (m *queueModel) grow(n int) []int32 {
	if n > len(m.queue) {
		return nil
	}
	out := append([]int32(nil), m.queue[:n]...)
	m.queue = m.queue[n:]
	for _, b := range out {
		if h, ok := m.hashed[b]; ok {
			delete(m.where, h)
			delete(m.hashed, b)
		}
		m.ref[b] = 1
	}
	return out
}

func (m *queueModel) release(table []int32) {
	for i := len(table) - 1; i >= 0; i-- {
		b := table[i]
		if m.ref[b]--; m.ref[b] > 0 {
			continue
		}
		if _, ok := m.hashed[b]; ok {
			m.queue = append(m.queue, b)
		} else {
			m.queue = append([]int32{b}, m.queue...)
		}
	}
}

// TestKVCacheLazyMatchesEagerQueue drives the pool and the model with the
// same random allocations, commits, cache hits and releases.
func TestKVCacheLazyMatchesEagerQueue(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 5 + rng.IntN(60)
		c, m := NewKVCache(n), newQueueModel(n)
		var live [][]int32
		for step := 0; step < 2000; step++ {
			switch op := rng.IntN(4); {
			case op == 0 || len(live) == 0: // allocate, commit some
				k := 1 + rng.IntN(5)
				got, ok := c.Grow(nil, k)
				want := m.grow(k)
				if ok != (want != nil) || !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: Grow(%d) = %v %v, eager queue gives %v", seed, step, k, got, ok, want)
				}
				if !ok {
					continue
				}
				for _, b := range got {
					if rng.IntN(2) == 0 {
						h := rng.Uint64N(40)
						c.Commit(b, h)
						if _, dup := m.where[h]; !dup {
							m.where[h], m.hashed[b] = b, h
						}
					}
				}
				live = append(live, got)
			case op == 1: // a cache hit on a free cached block
				h := rng.Uint64N(40)
				b, ok := m.where[h]
				if hits, _ := c.Lookup([]uint64{h}, 1); (hits == 1) != ok {
					t.Fatalf("seed %d step %d: Lookup(%d) = %d, model %v", seed, step, h, hits, ok)
				}
				if ok {
					if m.ref[b] == 0 {
						m.remove(b)
					}
					m.ref[b]++
					live = append(live, c.Acquire(nil, []uint64{h}))
				}
			default: // release a table
				k := rng.IntN(len(live))
				c.Release(live[k])
				m.release(live[k])
				live = slices.Delete(live, k, k+1)
			}
			if err := c.Check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if c.Free() != len(m.queue) {
				t.Fatalf("seed %d step %d: %d free, model %d", seed, step, c.Free(), len(m.queue))
			}
		}
	}
}

// TestKVCacheIdleCostsBytes: a large pool nobody used holds no per-block
// state.
func TestKVCacheIdleCostsBytes(t *testing.T) {
	c := NewKVCache(1 << 22)
	if c.Capacity() != 1<<22 || c.Free() != 1<<22 || len(c.ref) != 0 || len(c.index.slots) > 256 {
		t.Errorf("idle pool: capacity %d, free %d, %d blocks materialised, index %d slots", c.Capacity(), c.Free(), len(c.ref), len(c.index.slots))
	}
	if err := c.Check(); err != nil {
		t.Error(err)
	}
}
