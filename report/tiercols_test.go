package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/routesim/routesim/sim"
)

// TestTierColumnsOnlyWithATier: the cached_{gpu,host,disk}_tokens columns
// follow cached_tokens in a tiered run's requests.csv and are absent
// otherwise (a run without a tier keeps its columns byte for byte), and
// they split cached_tokens.
func TestTierColumnsOnlyWithATier(t *testing.T) {
	rec := sim.Record{ID: 0, Line: 1, Routed: 1, Dispatched: 1, QueueNs: -1, FirstToken: 10, SecondToken: 11, End: 20,
		InputTokens: 200, OutputTokens: 2, CachedTokens: 160, CachedHostTokens: 96, CachedDiskTokens: 32, Status: sim.StatusOK, HTTPCode: 200}
	tier := []string{"cached_gpu_tokens", "cached_host_tokens", "cached_disk_tokens"}
	for _, tc := range []struct {
		tiered bool
		want   []string // the tier columns' values, in order; nil: absent
	}{
		{false, nil},
		{true, []string{"32", "96", "32"}},
	} {
		var buf bytes.Buffer
		if err := WriteRequestsCSV(&buf, []sim.Record{rec}, tc.tiered); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head, row := rows[0], rows[1]
		at := slices.Index(head, "cached_tokens")
		for k, name := range tier {
			i := slices.Index(head, name)
			switch {
			case tc.want == nil && i >= 0:
				t.Errorf("tiered=%v: column %s present", tc.tiered, name)
			case tc.want != nil && i != at+1+k:
				t.Errorf("tiered=%v: column %s at %d, want %d (after cached_tokens)", tc.tiered, name, i, at+1+k)
			case tc.want != nil && row[i] != tc.want[k]:
				t.Errorf("tiered=%v: %s = %s, want %s", tc.tiered, name, row[i], tc.want[k])
			}
		}
		if n := len(RequestColumns(tc.tiered)); len(head) != n {
			t.Errorf("tiered=%v: %d columns, want %d", tc.tiered, len(head), n)
		}
	}
	if len(RequestColumns(true))-len(RequestColumns(false)) != len(tier) {
		t.Errorf("the tier columns are not the only Tiered ones")
	}
}
