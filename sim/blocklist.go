package sim

// blockList is an intrusive doubly linked list of int32 slots, linked by
// slot (-1 = none): the KV cache's free queue of blocks and the CPU tier's
// LRU of slots. Each embeds it and keeps its own bookkeeping around these
// moves (the cache its free count and never-used boundary).
type blockList struct {
	prev, next []int32
	head, tail int32
}

// emptyBlockList is a list with no slot linked.
func emptyBlockList() blockList { return blockList{head: -1, tail: -1} }

// pushTail links s last.
func (l *blockList) pushTail(s int32) {
	l.prev[s], l.next[s] = l.tail, -1
	if l.tail >= 0 {
		l.next[l.tail] = s
	} else {
		l.head = s
	}
	l.tail = s
}

// pushHead links s first.
func (l *blockList) pushHead(s int32) {
	l.prev[s], l.next[s] = -1, l.head
	if l.head >= 0 {
		l.prev[l.head] = s
	} else {
		l.tail = s
	}
	l.head = s
}

// unlink takes s out of the list.
func (l *blockList) unlink(s int32) {
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
