package policy

import (
	"container/heap"
	"slices"
)

// CharsPerToken converts prompt tokens to the characters that text-keyed
// routers count (SGLang's and Ray's tree sizes, KubeAI's prefix length):
// the Gateway API Inference Extension's averageCharactersPerToken, 4
// (kubernetes-sigs/gateway-api-inference-extension,
// pkg/epp/scheduling/framework/plugins/multi/prefix/plugin.go).
const CharsPerToken = 4

// approxTree is the multi-tenant approximate radix tree that SGLang's
// cache-aware policy keeps (sgl-router/src/tree.rs) and Ray Serve ports
// (prefix_aware/prefix_tree.py): the prompts the router itself sent, not
// the engines' caches. A node is one prompt block; since block hashes are
// chained, a hash names the whole prefix up to it, so the tree is a map
// from hash to node. Each node lists its tenants (workers that were sent a
// prompt through it) with their last access; a tenant on a node is on its
// parent too. Sizes are counted in characters, as upstream.
type approxTree struct {
	index     map[uint64]int32
	nodes     []treeNode
	free      []int32
	chars     []int64 // per worker
	nodeChars int64   // characters one block stands for
	seq       uint64  // access order, to break equal timestamps
}

type treeNode struct {
	parent  int32 // -1 = child of the root
	hash    uint64
	tenants []tenantMark
}

type tenantMark struct {
	w    int32
	kids int32 // children of this node that w is on
	last int64 // last access, ns
	seq  uint64
}

func newApproxTree(blockSize int) *approxTree {
	return &approxTree{index: map[uint64]int32{}, nodeChars: int64(blockSize) * CharsPerToken}
}

// grow makes room for worker ids below n (a worker joined).
func (t *approxTree) grow(n int) { t.chars = grown(t.chars, n) }

func (t *approxTree) mark(n int32, w int) *tenantMark {
	ts := t.nodes[n].tenants
	for i := range ts {
		if ts[i].w == int32(w) {
			return &ts[i]
		}
	}
	return nil
}

// insert records that worker w was sent a prompt with these blocks at now.
func (t *approxTree) insert(blocks []uint64, w int, now int64) {
	parent := int32(-1)
	for _, h := range blocks {
		n, ok := t.index[h]
		if !ok {
			n = t.alloc(h, parent)
		}
		t.seq++
		if m := t.mark(n, w); m != nil {
			m.last, m.seq = now, t.seq
		} else {
			t.nodes[n].tenants = append(t.nodes[n].tenants, tenantMark{w: int32(w), last: now, seq: t.seq})
			t.chars[w] += t.nodeChars
			if parent >= 0 {
				t.mark(parent, w).kids++
			}
		}
		parent = n
	}
}

func (t *approxTree) alloc(h uint64, parent int32) int32 {
	var n int32
	if k := len(t.free); k > 0 {
		n, t.free = t.free[k-1], t.free[:k-1]
		t.nodes[n] = treeNode{parent: parent, hash: h, tenants: t.nodes[n].tenants[:0]}
	} else {
		n = int32(len(t.nodes))
		t.nodes = append(t.nodes, treeNode{parent: parent, hash: h})
	}
	t.index[h] = n
	return n
}

// match walks the blocks down the tree: the number of leading blocks
// present (for any tenant) and the deepest node reached (-1 = none).
func (t *approxTree) match(blocks []uint64) (int, int32) {
	deepest := int32(-1)
	for i, h := range blocks {
		n, ok := t.index[h]
		if !ok {
			return i, deepest
		}
		deepest = n
	}
	return len(blocks), deepest
}

// touch refreshes w's access time from node n up to the root, where w is
// on the path (SGLang's prefix_match does this for the matched tenant).
func (t *approxTree) touch(n int32, w int, now int64) {
	for ; n >= 0; n = t.nodes[n].parent {
		if m := t.mark(n, w); m != nil {
			t.seq++
			m.last, m.seq = now, t.seq
		}
	}
}

