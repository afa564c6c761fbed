package suggest

import "testing"

// TestNearest: close typos are suggested, far names are not.
func TestNearest(t *testing.T) {
	known := []string{"max-num-seqs", "max-num-batched-tokens", "policy", "round-robin", "kv", "seed"}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"max-num-seq", "max-num-seqs", true},
		{"max_num_batched_tokens", "max-num-batched-tokens", true},
		{"polcy", "policy", true},
		{"roundrobin", "round-robin", true},
		{"round", "round-robin", true},
		{"sed", "seed", true},
		{"kvv", "kv", true},
		{"zzzzzzzz", "", false},
		{"", "", false},
	} {
		got, ok := Nearest(tc.in, known)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDistance: the Levenshtein distance on a few pairs.
func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0}} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
