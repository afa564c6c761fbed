package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestRoundRobinRotates(t *testing.T) {
	p := mustNew("round-robin", params(1))
	v := newFakeView(3)
	v.inFlight = []int{9, 0, 5} // load is ignored
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
	docs := map[string]bool{}
	for _, d := range ParamList {
		docs[d.Flag] = true
		binds := 0
		for _, b := range []bool{d.Float != nil, d.Int != nil, d.String != nil} {
			if b {
				binds++
			}
		}
		if d.Help == "" || d.DefaultText() == "" || binds != 1 {
			t.Errorf("param %s lacks help or default, or binds %d fields", d.Flag, binds)
		}
	}
	for _, name := range Names() {
		e, err := Lookup(name)
		if err != nil || e.Summary == "" || e.New == nil {
			t.Errorf("%s: entry %+v, %v", name, e, err)
		}
		for _, u := range e.Uses {
			if !docs[u] {
				t.Errorf("%s uses undocumented parameter %s", name, u)
			}
		}
		if _, err := New(name, params(1)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New("fastest", params(1)); err == nil || !strings.Contains(err.Error(), "round-robin") {
		t.Errorf("unknown policy error %v should list the known ones", err)
	}
	if _, err := New("kv", Params{}); err == nil {
		t.Error("a policy was built without a random stream")
	}
	bad := params(1)
	bad.RouterTemperature, bad.Scorers = -1, "psychic:1"
	if _, err := New("kv", bad); err == nil || !strings.Contains(err.Error(), "policy_params.router_temperature") || !strings.Contains(err.Error(), "policy_params.scorers") {
		t.Errorf("bad params: %v", err)
	}
}

func TestFuncAdapter(t *testing.T) {
	var p Policy = Func(func(_ *Request, v View) Decision { return Decision{Worker: IDBound(v.Workers()) - 1, Reason: "last"} })
	if d := p.Route(&Request{}, newFakeView(4)); d.Worker != 3 {
		t.Errorf("Func routed to %d", d.Worker)
	}
}

// TestRoundRobinExclusionByRelease: Dynamo v1.2's round-robin rotates over
// every worker (push_router.rs@c8d8e7602573:L497-535); from v1.3 (#9688,
// push_router.rs@e147ceeac056:L694-792), with a threshold set, it rotates
// over the workers the monitor does not report overloaded and refuses
// with 529's message when there are none.
func TestRoundRobinExclusionByRelease(t *testing.T) {
	v := newFakeView(3)
	v.overloaded = []bool{false, true, false}
	route := func(version string, threshold float64, n int) []int {
		p := params(1)
		p.DynamoVersion, p.ActiveDecodeBlocksThreshold = version, threshold
		pol := mustNew("round-robin", p)
		var got []int
		for range n {
			d := pol.Route(&Request{}, v)
			if d.Action != Dispatch {
				got = append(got, -1)
				continue
			}
			got = append(got, d.Worker)
		}
		return got
	}
	if got := route("1.2.0", 0.5, 6); !slices.Equal(got, []int{0, 1, 2, 0, 1, 2}) {
		t.Errorf("v1.2: %v, want every worker in turn", got)
	}
	if got := route("1.4.0", 0.5, 4); slices.Contains(got, 1) || slices.Contains(got, -1) {
		t.Errorf("v1.4 with a threshold: %v, want worker 1 skipped", got)
	}
	if got := route("1.4.0", -1, 6); !slices.Equal(got, []int{0, 1, 2, 0, 1, 2}) {
		t.Errorf("v1.4 without a threshold (its default): %v, want every worker", got)
	}
	v.overloaded = []bool{true, true, true}
	p := params(1)
	p.DynamoVersion, p.ActiveDecodeBlocksThreshold = "1.4.0", 0.5
	if d := mustNew("round-robin", p).Route(&Request{}, v); d.Action != RejectBusy || d.Reason != "Service temporarily overloaded" {
		t.Errorf("v1.4, all overloaded: %+v", d)
	}
	if d := mustNew("random", p).Route(&Request{}, v); d.Action != RejectBusy {
		t.Errorf("random, v1.4, all overloaded: %+v", d)
	}
}
