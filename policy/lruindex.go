package policy

// lruIndex remembers, per worker, the last capacity block hashes the
// router sent it (an LRU per server, as the Gateway API Inference
// Extension's prefix indexer), and answers which workers hold a hash.
type lruIndex struct {
	capacity int
	holders  map[uint64][]int32 // hash → workers whose LRU holds it
	lrus     []lruList
}

// lruList is one worker's hashes, most recently added first: a doubly
// linked list over slots, with the slot of each hash.
type lruList struct {
	slot       map[uint64]int32
	keys       []uint64
	prev, next []int32
	head, tail int32
	free       []int32 // released slots
	n          int     // hashes held
}

// alloc takes a slot for h (unlinked).
func (l *lruList) alloc(h uint64) int32 {
	var s int32
	if k := len(l.free); k > 0 {
		s, l.free = l.free[k-1], l.free[:k-1]
		l.keys[s] = h
	} else {
		s = int32(len(l.keys))
		l.keys, l.prev, l.next = append(l.keys, h), append(l.prev, -1), append(l.next, -1)
	}
	l.slot[h] = s
	l.n++
	return s
}

// release frees an unlinked slot.
func (l *lruList) release(s int32) {
	delete(l.slot, l.keys[s])
	l.free = append(l.free, s)
	l.n--
}

func newLRUIndex(capacity int) *lruIndex {
	return &lruIndex{capacity: capacity, holders: map[uint64][]int32{}}
}

// grow gives every worker id below n its LRU (a worker joined).
func (ix *lruIndex) grow(n int) {
	for len(ix.lrus) < n {
		ix.lrus = append(ix.lrus, lruList{slot: map[uint64]int32{}, head: -1, tail: -1})
	}
}

// get lists the workers holding h.
func (ix *lruIndex) get(h uint64) []int32 { return ix.holders[h] }

// add records that worker w was sent these hashes, most recent last.
func (ix *lruIndex) add(hashes []uint64, w int) {
	l := &ix.lrus[w]
	for _, h := range hashes {
		if s, ok := l.slot[h]; ok {
			l.unlink(s)
			l.pushFront(s)
			continue
		}
		if l.n >= ix.capacity {
			t := l.tail
			old := l.keys[t]
			l.unlink(t)
			l.release(t)
			ix.holders[old] = removeWorker(ix.holders[old], int32(w))
			if len(ix.holders[old]) == 0 {
				delete(ix.holders, old)
			}
		}
		l.pushFront(l.alloc(h))
		ix.holders[h] = append(ix.holders[h], int32(w))
	}
}

func removeWorker(ws []int32, w int32) []int32 {
	for i, x := range ws {
		if x == w {
			ws[i] = ws[len(ws)-1]
			return ws[:len(ws)-1]
		}
	}
	return ws
}

func (l *lruList) unlink(s int32) {
	p, n := l.prev[s], l.next[s]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
	l.prev[s], l.next[s] = -1, -1
}

func (l *lruList) pushFront(s int32) {
	l.prev[s], l.next[s] = -1, l.head
	if l.head >= 0 {
		l.prev[l.head] = s
	} else {
		l.tail = s
	}
	l.head = s
}