// tenants lists the live workers on node n, in worker order (a departed
// worker's marks stay until evicted, but it is never a candidate).
func (t *approxTree) tenants(n int32, dst []int, live *members) []int {
	dst = dst[:0]
	for _, m := range t.nodes[n].tenants {
		if live.has(int(m.w)) {
			dst = append(dst, int(m.w))
		}
	}
	slices.Sort(dst)
	return dst
}

// smallest lists the workers of ws with the fewest characters, in worker
// order.
func (t *approxTree) smallest(dst []int, ws []int) []int {
	dst = dst[:0]
	for _, w := range ws {
		c := t.chars[w]
		switch {
		case len(dst) == 0 || c < t.chars[dst[0]]:
			dst = append(dst[:0], w)
		case c == t.chars[dst[0]]:
			dst = append(dst, w)
		}
	}
	return dst
}

// evict removes, for every worker over maxChars characters, its least
// recently accessed leaves (a node is a leaf for w when no child carries
// w) until it is within maxChars (tree.rs evict_tenant_by_size).
func (t *approxTree) evict(maxChars int64) {
	for w := range t.chars {
		t.shrink(w, maxChars)
	}
}

// removeTenant takes worker w out of the tree (it left), as SGLang's
// router does when a worker is removed (sgl-router/src/policies/
// cache_aware.rs @026f853ba7ae remove_worker → Tree::remove_tenant);
// routesim does the same for Ray's tree.
func (t *approxTree) removeTenant(w int) { t.shrink(w, -1) }

// shrink evicts w's least recently accessed leaves until it holds at
// most maxChars characters (none for maxChars < 0).
func (t *approxTree) shrink(w int, maxChars int64) {
	if t.chars[w] <= maxChars {
		return
	}
	var pq leafHeap
	for n := range t.nodes {
		if m := t.mark(int32(n), w); m != nil && m.kids == 0 {
			pq = append(pq, leafEntry{node: int32(n), last: m.last, seq: m.seq})
		}
	}
	heap.Init(&pq)
	for t.chars[w] > maxChars && pq.Len() > 0 {
		e := heap.Pop(&pq).(leafEntry)
		parent := t.nodes[e.node].parent
		t.drop(e.node, w)
		if parent >= 0 {
			m := t.mark(parent, w)
			if m.kids--; m.kids == 0 {
				heap.Push(&pq, leafEntry{node: parent, last: m.last, seq: m.seq})
			}
		}
	}
}

// drop takes worker w off node n, and the node out of the tree once no
// worker is on it.
func (t *approxTree) drop(n int32, w int) {
	ts := t.nodes[n].tenants
	for i := range ts {
		if ts[i].w == int32(w) {
			ts[i] = ts[len(ts)-1]
			t.nodes[n].tenants = ts[:len(ts)-1]
			break
		}
	}
	t.chars[w] -= t.nodeChars
	if len(t.nodes[n].tenants) == 0 {
		delete(t.index, t.nodes[n].hash)
		t.free = append(t.free, n)
	}
}

type leafEntry struct {
	node int32
	last int64
	seq  uint64
}

// leafHeap orders leaves oldest access first.
type leafHeap []leafEntry

// Len, Less, Swap, Push and Pop implement heap.Interface.
func (h leafHeap) Len() int { return len(h) }
func (h leafHeap) Less(i, j int) bool {
	if h[i].last != h[j].last {
		return h[i].last < h[j].last
	}
	return h[i].seq < h[j].seq
}
func (h leafHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *leafHeap) Push(x any)   { *h = append(*h, x.(leafEntry)) }
func (h *leafHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// held counts the leading blocks worker w was sent (and still has in the
// tree).
func (t *approxTree) held(w int, blocks []uint64) int {
	for i, h := range blocks {
		n, ok := t.index[h]
		if !ok || t.mark(n, w) == nil {
			return i
		}
	}
	return len(blocks)
}
