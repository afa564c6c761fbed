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

func TestEngineRefusesThePast(t *testing.T) {
	var e Engine
	e.Schedule(10, KindArrival, 0)
	defer func() {
		if recover() == nil {
			t.Error("scheduling before now did not panic")
		}
	}()
	e.Run(backInTime{&e})
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
