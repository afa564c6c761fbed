package sim

// holders is the router's inverted index of in-flight blocks, as Dynamo's
// KvIndexer keeps one tree of blocks with the workers that hold each:
// block hash → the workers holding it with a reference count each, and
// per worker the number of distinct blocks it holds. Updating a count
// scans the block's list: short, except for a prefix every worker holds.
// A routing decision walks the request's blocks once, touching only the
// workers that hold them.
type holders struct {
	lists    blockIndex // hash → list id
	posts    [][]holder // list id → the workers holding the block
	free     []int32    // list ids to reuse
	distinct []int      // per worker: distinct blocks held
}

type holder struct {
	w, count int32
}

func newHolders(workers int) *holders {
	return &holders{lists: newBlockIndex(16), distinct: make([]int, workers)}
}

// held is the number of distinct blocks w holds.
func (h *holders) held(w int) int { return h.distinct[w] }

// of returns the workers holding block b (read-only).
func (h *holders) of(b uint64) []holder {
	if i := h.lists.find(b); i >= 0 {
		return h.posts[h.lists.vals[i]]
	}
	return nil
}

// incr adds one to w's count of block b.
func (h *holders) incr(w int, b uint64) {
	var id int32
	if i := h.lists.find(b); i >= 0 {
		id = h.lists.vals[i]
		list := h.posts[id]
		for k := range list {
			if int(list[k].w) == w {
				list[k].count++
				return
			}
		}
	} else {
		if n := len(h.free); n > 0 {
			id, h.free = h.free[n-1], h.free[:n-1]
		} else {
			id = int32(len(h.posts))
			h.posts = append(h.posts, nil)
		}
		h.lists.put(b, id)
	}
	h.posts[id] = append(h.posts[id], holder{int32(w), 1})
	h.distinct[w]++
}

// decr subtracts one from w's count of block b, dropping b at 0.
func (h *holders) decr(w int, b uint64) {
	i := h.lists.find(b)
	if i >= 0 {
		id := h.lists.vals[i]
		list := h.posts[id]
		for k := range list {
			if int(list[k].w) != w {
				continue
			}
			if list[k].count--; list[k].count > 0 {
				return
			}
			list[k] = list[len(list)-1]
			h.posts[id] = list[:len(list)-1]
			h.distinct[w]--
			if len(list) == 1 {
				h.lists.delSlot(i)
				h.free = append(h.free, id)
			}
			return
		}
	}
	panic("sim: reference count of an untracked block dropped")
}

// prefixScan holds, for one request's blocks and one state of the index,
// every worker's count of the blocks it holds in flight. A decision asks
// it for every worker; the scan computes all of them in one pass over the
// blocks and answers the rest in O(1). Workers touched by no block keep
// zero (epoch stamps, no clearing).
type prefixScan struct {
	first   *uint64 // the blocks scanned: first element and length
	n       int
	version uint64
	epoch   uint32
	stamp   []uint32
	present []int32 // occurrences of the blocks among w's in-flight blocks
}

func newPrefixScan(workers int) *prefixScan {
	return &prefixScan{stamp: make([]uint32, workers), present: make([]int32, workers)}
}

func (s *prefixScan) touch(w int32) {
	if s.stamp[w] != s.epoch {
		s.stamp[w], s.present[w] = s.epoch, 0
	}
}

// valid reports whether the scan is of these blocks at this version.
func (s *prefixScan) valid(blocks []uint64, version uint64) bool {
	return s.n == len(blocks) && s.version == version && (s.n == 0 || s.first == &blocks[0])
}

// run counts, for every worker, the blocks it holds in refs.
func (s *prefixScan) run(blocks []uint64, version uint64, refs *holders) {
	s.n, s.version, s.first = len(blocks), version, nil
	if len(blocks) > 0 {
		s.first = &blocks[0]
	}
	s.epoch++
	if s.epoch == 0 { // wrapped: old stamps could collide
		clear(s.stamp)
		s.epoch = 1
	}
	for _, b := range blocks {
		for _, hd := range refs.of(b) {
			s.touch(hd.w)
			s.present[hd.w]++
		}
	}
}
