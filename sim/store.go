package sim

// reqStore holds the run's requests in fixed-size pages, so a pointer to a
// request stays valid while closed-loop clients add requests mid-run.
type reqStore struct {
	pages [][]reqState
	n     int
}

const (
	reqPageBits = 10
	reqPage     = 1 << reqPageBits
)

func (s *reqStore) at(i int32) *reqState {
	u := uint32(i)
	return &s.pages[u>>reqPageBits][u&(reqPage-1)]
}

func (s *reqStore) len() int { return s.n }

// add appends a request and returns its index.
func (s *reqStore) add(r reqState) int32 {
	if s.n%reqPage == 0 {
		s.pages = append(s.pages, make([]reqState, reqPage))
	}
	i := int32(s.n)
	*s.at(i) = r
	s.n++
	return i
}
