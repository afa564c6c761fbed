package workload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadEqualsOpenThenApply: reading with a filter gives exactly what
// filtering the whole trace gives, for the embedded traces and a range
// of filters.
func TestReadEqualsOpenThenApply(t *testing.T) {
	for _, name := range EmbeddedNames() {
		whole, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []Filter{
			{}, {First: 1}, {First: 1000}, {Skip: 60, First: 1000, MaxISL: 16384, RateScale: 0.7365},
			{MaxISL: 4000, Skip: 7}, {First: 50, Repeat: 3}, {Skip: 100, First: 10, RateScale: 4, Repeat: 2},
		} {
			got, err := Read(name, f)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, f, err)
			}
			cp := &Trace{Name: whole.Name, Requests: append([]Request(nil), whole.Requests...)}
			want, err := cp.Apply(f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %+v: Read and Open+Apply differ (%d vs %d requests)", name, f, len(got.Requests), len(want.Requests))
			}
		}
	}
}

// TestReadStopsAtTheWindow: lines after the --first window are not read,
// so a long trace with damage far beyond the window still replays its
// window (and the whole trace still reports the damage).
func TestReadStopsAtTheWindow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	good := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	os.WriteFile(p, []byte(strings.Repeat(good, 5)+"{not json\n"), 0o644)
	if tr, err := Read(p, Filter{First: 3}); err != nil || len(tr.Requests) != 3 {
		t.Errorf("window before the damage: %v", err)
	}
	if _, err := Read(p, Filter{}); err == nil || !strings.Contains(err.Error(), ":6:") {
		t.Errorf("whole trace: %v, want the error at line 6", err)
	}
}

func TestRepeat(t *testing.T) {
	base := &Trace{Name: "t", Requests: []Request{
		{Line: 1, ArrivalNs: 0, InputTokens: 600, OutputTokens: 5, HashIDs: []int64{3, 9}, Session: "a"},
		{Line: 2, ArrivalNs: 2e9, InputTokens: 500, OutputTokens: 5, HashIDs: []int64{4}},
		{Line: 3, ArrivalNs: 4e9, InputTokens: 500, OutputTokens: 5, HashIDs: []int64{3}, Session: "a"},
	}}
	tr, err := base.Apply(Filter{Repeat: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Requests) != 9 {
		t.Fatalf("%d requests, want 9", len(tr.Requests))
	}
	// Span 4 s, mean gap 2 s: copies start 6 s apart.
	for i, want := range []int64{0, 2e9, 4e9, 6e9, 8e9, 10e9, 12e9, 14e9, 16e9} {
		if tr.Requests[i].ArrivalNs != want {
			t.Errorf("request %d at %d ns, want %d", i, tr.Requests[i].ArrivalNs, want)
		}
	}
	seen := map[int64]int{}
	for i, r := range tr.Requests {
		for _, id := range r.HashIDs {
			if c, ok := seen[id]; ok && c != i/3 {
				t.Errorf("hash id %d shared by copies %d and %d", id, c, i/3)
			}
			seen[id] = i / 3
		}
	}
	if tr.Requests[3].Session != "a#1" || tr.Requests[8].Session != "a#2" || tr.Requests[4].Session != "" {
		t.Errorf("sessions %q %q %q", tr.Requests[3].Session, tr.Requests[8].Session, tr.Requests[4].Session)
	}
	if base.Requests[0].HashIDs[0] != 3 {
		t.Error("Repeat changed the source trace's hash ids")
	}
	for _, bad := range []Filter{{Repeat: -1}, {Repeat: MaxRequests + 1}, {Repeat: MaxRequests / 2}} {
		if _, err := base.Apply(bad); err == nil || !strings.Contains(err.Error(), "repeat") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestReadRefusesARateThatOverflows: a rate scale that puts an arrival
// beyond int64 nanoseconds is a rate_scale error, not a negative arrival.
func TestReadRefusesARateThatOverflows(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte(good+`{"timestamp": 1e11, "input_length": 10, "output_length": 2, "hash_ids": [1]}`+"\n"), 0o644)
	tr, err := Read(p, Filter{RateScale: 1e-6})
	if err == nil || !strings.Contains(err.Error(), "rate_scale") {
		t.Errorf("error %v (arrivals %v), want a rate_scale error", err, tr)
	}
}
