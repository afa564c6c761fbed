package sim

// flightTree is the router's index of in-flight prompt blocks: a radix
// tree of the block sequences of the requests it dispatched (SGLang's
// RadixCache shape, Dynamo's KvIndexer content), whose nodes are runs of
// blocks that the same requests share, each with its holders (worker →
// requests of that worker through the node). A request's blocks are a
// path of whole nodes from the root: booking it splits the node where it
// diverges or ends and adds one leaf for its unique suffix, so a request
// costs its branch points plus sequential compares and copies, not a
// hash-table probe per block. A worker holds a block in flight iff it is
// a holder of the node containing it.
//
// Children are found through one hash table keyed by a node's first block
// (its value: the first of the nodes with that key, chained by same); a
// node's parent disambiguates the nodes on one key, so the tree of
// sequences is exact whatever the blocks are, while chained block hashes
// (Job.Blocks: equal hashes mean equal prefixes) keep every chain one node
// long and make a block's position in the tree its hash's only one (blocks
// that break the promise count once per position, not per hash).
type flightTree struct {
	heads    blockIndex // first block → first node with that key, plus one
	nodes    []ftNode
	free     []int32 // node ids to reuse (their buffers too)
	distinct []int   // per worker: distinct blocks in flight
}

// holder is a worker with the number of its requests through a node.
type holder struct {
	w, count int32
}

// ftNode is a run of blocks shared by the same requests.
type ftNode struct {
	blocks  []uint64
	holders []holder // the workers whose requests pass through, with counts
	parent  int32    // −1 for a child of the root
	same    int32    // next node with the same first block, −1 = none
	total   int32    // requests through the node
}

func newFlightTree(workers int) *flightTree {
	return &flightTree{heads: newBlockIndex(16), distinct: make([]int, workers)}
}

// held is the number of distinct blocks w holds in flight.
func (t *flightTree) held(w int) int { return t.distinct[w] }

// child is the node under parent whose first block is h, or −1.
func (t *flightTree) child(parent int32, h uint64) int32 {
	v, ok := t.heads.get(h)
	if !ok {
		return -1
	}
	id := v - 1
	for id >= 0 && t.nodes[id].parent != parent {
		id = t.nodes[id].same
	}
	return id
}

// common is the length of the common prefix of a and b.
func common(a, b []uint64) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// book adds a request of worker w with these blocks.
func (t *flightTree) book(w int, blocks []uint64) {
	parent := int32(-1)
	for i := 0; i < len(blocks); {
		id := t.child(parent, blocks[i])
		if id < 0 {
			id = t.newNode(parent, blocks[i:])
			t.link(id)
			t.addHolder(id, w)
			return
		}
		c := common(t.nodes[id].blocks, blocks[i:])
		if c < len(t.nodes[id].blocks) {
			id = t.split(id, c)
		}
		t.addHolder(id, w)
		i += c
		parent = id
	}
}

// finish removes a request of worker w with these blocks, booked before.
func (t *flightTree) finish(w int, blocks []uint64) {
	parent := int32(-1)
	for i := 0; i < len(blocks); {
		id := t.child(parent, blocks[i])
		if id < 0 {
			panic("sim: finish of a request the router did not book")
		}
		n := &t.nodes[id]
		if len(n.blocks) > len(blocks)-i {
			panic("sim: finish of a request the router did not book")
		}
		i += len(n.blocks)
		t.dropHolder(id, w)
		if t.nodes[id].total == 0 {
			t.unlink(id)
			t.free = append(t.free, id)
		}
		parent = id
	}
}

// newNode returns a node under parent holding a copy of blocks, no holders.
func (t *flightTree) newNode(parent int32, blocks []uint64) int32 {
	var id int32
	if k := len(t.free); k > 0 {
		id, t.free = t.free[k-1], t.free[:k-1]
	} else {
		id = int32(len(t.nodes))
		t.nodes = append(t.nodes, ftNode{})
	}
	n := &t.nodes[id]
	n.blocks = append(n.blocks[:0], blocks...)
	n.holders = n.holders[:0]
	n.parent, n.same, n.total = parent, -1, 0
	return id
}

// split cuts node id after its first c blocks: a new node takes the
// prefix, the holders and id's place under its parent; id keeps the rest
// (and its children) under the new node. It returns the new node.
func (t *flightTree) split(id int32, c int) int32 {
	p := t.newNode(t.nodes[id].parent, t.nodes[id].blocks[:c])
	n, pn := &t.nodes[id], &t.nodes[p]
	pn.holders = append(pn.holders, n.holders...)
	pn.total = n.total
	t.replace(id, p)
	n.blocks = n.blocks[c:]
	n.parent = p
	t.link(id)
	return p
}

// link puts node id first on its first block's chain.
func (t *flightTree) link(id int32) {
	n := &t.nodes[id]
	i, ok := t.heads.lookup(n.blocks[0])
	if ok {
		n.same = t.heads.slots[i].val - 1
		t.heads.slots[i].val = id + 1
		return
	}
	n.same = -1
	t.heads.insertAt(i, n.blocks[0], id+1)
}

// replace puts node p where node id is on id's chain (same first block).
func (t *flightTree) replace(id, p int32) {
	t.nodes[p].same = t.nodes[id].same
	t.repoint(id, p)
}

// unlink takes node id off its chain.
func (t *flightTree) unlink(id int32) { t.repoint(id, t.nodes[id].same) }

// repoint makes what points at node id on its chain (the table's slot or
// the node before it) point at node to instead (−1: the chain ends there).
func (t *flightTree) repoint(id, to int32) {
	i := t.heads.find(t.nodes[id].blocks[0])
	if t.heads.slots[i].val == id+1 {
		if to < 0 {
			t.heads.delSlot(i)
		} else {
			t.heads.slots[i].val = to + 1
		}
		return
	}
	k := t.heads.slots[i].val - 1
	for t.nodes[k].same != id {
		k = t.nodes[k].same
	}
	t.nodes[k].same = to
}

// addHolder counts one more request of w through node id.
func (t *flightTree) addHolder(id int32, w int) {
	n := &t.nodes[id]
	n.total++
	for k := range n.holders {
		if int(n.holders[k].w) == w {
			n.holders[k].count++
			return
		}
	}
	n.holders = append(n.holders, holder{int32(w), 1})
	t.distinct[w] += len(n.blocks)
}

// dropHolder counts one request of w fewer through node id.
func (t *flightTree) dropHolder(id int32, w int) {
	n := &t.nodes[id]
	for k := range n.holders {
		if int(n.holders[k].w) != w {
			continue
		}
		n.total--
		if n.holders[k].count--; n.holders[k].count == 0 {
			last := len(n.holders) - 1
			n.holders[k] = n.holders[last]
			n.holders = n.holders[:last]
			t.distinct[w] -= len(n.blocks)
		}
		return
	}
	panic("sim: finish of a request the router did not book")
}
