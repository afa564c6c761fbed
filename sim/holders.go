package sim

// holders is the router's inverted index of blocks, as Dynamo's KvIndexer
// keeps one tree of blocks with the workers that hold each: block hash →
// the workers holding it with a reference count each, and per worker the
// number of distinct blocks it holds. Most blocks have one holder: it
// lives in the hash slot itself (aux = worker, val = count), so neither a
// lookup nor an insert touches other memory; a block with several holders
// keeps them in a list (val = listTag + list id). Updating a count scans
// the block's list: short, except for a prefix every worker holds. A
// routing decision walks the request's blocks once, touching only the
// workers that hold them.
type holders struct {
	lists    blockIndex // hash → inline holder, or list id
	posts    [][]holder // list id → the workers holding the block
	free     []int32    // list ids to reuse
	distinct []int      // per worker: distinct blocks held
	one      [1]holder  // of's answer for an inline holder
}

// listTag marks a slot value as a list id; smaller values are the inline
// holder's count.
const listTag = 1 << 30

type holder struct {
	w, count int32
}

func newHolders(workers int) *holders {
	return &holders{lists: newBlockIndex(16), distinct: make([]int, workers)}
}

// held is the number of distinct blocks w holds.
func (h *holders) held(w int) int { return h.distinct[w] }

// of returns the workers holding block b (read-only, valid until the next
// call).
func (h *holders) of(b uint64) []holder { return h.at(h.lists.find(b)) }

// at returns the workers holding the block in slot i (none for i < 0).
func (h *holders) at(i int) []holder {
	if i < 0 {
		return nil
	}
	s := &h.lists.slots[i]
	if s.val < listTag {
		h.one[0] = holder{s.aux, s.val}
		return h.one[:]
	}
	return h.posts[s.val-listTag]
}

// incr adds one to w's count of block b.
func (h *holders) incr(w int, b uint64) {
	i, ok := h.lists.lookup(b)
	h.incrAt(i, ok, w, b)
}

// incrAt is incr with b's slot i already probed: b's slot if found, else
// the empty slot where it goes.
func (h *holders) incrAt(i int, found bool, w int, b uint64) {
	if !found {
		h.lists.slots[h.lists.insertAt(i, b, 1)].aux = int32(w)
		h.distinct[w]++
		return
	}
	s := &h.lists.slots[i]
	if s.val < listTag {
		if int(s.aux) == w {
			if s.val++; s.val == listTag {
				panic("sim: block reference count overflow")
			}
			return
		}
		var id int32
		if n := len(h.free); n > 0 {
			id, h.free = h.free[n-1], h.free[:n-1]
		} else {
			id = int32(len(h.posts))
			h.posts = append(h.posts, nil)
		}
		h.posts[id] = append(h.posts[id][:0], holder{s.aux, s.val}, holder{int32(w), 1})
		s.val = listTag + id
		h.distinct[w]++
		return
	}
	id := s.val - listTag
	list := h.posts[id]
	for k := range list {
		if int(list[k].w) == w {
			list[k].count++
			return
		}
	}
	h.posts[id] = append(list, holder{int32(w), 1})
	h.distinct[w]++
}

// decr subtracts one from w's count of block b, dropping b at 0.
func (h *holders) decr(w int, b uint64) {
	i := h.lists.find(b)
	if i < 0 {
		panic("sim: reference count of an untracked block dropped")
	}
	h.decrAt(i, w)
}

// decrAt is decr with the block's slot i already found.
func (h *holders) decrAt(i, w int) {
	s := &h.lists.slots[i]
	if s.val < listTag {
		if int(s.aux) != w {
			panic("sim: reference count of an untracked block dropped")
		}
		if s.val--; s.val == 0 {
			h.lists.delSlot(i)
			h.distinct[w]--
		}
		return
	}
	id := s.val - listTag
	list := h.posts[id]
	for k := range list {
		if int(list[k].w) != w {
			continue
		}
		if list[k].count--; list[k].count > 0 {
			return
		}
		list[k] = list[len(list)-1]
		list = list[:len(list)-1]
		h.posts[id] = list
		h.distinct[w]--
		if len(list) == 1 { // back inline
			s.aux, s.val = list[0].w, list[0].count
			h.posts[id] = list[:0]
			h.free = append(h.free, id)
		}
		return
	}
	panic("sim: reference count of an untracked block dropped")
}

// holdsAt reports whether w holds the block in slot i.
func (h *holders) holdsAt(i, w int) bool {
	for _, hd := range h.at(i) {
		if int(hd.w) == w {
			return true
		}
	}
	return false
}

