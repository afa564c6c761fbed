package sim

import "fmt"

// KVCache is a worker's paged KV block pool with prefix caching, after
// vLLM V1's BlockPool: blocks are reference-counted; a block whose content
// is a full, hashed prompt block stays findable by its hash after its last
// user frees it, until it is evicted. Unreferenced blocks sit in one free
// queue; allocation takes from the head, so the least recently freed cached
// block is evicted first (LRU). A request's blocks are freed tail first,
// so its prefix outlives its suffix; blocks with no reusable content go to
// the head, to be reused before any cached block.
//
// Every operation is O(1) per block touched. Blocks are materialised on
// first use: the never-used blocks [grown, capacity) are one virtual run
// of the free queue, after every block freed to the head (the last of
// which is boundary) and before every block freed to the tail, so an idle
// worker costs bytes and allocation order is that of a pool built whole.
// The block arrays grow in doubling chunks (materialise), so they may
// hold blocks past grown, initialised and unused.
type KVCache struct {
	capacity  int
	grown     int32 // blocks used at least once: [0, grown)
	ref       []int32
	hash      []uint64
	hashed    []bool
	index     kvIndex  // content hash → block holding it
	looked    []int32  // the blocks the last Lookup found, for Acquire
	scratch   []uint64 // Grow's evicted hashes
	blockList          // the free queue of materialised blocks
	boundary  int32    // last block of the queue before the never-used run (-1 = none)
	free      int      // blocks with ref == 0: the linked ones and the never-used run

	// Evictions counts cached blocks whose content was dropped for reuse.
	Evictions int
	// Events, if set, is told when a block becomes findable or stops
	// being findable (the worker's KV events).
	Events KVEventSink
}

// KVEventSink receives a worker's block stored/removed events.
type KVEventSink interface {
	Stored(hash uint64)
	Removed(hash uint64)
}

// NewKVCache returns an empty pool of n blocks.
func NewKVCache(n int) *KVCache {
	return &KVCache{capacity: n, index: newKVIndex(min(n, 64)), blockList: emptyBlockList(), boundary: -1, free: n}
}

// Capacity is the number of blocks in the pool.
func (c *KVCache) Capacity() int { return c.capacity }

// Free is the number of blocks not referenced by any request (cached or not).
func (c *KVCache) Free() int { return c.free }

// Used is the number of blocks referenced by at least one request.
func (c *KVCache) Used() int { return c.capacity - c.free }

// virgin is the number of never-used blocks.
func (c *KVCache) virgin() int { return c.capacity - int(c.grown) }

// take removes and returns the block at the head of the free queue: a
// block freed to the head, else a never-used one, else the least recently
// freed cached block.
func (c *KVCache) take() int32 {
	if c.boundary < 0 && c.virgin() > 0 {
		b := c.grown
		if int(b) == len(c.ref) {
			c.materialise()
		}
		c.grown++
		c.free--
		return b
	}
	b := c.head
	c.unlink(b)
	return b
}

// materialise makes room for more never-used blocks: the block arrays
// grow together, doubling from 64 blocks up to the capacity, so that a
// pool that fills takes a handful of allocations, not one per array per
// doubling, and an idle one none.
func (c *KVCache) materialise() {
	n := min(max(2*len(c.ref), 64), c.capacity)
	c.ref, c.hash, c.hashed = extend(c.ref, n, 0), extend(c.hash, n, 0), extend(c.hashed, n, false)
	c.prev, c.next = extend(c.prev, n, -1), extend(c.next, n, -1)
}

// extend returns a copy of s lengthened to n, the new elements fill.
func extend[T any](s []T, n int, fill T) []T {
	t := make([]T, n)
	for i := copy(t, s); i < n; i++ {
		t[i] = fill
	}
	return t
}

// Cached is the number of blocks findable by hash.
func (c *KVCache) Cached() int { return c.index.n }

// Lookup counts the leading hashes (at most limit) whose blocks are
// cached, and how many of those are currently unreferenced.
func (c *KVCache) Lookup(hashes []uint64, limit int) (hits, hitsFree int) {
	limit = min(limit, len(hashes))
	c.looked = c.looked[:0]
	for hits < limit {
		_, b := c.index.find(hashes[hits], c.hash)
		if b < 0 {
			break
		}
		if c.ref[b] == 0 {
			hitsFree++
		}
		c.looked = append(c.looked, b)
		hits++
	}
	return hits, hitsFree
}

// Acquire appends the cached blocks of the first n hashes to table, taking
// a reference on each. The caller has checked them with Lookup. A block
// the last Lookup found at the same position is reused when it still
// holds the hash (a hash lives in at most one block), so the index is
// not probed twice.
func (c *KVCache) Acquire(table []int32, hashes []uint64) []int32 {
	for i, h := range hashes {
		var b int32
		if i < len(c.looked) && c.hashed[c.looked[i]] && c.hash[c.looked[i]] == h {
			b = c.looked[i]
		} else {
			if _, b = c.index.find(h, c.hash); b < 0 {
				panic("sim: Acquire of a hash that is not cached")
			}
		}
		if c.ref[b] == 0 {
			c.unlink(b)
		}
		c.ref[b]++
		table = append(table, b)
	}
	return table
}

