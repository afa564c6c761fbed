package sim

// reqStore holds the run's requests in fixed-size pages, so a pointer to a
// request stays valid while closed-loop clients add requests mid-run.
type reqStore struct {
	pages []*reqPageOf // fixed-size arrays: at's index within a page needs no bounds check
	n     int
	spare [][]uint64 // recycled block buffers of ended requests
	// recycled is called when a block buffer returns to spare (the
	// router forgets scans that named it).
	recycled func()
}

const (
	reqPageBits = 10
	reqPage     = 1 << reqPageBits
)

// reqPageOf is one page of requests.
type reqPageOf [reqPage]reqState

func (s *reqStore) at(i int32) *reqState {
	u := uint32(i)
	return &s.pages[u>>reqPageBits][u&(reqPage-1)]
}

func (s *reqStore) len() int { return s.n }

// add appends a request and returns its index.
func (s *reqStore) add(r reqState) int32 {
	if s.n%reqPage == 0 {
		s.pages = append(s.pages, new(reqPageOf))
	}
	i := int32(s.n)
	*s.at(i) = r
	s.n++
	return i
}

// expand gives r its block hashes: the job's own, or, for a job in compact
// form, its Chains expanded into a recycled buffer.
func (s *reqStore) expand(r *reqState, blockSize int) {
	if r.blocks != nil || r.job.Chains == nil {
		return
	}
	var buf []uint64
	if n := len(s.spare); n > 0 {
		buf, s.spare = s.spare[n-1], s.spare[:n-1]
	}
	r.blocks, r.pooled = r.job.AppendBlocks(buf[:0], blockSize), true
}

// release recycles r's expanded blocks; r must not be touched by a step
// any more.
func (s *reqStore) release(r *reqState) {
	if !r.pooled {
		return
	}
	s.spare = append(s.spare, r.blocks)
	r.blocks, r.pooled = nil, false
	if s.recycled != nil {
		s.recycled()
	}
}