// add records that w holds block b once (no count): the stored-block
// index. One probe of the hash table finds b for both the check and the
// insert.
func (h *holders) add(w int, b uint64) {
	i, ok := h.lists.lookup(b)
	if !ok || !h.holdsAt(i, w) {
		h.incrAt(i, ok, w, b)
	}
}

// remove forgets that w holds block b, if it did.
func (h *holders) remove(w int, b uint64) {
	if i := h.lists.find(b); h.holdsAt(i, w) {
		h.decrAt(i, w)
	}
}

// scanKey names what a cached scan is of (one request's blocks, by the
// address of the first and their count, at one version of an index) and
// stamps the workers it touched with its epoch, so a new scan clears
// nothing.
type scanKey struct {
	first   *uint64
	n       int
	version uint64
	epoch   uint32
	stamp   []uint32
}

// valid reports whether the scan is of these blocks at this version.
func (k *scanKey) valid(blocks []uint64, version uint64) bool {
	return k.n == len(blocks) && k.version == version && (k.n == 0 || k.first == &blocks[0])
}

// begin starts a scan of blocks at version: a new epoch.
func (k *scanKey) begin(blocks []uint64, version uint64) {
	k.n, k.version, k.first = len(blocks), version, nil
	if len(blocks) > 0 {
		k.first = &blocks[0]
	}
	if k.epoch++; k.epoch == 0 { // wrapped: old stamps could collide
		clear(k.stamp)
		k.epoch = 1
	}
}

// forget invalidates the scan.
func (k *scanKey) forget() { k.first = nil }

// overlapScan holds, for one request's blocks and one state of the
// stored-block index, every worker's count of leading blocks it holds. Like
// prefixScan it is computed in one pass for all workers: block k advances
// only the workers that matched blocks 0..k-1, and the walk stops at the
// first block that advances none, so it costs the holders of the matched
// prefix, not N.
type overlapScan struct {
	scanKey
	matched []int32
}

func newOverlapScan(workers int) *overlapScan {
	return &overlapScan{scanKey: scanKey{stamp: make([]uint32, workers)}, matched: make([]int32, workers)}
}

// of is w's overlap in the last scan.
func (s *overlapScan) of(w int) int {
	if s.stamp[w] != s.epoch {
		return 0
	}
	return int(s.matched[w])
}

// run computes every worker's overlap with blocks in stored.
func (s *overlapScan) run(blocks []uint64, version uint64, stored *holders) {
	s.begin(blocks, version)
	for k, b := range blocks {
		advanced := false
		for _, hd := range stored.of(b) {
			switch {
			case k == 0:
				s.stamp[hd.w], s.matched[hd.w] = s.epoch, 1
			case s.stamp[hd.w] == s.epoch && int(s.matched[hd.w]) == k:
				s.matched[hd.w]++
			default:
				continue
			}
			advanced = true
		}
		if !advanced {
			return
		}
	}
}

// prefixScan holds, for one request's blocks and one state of the index,
// every worker's count of the blocks it holds in flight. A decision asks
// it for every worker; the scan computes all of them in one pass over the
// blocks and answers the rest in O(1). Workers touched by no block keep
// zero (epoch stamps, no clearing).
//
// The pass stops at the first block no worker holds in flight: equal
// hashes mean equal prefixes (Job.Blocks), so a worker holding block k of
// a request holds an in-flight request with the same first k+1 blocks,
// and with them blocks 0..k−1; no later block can then be held. A
// request's unique suffix, most of its blocks, costs one probe.
type prefixScan struct {
	scanKey
	present []int32 // occurrences of the blocks among w's in-flight blocks
}

func newPrefixScan(workers int) *prefixScan {
	return &prefixScan{scanKey: scanKey{stamp: make([]uint32, workers)}, present: make([]int32, workers)}
}

func (s *prefixScan) touch(w int32) {
	if s.stamp[w] != s.epoch {
		s.stamp[w], s.present[w] = s.epoch, 0
	}
}

// newBlocks is n − w's count in the last scan of n blocks: the blocks not
// among w's in-flight blocks.
func (s *prefixScan) newBlocks(w, n int) int {
	if s.stamp[w] != s.epoch {
		return n
	}
	return n - int(s.present[w])
}

// run counts, for every worker, the blocks it holds in refs.
func (s *prefixScan) run(blocks []uint64, version uint64, refs *holders) {
	s.begin(blocks, version)
	for _, b := range blocks {
		hs := refs.of(b)
		if len(hs) == 0 {
			return
		}
		for _, hd := range hs {
			s.touch(hd.w)
			s.present[hd.w]++
		}
	}
}
