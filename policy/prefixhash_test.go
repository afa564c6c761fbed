package policy

import (
	"math"
	"strings"
	"testing"
)

// TestPrefixHashKeyBlockAtExtremeLengths: the key block is the one that
// covers the first PrefixCharLength characters, the prompt's last block
// when the prompt is shorter, for any length: MaxInt used to overflow the
// rounding up to a negative block index (index out of range).
func TestPrefixHashKeyBlockAtExtremeLengths(t *testing.T) {
	blocks := []uint64{11, 22, 33}
	for _, tc := range []struct {
		chars int
		want  uint64
	}{
		{1, 11}, {256, 11}, {257, 22}, {768, 33}, {769, 33}, // 64-token blocks: 256 characters each
		{maxTokens, 33}, {math.MaxInt, 33}, {math.MaxInt - 1, 33}, {0, 11}, {-5, 11},
	} {
		p := &PrefixHash{PrefixCharLength: tc.chars}
		if got := p.key(&Request{Blocks: blocks}, 64); got != tc.want {
			t.Errorf("prefix_char_length %d: key block %d, want %d", tc.chars, got, tc.want)
		}
		v := newFakeView(3)
		p = &PrefixHash{PrefixCharLength: tc.chars, MeanLoadFactor: 1.25, Replication: 4}
		if d := p.Route(&Request{Blocks: blocks}, v); d.Worker < 0 || d.Worker >= 3 {
			t.Errorf("prefix_char_length %d: decision %+v", tc.chars, d)
		}
	}
}

// TestPrefixHashRingIsBounded: the ring holds workers × replication
// points, so both documented limits at once (4,096 workers, 65,536
// points each) asked for 268 M points (4.3 GB, minutes of sorting). The
// registry refuses such a pair up front, naming both settings, and the
// policy refuses to build it.
func TestPrefixHashRingIsBounded(t *testing.T) {
	e, err := Lookup("prefix-hash")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	p.Replication = 1 << 16
	for _, tc := range []struct {
		n  int
		ok bool
	}{{2, true}, {MaxRingPoints >> 16, true}, {MaxRingPoints>>16 + 1, false}, {4096, false}} {
		err := e.CheckWorkers(p, tc.n)
		if tc.ok != (err == nil) {
			t.Errorf("%d workers × %d: error %v, want ok = %v", tc.n, p.Replication, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "policy_params.replication 65536") || !strings.Contains(err.Error(), "workers (n)")) {
			t.Errorf("%d workers: error %q should name the replication and the workers", tc.n, err)
		}
	}
	// The default replication serves the most workers a run may have.
	if err := e.CheckWorkers(DefaultParams(), 4096); err != nil {
		t.Errorf("default replication at 4,096 workers: %v", err)
	}
	// Other policies keep nothing per worker that grows with a parameter.
	if err := mustLookup(t, "kv").CheckWorkers(p, 4096); err != nil {
		t.Errorf("kv: %v", err)
	}
}

func mustLookup(t *testing.T, name string) Entry {
	t.Helper()
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
