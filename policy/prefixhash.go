package policy

import (
	"fmt"
	"slices"

	"github.com/routesim/routesim/internal/hashmix"
	"github.com/routesim/routesim/internal/inputerr"
)

// PrefixHash is KubeAI's PrefixHash load balancing: consistent hashing
// with bounded loads (CHWBL) on a hash of the prompt's first
// PrefixCharLength characters (substratusai/kubeai v0.21.0, 2f32ef498da6:
// internal/loadbalancer/balance_chwbl.go, chwblGetAddr line 14,
// chwblLoadOK line 152; defaults api/k8s/v1/model_types.go lines 193–206:
// meanLoadFactor 125, replication 256, prefixCharLength 100). Each worker
// sits Replication times on a ring; a request walks the ring clockwise from
// its key's hash and takes the first worker whose in-flight load is within
// MeanLoadFactor % of the mean load counting this request, (total+1)/N;
// if none is, the first worker met. (Before PR #528, May 2025, the bound
// also added this request to the worker's own load, which no worker meets
// while the cluster carries less than about one request per worker.)
//
// routesim hashes the prompt block that covers the first
// PrefixCharLength/CharsPerToken tokens (its chained hash names the whole
// prefix); a prompt without a full block is keyed by its request ID, as
// distinct text would be. Ring positions come from routesim's hash of the
// worker index, not xxhash of pod names.
type PrefixHash struct {
	PrefixCharLength int
	MeanLoadFactor   float64 // e.g. 1.25
	Replication      int

	ring []ringPoint
	m    members // the workers the ring holds
}

type ringPoint struct {
	hash uint64
	w    int32
}

// MaxRingPoints bounds PrefixHash's ring, workers × Replication points:
// 4 Mi points, 64 MiB, built in well under a second. The default 256 points
// per worker fit the most workers a run may have (4,096: 1 Mi points);
// 4,096 workers at the largest replication, 65,536, would be 268 M points
// (4.3 GB and minutes of sorting).
const MaxRingPoints = 1 << 22

// CheckWorkers says whether the ring for n workers fits MaxRingPoints,
// naming the replication and the workers if not.
func (p *PrefixHash) CheckWorkers(n int) error {
	if n < 1 || p.Replication <= MaxRingPoints/n {
		return nil
	}
	return inputerr.Fieldf("policy_params.replication", "%d × %d workers (`n`) would put %d points on the hash ring, more than the %d it may hold: at %d workers, use at most %d",
		p.Replication, n, int64(p.Replication)*int64(n), MaxRingPoints, n, MaxRingPoints/n)
}

// Route walks the ring from the prompt's key. The ring holds the live
// workers: rebuilt when they change, as KubeAI adds and removes a pod's
// points when its endpoints change (balance_chwbl.go @08e69e54f9c7
// chwblAddEndpoint, chwblRemoveEndpoint; a worker's points depend only on
// its id, so the others' stay put).
func (p *PrefixHash) Route(r *Request, v View) Decision {
	ws := v.Workers()
	n := len(ws)
	if p.m.sync(ws) {
		p.ring = buildRing(ws, p.Replication, 0x6b75626561690000) // "kubeai"
	}
	key := p.key(r, v.BlockSize())
	total := 0
	for _, w := range ws {
		total += v.InFlight(w)
	}
	start := ringSearch(p.ring, key)
	for i := range p.ring {
		w := int(p.ring[(start+i)%len(p.ring)].w)
		if loadOK(v.InFlight(w), total, n, p.MeanLoadFactor) {
			return Decision{Worker: w, Reason: fmt.Sprintf("ring: %d points past the key", i)}
		}
	}
	w := int(p.ring[start].w)
	return Decision{Worker: w, Reason: "ring: every worker over the load bound, first one"}
}

// key is the ring key of r: the hash of the block that covers its first
// PrefixCharLength characters (its last block if the prompt is shorter,
// its first if the length is below one token), or, without a full block,
// its ID. The rounding up cannot overflow for any length.
func (p *PrefixHash) key(r *Request, blockSize int) uint64 {
	if len(r.Blocks) == 0 {
		return mix64(0x7072656669780000, uint64(r.ID)) // distinct text
	}
	tokens := ceilDiv(max(p.PrefixCharLength, 1), CharsPerToken)
	k := min(ceilDiv(tokens, blockSize), len(r.Blocks))
	return r.Blocks[k-1]
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0, without the overflow of (a+b−1)/b.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// loadOK is CHWBL's bound: the worker's load may not exceed factor × the
// mean load with the new request counted (chwblLoadOK).
func loadOK(load, total, n int, factor float64) bool {
	if total == 0 {
		return true
	}
	return float64(load) <= float64(total+1)/float64(n)*factor
}

// buildRing places replicas points per worker of ws, sorted by hash.
func buildRing(ws []int, replicas int, seed uint64) []ringPoint {
	ring := make([]ringPoint, 0, len(ws)*replicas)
	for _, w := range ws {
		for k := 0; k < replicas; k++ {
			ring = append(ring, ringPoint{mix64(mix64(seed, uint64(w)+1), uint64(k)+1), int32(w)})
		}
	}
	slices.SortFunc(ring, func(a, b ringPoint) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return int(a.w - b.w)
	})
	return ring
}

// ringSearch returns the first point at or after h, wrapping around.
func ringSearch(ring []ringPoint, h uint64) int {
	i, _ := slices.BinarySearchFunc(ring, h, func(p ringPoint, h uint64) int {
		switch {
		case p.hash < h:
			return -1
		case p.hash > h:
			return 1
		}
		return 0
	})
	if i == len(ring) {
		return 0
	}
	return i
}

// mix64 is routesim's hash combiner (the one the engine chains blocks with).
func mix64(h, v uint64) uint64 { return hashmix.Mix(h, v) }

// stringHash is FNV-1a of s.
func stringHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
