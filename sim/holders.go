package sim

import "slices"

// holders is the router's inverted index of the blocks the workers
// reported stored, as Dynamo's KvIndexer keeps one tree of blocks with the
// workers that hold each: block hash → the set of workers holding it. Most
// blocks have one holder: it lives in the hash slot itself (aux = worker,
// val = 1), so neither a lookup nor an insert touches other memory; a block
// with several holders keeps their ids in a list (val = listTag + list
// id). Adding or removing a holder scans the block's list: short, except
// for a prefix every worker holds. A routing decision walks the request's
// blocks once, touching only the workers that hold them.
type holders struct {
	lists blockIndex // hash → inline holder, or list id
	posts [][]int32  // list id → the workers holding the block
	free  []int32    // list ids to reuse
	one   [1]int32   // of's answer for an inline holder
}

// listTag marks a slot value as a list id; 1 marks an inline holder.
const listTag = 1 << 30

func newHolders() *holders { return &holders{lists: newBlockIndex(16)} }

// of returns the workers holding block b (read-only, valid until the next
// call).
func (h *holders) of(b uint64) []int32 { return h.at(h.lists.find(b)) }

// at returns the workers holding the block in slot i (none for i < 0).
func (h *holders) at(i int) []int32 {
	if i < 0 {
		return nil
	}
	s := &h.lists.slots[i]
	if s.val < listTag {
		h.one[0] = s.aux
		return h.one[:]
	}
	return h.posts[s.val-listTag]
}

// add records that w holds block b (once, however often it is told) and
// reports whether it is new. One probe of the hash table finds b for both
// the check and the insert.
func (h *holders) add(w int, b uint64) bool {
	i, found := h.lists.lookup(b)
	if !found {
		h.lists.slots[h.lists.insertAt(i, b, 1)].aux = int32(w)
		return true
	}
	s := &h.lists.slots[i]
	if s.val < listTag {
		if int(s.aux) == w {
			return false
		}
		var id int32
		if n := len(h.free); n > 0 {
			id, h.free = h.free[n-1], h.free[:n-1]
		} else {
			id = int32(len(h.posts))
			h.posts = append(h.posts, nil)
		}
		h.posts[id] = append(h.posts[id][:0], s.aux, int32(w))
		s.val = listTag + id
		return true
	}
	id := s.val - listTag
	list := h.posts[id]
	if slices.Contains(list, int32(w)) {
		return false
	}
	h.posts[id] = append(list, int32(w))
	return true
}

// remove forgets that w holds block b, if it did, and reports whether it
// did.
func (h *holders) remove(w int, b uint64) bool {
	i := h.lists.find(b)
	if i < 0 {
		return false
	}
	s := &h.lists.slots[i]
	if s.val < listTag {
		if int(s.aux) == w {
			h.lists.delSlot(i)
			return true
		}
		return false
	}
	id := s.val - listTag
	list := h.posts[id]
	k := slices.Index(list, int32(w))
	if k < 0 {
		return false
	}
	list[k] = list[len(list)-1]
	list = list[:len(list)-1]
	h.posts[id] = list
	if len(list) == 1 { // back inline
		s.aux, s.val = list[0], 1
		h.posts[id] = list[:0]
		h.free = append(h.free, id)
	}
	return true
}

// scanKey names what a cached scan is of (one request's blocks, by the
// address of the first and their count, at one version of an index) and
// numbers the scans: a scan marks the workers it touched with its epoch,
// so a new scan clears nothing (but after a wrap of the counter).
type scanKey struct {
	first   *uint64
	n       int
	version uint64
	epoch   uint32
}

// valid reports whether the scan is of these blocks at this version.
func (k *scanKey) valid(blocks []uint64, version uint64) bool {
	return k.n == len(blocks) && k.version == version && (k.n == 0 || k.first == &blocks[0])
}

// begin starts a scan of blocks at version: a new epoch. It reports
// whether the epoch counter wrapped, when the scan must clear the marks
// earlier scans left, which could pass for its own.
func (k *scanKey) begin(blocks []uint64, version uint64) (wrapped bool) {
	k.n, k.version, k.first = len(blocks), version, nil
	if len(blocks) > 0 {
		k.first = &blocks[0]
	}
	if k.epoch++; k.epoch == 0 {
		k.epoch = 1
		return true
	}
	return false
}

