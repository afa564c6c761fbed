package policy

import "math/rand/v2"

// fakeView is a hand-built router view: every quantity is given per worker
// (Overlap and NewBlocks ignore the request's blocks).
type fakeView struct {
	block                                 int
	inFlight, prefill, active, newBlocks  []int
	overlap, capacity, engineUsed, budget []int
	queued                                int
	waiting, stored                       []int
	overloaded                            []bool
	now                                   int64
	ids                                   []int // the live workers; nil = all
}

func newFakeView(n int) *fakeView {
	v := &fakeView{block: 64}
	for _, s := range []*[]int{&v.inFlight, &v.prefill, &v.active, &v.newBlocks, &v.overlap, &v.capacity, &v.engineUsed, &v.budget, &v.waiting, &v.stored} {
		*s = make([]int, n)
	}
	v.overloaded = make([]bool, n)
	for w := 0; w < n; w++ {
		v.capacity[w], v.budget[w] = 1000, 2048
	}
	return v
}

// Workers lists the live ids: v.ids, or every worker (the same slice each
// call, as the router's).
func (v *fakeView) Workers() []int {
	if v.ids == nil {
		v.ids = make([]int, len(v.inFlight))
		for w := range v.ids {
			v.ids[w] = w
		}
	}
	return v.ids
}

func (v *fakeView) BlockSize() int                  { return v.block }
func (v *fakeView) InFlight(w int) int              { return v.inFlight[w] }
func (v *fakeView) PrefillTokens(w int) int         { return v.prefill[w] }
func (v *fakeView) ActiveBlocks(w int) int          { return v.active[w] }
func (v *fakeView) NewBlocks(w int, _ []uint64) int { return v.newBlocks[w] }
func (v *fakeView) Overlap(w int, _ []uint64) int   { return v.overlap[w] }
func (v *fakeView) KVCapacity(w int) int            { return v.capacity[w] }
func (v *fakeView) EngineKVUsed(w int) int          { return v.engineUsed[w] }
func (v *fakeView) MaxNumBatchedTokens(w int) int   { return v.budget[w] }
func (v *fakeView) QueuedISLTokens() int            { return v.queued }
func (v *fakeView) EngineWaiting(w int) int         { return v.waiting[w] }
func (v *fakeView) Now() int64                      { return v.now }
func (v *fakeView) Overloaded(w int) bool           { return v.overloaded[w] }
func (v *fakeView) StoredBlocks(w int) int          { return v.stored[w] }
func testRand(seed uint64) *rand.Rand               { return rand.New(rand.NewPCG(seed, 0)) }
func params(seed uint64) Params                     { p := DefaultParams(); p.Rand = testRand(seed); return p }
func mustNew(name string, p Params) Policy {
	pol, err := New(name, p)
	if err != nil {
		panic(err)
	}
	return pol
}
