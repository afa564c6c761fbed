package sim

import (
	"fmt"
	"testing"
)

func mustGrow(t *testing.T, c *KVCache, table []int32, n int) []int32 {
	t.Helper()
	table, ok := c.Grow(table, n)
	if !ok {
		t.Fatalf("Grow(%d) failed with %d free", n, c.Free())
	}
	return table
}

func TestKVCacheEvictsLeastRecentlyFreedSuffixFirst(t *testing.T) {
	c := NewKVCache(4)
	a := mustGrow(t, c, nil, 2)
	b := mustGrow(t, c, nil, 2)
	c.Commit(a[0], 0xa1)
	c.Commit(a[1], 0xa2)
	c.Commit(b[0], 0xb1)
	c.Commit(b[1], 0xb2)
	if _, ok := c.Grow(nil, 1); ok {
		t.Fatal("allocated from a full pool")
	}
	c.Release(a) // A is freed before B: A's blocks are evicted first,
	c.Release(b) // and within A the suffix before the prefix.
	if hits, free := c.Lookup([]uint64{0xa1, 0xa2}, 2); hits != 2 || free != 2 {
		t.Fatalf("after release: %d hits (%d free), want 2 (2)", hits, free)
	}
	x := mustGrow(t, c, nil, 1)
	if hits, _ := c.Lookup([]uint64{0xa1, 0xa2}, 2); hits != 1 {
		t.Errorf("after one eviction A keeps %d blocks, want its prefix (1)", hits)
	}
	x = mustGrow(t, c, x, 1)
	if hits, _ := c.Lookup([]uint64{0xa1}, 1); hits != 0 {
		t.Error("A's prefix survived while B's blocks were older in use")
	}
	if hits, _ := c.Lookup([]uint64{0xb1, 0xb2}, 2); hits != 2 {
		t.Errorf("B lost blocks (%d hits) though A's were evicted first", hits)
	}
	if c.Evictions != 2 {
		t.Errorf("evictions %d, want 2", c.Evictions)
	}
	// Referenced blocks are never evicted.
	y := c.Acquire(nil, []uint64{0xb1, 0xb2})
	if _, ok := c.Grow(nil, 1); ok {
		t.Error("evicted a block that a request holds")
	}
	c.Release(y)
	c.Release(x)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Used() != 0 || c.Free() != 4 {
		t.Errorf("used %d free %d after releasing everything", c.Used(), c.Free())
	}
}

func TestKVCacheAnonymousBlocksReusedBeforeCachedOnes(t *testing.T) {
	c := NewKVCache(3)
	a := mustGrow(t, c, nil, 1)
	c.Commit(a[0], 1)
	anon := mustGrow(t, c, nil, 2)
	c.Release(a)
	c.Release(anon)
	mustGrow(t, c, nil, 2)
	if hits, _ := c.Lookup([]uint64{1}, 1); hits != 1 {
		t.Error("a cached block was evicted while blocks with no content were free")
	}
}

func TestKVCacheDuplicateContentStaysAnonymous(t *testing.T) {
	c := NewKVCache(2)
	a := mustGrow(t, c, nil, 1)
	b := mustGrow(t, c, nil, 1)
	c.Commit(a[0], 7)
	c.Commit(b[0], 7) // computed twice concurrently: only one copy is findable
	if c.Cached() != 1 {
		t.Errorf("%d findable copies of one block", c.Cached())
	}
	c.Release(a)
	c.Release(b)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestKVCacheAcquireAfterItsBufferChanged: Acquire reuses the blocks the
// last Lookup found, but a recycled hash buffer (another request's blocks
// at the same address) must still acquire the blocks of the hashes it now
// holds.
func TestKVCacheAcquireAfterItsBufferChanged(t *testing.T) {
	c := NewKVCache(4)
	tab := mustGrow(t, c, nil, 4)
	for i, h := range []uint64{11, 12, 21, 22} {
		c.Commit(tab[i], h)
	}
	c.Release(tab)
	buf := []uint64{11, 12}
	if hits, _ := c.Lookup(buf, 2); hits != 2 {
		t.Fatalf("%d hits, want 2", hits)
	}
	buf[0], buf[1] = 21, 22 // the buffer now names another prompt
	got := c.Acquire(nil, buf)
	if want := []int32{tab[2], tab[3]}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("acquired blocks %v for hashes 21, 22; they live in %v", got, want)
	}
	c.Release(got)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

// eventLog records a cache's KV events in order.
type eventLog struct{ events []string }

func (l *eventLog) Stored(h uint64)  { l.events = append(l.events, "stored "+string(rune('a'+h%26))) }
func (l *eventLog) Removed(h uint64) { l.events = append(l.events, "removed "+string(rune('a'+h%26))) }

// TestGrowManyIsGrowOneByOne: Grow takes all its blocks before dropping
// their old content (so the drops' index probes overlap); the tables,
// the events and what stays cached must be those of growing one block at
// a time.
func TestGrowManyIsGrowOneByOne(t *testing.T) {
	build := func() (*KVCache, *eventLog) {
		c, log := NewKVCache(12), &eventLog{}
		c.Events = log
		var tables [][]int32
		for r := 0; r < 4; r++ { // four requests of three blocks, cached, freed in turn
			tb := mustGrow(t, c, nil, 3)
			for k, b := range tb {
				c.Commit(b, uint64(3*r+k))
			}
			tables = append(tables, tb)
		}
		for _, r := range []int{2, 0, 3, 1} {
			c.Release(tables[r])
		}
		return c, log
	}
	for _, n := range []int{1, 2, 5, 12} {
		many, manyLog := build()
		one, oneLog := build()
		got := mustGrow(t, many, nil, n)
		var want []int32
		for i := 0; i < n; i++ {
			want = mustGrow(t, one, want, 1)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(manyLog.events) != fmt.Sprint(oneLog.events) ||
			many.Evictions != one.Evictions || many.Cached() != one.Cached() {
			t.Errorf("Grow(%d): table %v, events %v, %d evicted; one by one: %v, %v, %d",
				n, got, manyLog.events, many.Evictions, want, oneLog.events, one.Evictions)
		}
		if err := many.Check(); err != nil {
			t.Errorf("Grow(%d): %v", n, err)
		}
	}
}
