package policy

import (
	"strings"
	"testing"
)

// fakeView is a hand-built router view.
type fakeView struct{ inFlight []int }

func (v fakeView) NumWorkers() int    { return len(v.inFlight) }
func (v fakeView) InFlight(w int) int { return v.inFlight[w] }

func TestRoundRobinRotates(t *testing.T) {
	p, err := New("round-robin", Params{})
	if err != nil {
		t.Fatal(err)
	}
	v := fakeView{inFlight: []int{9, 0, 5}} // load is ignored
	var got []int
	for i := 0; i < 7; i++ {
		d := p.Route(&Request{ID: i}, v)
		if d.Reason == "" {
			t.Error("decision without a reason")
		}
		got = append(got, d.Worker)
	}
	want := []int{0, 1, 2, 0, 1, 2, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rotation %v, want %v", got, want)
		}
	}
}

func TestRegistryDrivesLookup(t *testing.T) {
	for _, name := range Names() {
		e, err := Lookup(name)
		if err != nil || e.Summary == "" || e.New == nil {
			t.Errorf("%s: entry %+v, %v", name, e, err)
		}
	}
	if _, err := New("fastest", Params{}); err == nil || !strings.Contains(err.Error(), "round-robin") {
		t.Errorf("unknown policy error %v should list the known ones", err)
	}
}

func TestFuncAdapter(t *testing.T) {
	var p Policy = Func(func(_ *Request, v View) Decision { return Decision{Worker: v.NumWorkers() - 1, Reason: "last"} })
	if d := p.Route(&Request{}, fakeView{inFlight: make([]int, 4)}); d.Worker != 3 {
		t.Errorf("Func routed to %d", d.Worker)
	}
}
