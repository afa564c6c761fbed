package scenario

import (
	"strings"
	"testing"
)

// TestPrefixHashRingCheckedWithTheClusterSize: --replication and --n are
// each within their limits, but together a prefix-hash ring of 268 M
// points; the spec is refused before anything runs, naming both.
func TestPrefixHashRingCheckedWithTheClusterSize(t *testing.T) {
	s := Defaults()
	s.Policy, s.Policies.Replication, s.N = "prefix-hash", 1<<16, 4096
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "policy_params.replication 65536 × 4096 workers (n)") {
		t.Fatalf("error %v, want the ring's size naming the replication and the workers", err)
	}
	s.N = 2
	if err := s.Validate(); err != nil {
		t.Errorf("65,536 points per worker on 2 workers: %v", err)
	}
	s.Policy, s.N = "round-robin", 4096 // only prefix-hash builds a ring
	if err := s.Validate(); err != nil {
		t.Errorf("round-robin: %v", err)
	}
}
