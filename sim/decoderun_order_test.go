package sim

import (
	"math/rand/v2"
	"testing"
)

// TestFiresAfterNowIsTheEngineOrder: cut decides which step of a run is
// in flight by firesAfterNow; it must agree with the order in which the
// engine pops the step end scheduleStepEnd schedules against the event
// being handled, for every kind and at every tie (time, start, worker).
func TestFiresAfterNowIsTheEngineOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	pick := func(n int) Time { return Time(rng.IntN(n)) }
	for i := 0; i < 100000; i++ {
		cur := Event{At: pick(4), Kind: Kind(rng.IntN(int(KindTimeout) + 1)), Arg: int32(rng.IntN(4))}
		cur.Seq = uint64(rng.IntN(4)) // a scheduling counter, or a step's start
		w, start := rng.IntN(4), pick(4)
		end := start + pick(3)
		c := &cluster{cur: cur}
		c.scheduleStepEnd(&worker{id: w}, start, end)
		step := c.eng.q[0]
		if step == cur {
			continue // the event itself
		}
		q := eventQueue{cur, step}
		if got, want := c.firesAfterNow(w, start, end), q.less(0, 1); got != want {
			t.Fatalf("current %+v, step of worker %d [%d, %d]: firesAfterNow %v, engine pops the step %s", cur, w, start, end, got,
				map[bool]string{true: "after", false: "first"}[want])
		}
	}
}