// forget invalidates the scan.
func (k *scanKey) forget() { k.first = nil }

// overlapScan holds, for one request's blocks and one state of the
// stored-block index, every worker's count of leading blocks it holds. Like
// prefixScan it is computed in one pass for all workers: block k advances
// only the workers that matched blocks 0..k-1, and the walk stops at the
// first block that advances none, so it costs the holders of the matched
// prefix, not N. A worker's count and the epoch of the scan that set it
// share one word, so a holder costs one load, one compare and one store:
// a prefix every worker holds makes the walk N holders long per block.
type overlapScan struct {
	scanKey
	matched []uint64 // epoch<<32 | count
}

func newOverlapScan(workers int) *overlapScan {
	return &overlapScan{matched: make([]uint64, workers)}
}

// of is w's overlap in the last scan.
func (s *overlapScan) of(w int) int { return overlapOf(s.matched[w], s.epoch) }

// overlapOf decodes a worker's word of the scan of epoch: its count if
// that scan set it, else 0.
func overlapOf(m uint64, epoch uint32) int {
	if uint32(m>>32) == epoch {
		return int(uint32(m))
	}
	return 0
}

// run computes every worker's overlap with blocks in stored.
func (s *overlapScan) run(blocks []uint64, version uint64, stored *holders) {
	if s.begin(blocks, version) {
		clear(s.matched)
	}
	if len(blocks) == 0 {
		return
	}
	tag := uint64(s.epoch) << 32
	hs := stored.of(blocks[0])
	for _, w := range hs {
		s.matched[w] = tag | 1
	}
	if len(hs) == 0 {
		return
	}
	for k, b := range blocks[1:] {
		want, advanced := tag|uint64(k+1), false
		for _, w := range stored.of(b) {
			if s.matched[w] == want {
				s.matched[w] = want + 1
				advanced = true
			}
		}
		if !advanced {
			return
		}
	}
}

// prefixScan holds, for one request's blocks and one state of the
// in-flight tree, every worker's count of the blocks it holds in flight. A
// decision asks it for every worker; the scan computes all of them in one
// walk down the tree and answers the rest in O(1): a node the request's
// blocks match c blocks of adds c to each of its holders. Workers touched
// by no node keep zero (epoch stamps, no clearing). The walk stops where
// the blocks leave the tree; a request's unique suffix costs one probe.
type prefixScan struct {
	scanKey
	stamp   []uint32 // the epoch of the scan that last touched w
	present []int32  // the blocks among w's in-flight blocks
}

func newPrefixScan(workers int) *prefixScan {
	return &prefixScan{stamp: make([]uint32, workers), present: make([]int32, workers)}
}

// newBlocks is n − w's count in the last scan of n blocks: the blocks not
// among w's in-flight blocks.
func (s *prefixScan) newBlocks(w, n int) int {
	return newOf(n, s.stamp[w], s.epoch, s.present[w])
}

// newOf is n less a worker's count present, if its stamp is the scan's
// epoch (else the scan did not touch it).
func newOf(n int, stamp, epoch uint32, present int32) int {
	if stamp != epoch {
		return n
	}
	return n - int(present)
}

// run counts, for every worker, the blocks it holds in t.
func (s *prefixScan) run(blocks []uint64, version uint64, t *flightTree) {
	if s.begin(blocks, version) {
		clear(s.stamp)
	}
	parent := int32(-1)
	for i := 0; i < len(blocks); {
		id := t.child(parent, blocks[i])
		if id < 0 {
			return
		}
		n := &t.nodes[id]
		c := common(n.blocks, blocks[i:])
		for _, hd := range n.holders {
			if s.stamp[hd.w] != s.epoch {
				s.stamp[hd.w], s.present[hd.w] = s.epoch, 0
			}
			s.present[hd.w] += int32(c)
		}
		if c < len(n.blocks) {
			return
		}
		i += c
		parent = id
	}
}
