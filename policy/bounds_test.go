package policy

import (
	"math"
	"strings"
	"testing"
)

// TestEveryNumericParamIsBounded: every float and int parameter has an
// upper bound in ParamList (the one place run, sweep and plan --setting
// validate against), its default lies within it, and Validate refuses a
// value past it, or one that overflowed, naming the parameter.
func TestEveryNumericParamIsBounded(t *testing.T) {
	for _, d := range ParamList {
		if d.Float == nil && d.Int == nil {
			continue
		}
		if !(d.Max > d.Min) || math.IsInf(d.Max, 0) {
			t.Errorf("%s: bounds [%g, %g]: want a finite Max above Min", d.Flag, d.Min, d.Max)
			continue
		}
		if !(d.Default >= d.Min && d.Default <= d.Max) {
			t.Errorf("%s: default %g outside [%g, %g]", d.Flag, d.Default, d.Min, d.Max)
		}
		for _, v := range []float64{d.Max * 2, 1e306, math.MaxInt64} {
			p := DefaultParams()
			switch {
			case d.Float != nil:
				*d.Float(&p) = v
			case v < 1e18:
				*d.Int(&p) = int(v)
			default:
				*d.Int(&p) = math.MaxInt
			}
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), d.Field()+" ") || !strings.Contains(err.Error(), "at most") {
				t.Errorf("%s = %g: error %v, want one naming %s and its bound", d.Flag, v, err, d.Field())
			}
		}
	}
}

// TestKVOverflowingCostsStillPickAWorker: with a prefill scale whose
// costs overflow to +Inf (1e306 × hundreds of blocks), every KV variant,
// at temperature 0 and above, still dispatches to a worker instead of
// answering worker -1 (which the cluster took for a bug).
func TestKVOverflowingCostsStillPickAWorker(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   KV
	}{
		{"kv", KV{Scale: 1e306, Credit: 1}},
		{"kv softmax", KV{Scale: 1e306, Credit: 1, Temperature: 0.5}},
		{"kv excluding overloaded", KV{Scale: 1e306, Credit: 1, Admit: Admission{DecodeBlocksFrac: 1, Gate: ExcludeBusy}}},
		{"kv-backpressure", KV{Scale: 1e306, Credit: 1, Queue: &QueueGate{Threshold: 16}}},
		{"kv NaN scale", KV{Scale: math.NaN(), Credit: 1}},
		{"kv NaN scale softmax", KV{Scale: math.NaN(), Credit: 1, Temperature: 1}},
	} {
		for n := 1; n <= 4; n++ {
			v := newFakeView(n)
			seen := map[int]bool{}
			for i := range 200 {
				k := tc.kv
				k.Rand = testRand(uint64(i))
				v.prefill[i%n] = 64 * i // never all prefill-busy: the gate lets it through
				d := k.Route(&Request{InputTokens: 64 * 300}, v)
				if d.Action != Dispatch || d.Worker < 0 || d.Worker >= n {
					t.Fatalf("%s, %d workers: decision %+v, want a dispatch to one of them", tc.name, n, d)
				}
				seen[d.Worker] = true
			}
			if len(seen) != n {
				t.Errorf("%s, %d workers: chose only %v; workers whose costs all overflowed tie", tc.name, n, seen)
			}
		}
	}
	// A worker whose cost overflowed never beats one whose cost is finite.
	v := newFakeView(3)
	v.prefill = []int{0, 1 << 40, 0}
	v.active = []int{5, 0, 3}
	k := KV{Scale: 1e300, Credit: 0, Rand: testRand(1)}
	if d := k.Route(&Request{InputTokens: 64}, v); d.Worker == 1 {
		t.Errorf("chose the overflowing worker 1: %+v", d)
	}
	// An overloaded worker stays excluded even when the others overflow.
	v = newFakeView(2)
	v.overloaded = []bool{true, false}
	k = KV{Scale: 1e306, Credit: 1, Rand: testRand(1), Admit: Admission{DecodeBlocksFrac: 1, Gate: ExcludeBusy}}
	for i := range 50 {
		v.prefill[1] = i
		if d := k.Route(&Request{InputTokens: 64 * 300}, v); d.Worker != 1 {
			t.Fatalf("chose %d, want 1 (worker 0 is overloaded)", d.Worker)
		}
	}
}
