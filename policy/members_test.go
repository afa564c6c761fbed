package policy

import (
	"slices"
	"testing"
)

// TestEveryPolicyRoutesAmongListedWorkers: on a view whose live workers
// are sparse ids that change between requests (one joins, one leaves),
// every registered policy dispatches only to a listed worker.
func TestEveryPolicyRoutesAmongListedWorkers(t *testing.T) {
	lists := [][]int{{1, 4, 6}, {1, 4, 6, 7}, {1, 6, 7}, {0, 1, 6, 7, 9}}
	for _, name := range Names() {
		p := mustNew(name, params(3))
		v := newFakeView(10)
		for k := 0; k < 200; k++ {
			v.ids = lists[k/50]
			v.now = int64(k) * 1e7
			b0 := uint64(k%3 + 1) // chained: a hash names its whole prefix
			b1 := b0*1000 + uint64(k%7)
			r := &Request{ID: k, InputTokens: 640, OutputTokens: 10, Blocks: []uint64{b0, b1, b1*100000 + uint64(k)}, Session: []string{"", "a", "b"}[k%3]}
			d := p.Route(r, v)
			if d.Action != Dispatch {
				continue
			}
			if !slices.Contains(v.ids, d.Worker) {
				t.Fatalf("%s, request %d: worker %d, not among %v", name, k, d.Worker, v.ids)
			}
			v.inFlight[d.Worker]++
		}
	}
}

// TestRingKeepsSurvivorsKeys: when a worker leaves, KubeAI's and
// production-stack's hash rings move only the keys it held (a worker's
// points depend on its id alone); the others stay where they were.
func TestRingKeepsSurvivorsKeys(t *testing.T) {
	for _, name := range []string{"prefix-hash", "session-affinity"} {
		p := mustNew(name, params(1))
		v := newFakeView(5)
		route := func(k int) int {
			r := &Request{ID: k, InputTokens: 640, Blocks: []uint64{mix64(7919, uint64(k))}, Session: string(rune('a'+k%26)) + string(rune('a'+k/26))}
			return p.Route(r, v).Worker
		}
		before := make([]int, 300)
		for k := range before {
			before[k] = route(k)
		}
		v.ids = []int{0, 1, 3, 4} // worker 2 left
		moved := 0
		for k, w := range before {
			after := route(k)
			switch {
			case after == 2:
				t.Fatalf("%s: key %d still on worker 2, which left", name, k)
			case w != 2 && after != w:
				t.Errorf("%s: key %d moved from surviving worker %d to %d", name, k, w, after)
			case w == 2:
				moved++
			}
		}
		if moved == 0 {
			t.Errorf("%s: worker 2 held none of 300 keys", name)
		}
	}
}
