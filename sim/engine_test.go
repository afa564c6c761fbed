package sim

import "testing"

type recorder []Event

func (r *recorder) Handle(e Event) { *r = append(*r, e) }

func TestEngineOrdersByTimeKindSeq(t *testing.T) {
	var e Engine
	e.Schedule(5, KindKick, 1)
	e.Schedule(5, KindArrival, 2)
	e.Schedule(1, KindStepEnd, 3)
	e.Schedule(5, KindArrival, 4)
	var got recorder
	e.Run(&got)
	want := []int32{3, 2, 4, 1}
	for i, ev := range got {
		if ev.Arg != want[i] {
			t.Fatalf("order %v, want args %v", got, want)
		}
	}
	if e.Now() != 5 || e.Processed() != 4 {
		t.Errorf("now %d, processed %d", e.Now(), e.Processed())
	}
}

type backInTime struct{ e *Engine }

func (b backInTime) Handle(ev Event) {
	if ev.Arg == 0 {
		b.e.Schedule(ev.At-1, KindArrival, 1)
	}
}

// TestEngineRefusesThePastAndThePastHorizon: an event before now (an
// overflowed time) or past the horizon stops the run with an error, not a
// panic, and nothing after it is handled.
func TestEngineRefusesThePastAndThePastHorizon(t *testing.T) {
	var e Engine
	e.Schedule(10, KindArrival, 0)
	e.Schedule(20, KindArrival, 5)
	e.Run(backInTime{&e})
	if e.Err() == nil || e.Processed() != 1 {
		t.Errorf("scheduling before now: err %v after %d events", e.Err(), e.Processed())
	}
	var f Engine
	f.Schedule(Horizon+1, KindArrival, 0)
	f.Schedule(-9223372036854775808, KindArrival, 0)
	f.Run(backInTime{&f})
	if f.Err() == nil || f.Processed() != 0 {
		t.Errorf("past the horizon: err %v after %d events", f.Err(), f.Processed())
	}
}

func TestStreamsAreIndependentAndSeeded(t *testing.T) {
	a, b := Stream(1, "router"), Stream(1, "router")
	c, d := Stream(1, "service"), Stream(2, "router")
	x := a.Uint64()
	if x != b.Uint64() {
		t.Error("same seed and name gave different streams")
	}
	if x == c.Uint64() || x == d.Uint64() {
		t.Error("different name or seed gave the same first draw")
	}
}

// TestEngineOrderUnderRandomLoad: events scheduled at random (many at
// equal times and kinds, some while others fire) come out sorted by
// (At, Kind, Seq), whatever the heap's shape.
func TestEngineOrderUnderRandomLoad(t *testing.T) {
	rng := Stream(3, "test")
	var e Engine
	var got recorder
	h := handlerFunc(func(ev Event) {
		got = append(got, ev)
		if len(got) < 20000 && rng.IntN(3) > 0 {
			for k := rng.IntN(3); k >= 0; k-- {
				e.Schedule(ev.At+1+Time(rng.IntN(5)), Kind(rng.IntN(4)), int32(len(got)))
			}
		}
	})
	for i := 0; i < 600; i++ {
		e.Schedule(Time(rng.IntN(50)), Kind(rng.IntN(4)), int32(i))
	}
	e.Run(h)
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.At > b.At || (a.At == b.At && (a.Kind > b.Kind || (a.Kind == b.Kind && a.Seq > b.Seq))) {
			t.Fatalf("event %d %+v fired after %+v", i, b, a)
		}
	}
	if len(got) < 5000 {
		t.Fatalf("only %d events: the test did not load the queue", len(got))
	}
}

type handlerFunc func(Event)

func (f handlerFunc) Handle(e Event) { f(e) }