// Grow appends n fresh blocks to table, evicting cached content as needed.
// It reports false, changing nothing, when fewer than n blocks are free.
// The blocks are taken first and their old content dropped after, in the
// same order, so that the index probes of several evictions overlap.
func (c *KVCache) Grow(table []int32, n int) ([]int32, bool) {
	if n > c.free {
		return table, false
	}
	from := len(table)
	for i := 0; i < n; i++ {
		b := c.take()
		c.ref[b] = 1
		table = append(table, b)
	}
	if n > 1 {
		c.scratch = c.scratch[:0]
		for _, b := range table[from:] {
			if c.hashed[b] {
				c.scratch = append(c.scratch, c.hash[b])
			}
		}
		c.warm(c.scratch)
	}
	for _, b := range table[from:] {
		if c.hashed[b] {
			c.drop(b)
			c.Evictions++
		}
	}
	return table, true
}

// warm loads the index slots where the hashes in hs live or would go,
// here and at the sink of the worker's KV events, ahead of a loop that
// commits or drops them: a probe of an index larger than the cache is a
// trip to memory, and the trips of one loop then overlap.
func (c *KVCache) warm(hs []uint64) {
	if len(hs) < 2 {
		return
	}
	c.index.warm(hs)
	if w, ok := c.Events.(interface{ warm([]uint64) }); ok {
		w.warm(hs)
	}
}

// Release drops one reference on each block of table, last block first.
func (c *KVCache) Release(table []int32) {
	for i := len(table) - 1; i >= 0; i-- {
		b := table[i]
		c.ref[b]--
		switch {
		case c.ref[b] < 0:
			panic("sim: KV block released more often than acquired")
		case c.ref[b] > 0:
		case c.hashed[b]:
			c.pushTail(b)
		default:
			c.pushHead(b)
		}
	}
}

// Commit records that block b now holds the content named h, making it
// findable. If another block already holds h, b stays anonymous.
func (c *KVCache) Commit(b int32, h uint64) {
	if c.hashed[b] {
		return
	}
	i, held := c.index.find(h, c.hash)
	if held >= 0 {
		return
	}
	c.hash[b], c.hashed[b] = h, true
	c.index.insertAt(i, h, b)
	if c.Events != nil {
		c.Events.Stored(h)
	}
}

func (c *KVCache) drop(b int32) {
	h := c.hash[b]
	c.index.del(h, b)
	c.hashed[b] = false
	if c.Events != nil {
		c.Events.Removed(h)
	}
}

func (c *KVCache) pushTail(b int32) {
	c.blockList.pushTail(b)
	c.free++
}

func (c *KVCache) pushHead(b int32) {
	c.blockList.pushHead(b)
	if c.boundary < 0 {
		c.boundary = b
	}
	c.free++
}

func (c *KVCache) unlink(b int32) {
	if b == c.boundary {
		c.boundary = c.prev[b]
	}
	c.blockList.unlink(b)
	c.free--
}

// Check verifies the pool's internal invariants: the free queue holds
// exactly the unreferenced blocks, and the hash index agrees with blocks.
func (c *KVCache) Check() error {
	grown := int(c.grown)
	inQueue := 0
	for b := c.head; b >= 0; b = c.next[b] {
		if c.ref[b] != 0 {
			return fmt.Errorf("kv: block %d in free queue with %d references", b, c.ref[b])
		}
		inQueue++
		if inQueue > grown {
			return fmt.Errorf("kv: free queue has a cycle")
		}
	}
	inQueue += c.virgin()
	unref := c.virgin()
	for b, r := range c.ref[:grown] {
		if r < 0 {
			return fmt.Errorf("kv: block %d has %d references", b, r)
		}
		if r == 0 {
			unref++
		}
	}
	if inQueue != c.free || unref != c.free {
		return fmt.Errorf("kv: free count %d, queue %d, unreferenced %d", c.free, inQueue, unref)
	}
	hashed := 0
	for _, ok := range c.hashed[:grown] {
		if ok {
			hashed++
		}
	}
	if err := c.index.verify(c.hash[:grown], c.hashed[:grown]); err != nil {
		return err
	}
	if c.index.n != hashed {
		return fmt.Errorf("kv: index holds %d entries, %d blocks are hashed", c.index.n, hashed)
	}
	if c.Used() > c.Capacity() {
		return fmt.Errorf("kv: %d blocks used of %d", c.Used(), c.Capacity())
	}
	return nil
}
