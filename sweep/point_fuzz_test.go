package sweep

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/routesim/routesim/internal/sealed"
)

// FuzzReadPoint: no file makes the point reader panic, and what it
// accepts holds together (arrays as long as the requests offered, finite
// values) and reads back the same after re-encoding. Each input is tried
// as given and re-sealed (as a tool rewriting the file would), so the
// checks behind the digest are fuzzed too. Seeds: a point as written and
// the damaged ones of the reported defects.
func FuzzReadPoint(f *testing.F) {
	_, _, path := testPoint(f)
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, reseal := range []bool{false, true} {
		f.Add(edit(f, good, reseal, func(m map[string]any) { summaryOf(m)["ttft_ms"].(map[string]any)["p50"] = 1.0 }))
		f.Add(edit(f, good, reseal, func(m map[string]any) { summaryOf(m)["ttft_ms"].(map[string]any)["p50"] = -5 }))
		f.Add(edit(f, good, reseal, func(m map[string]any) { delete(m, "summary") }))
		f.Add(edit(f, good, reseal, func(m map[string]any) { m["ttft_ms"] = nil }))
		f.Add(edit(f, good, reseal, func(m map[string]any) { delete(m, "ttft_ms") }))
		f.Add(edit(f, good, reseal, func(m map[string]any) { v := m["ttft_ms"].([]any); m["ttft_ms"] = v[:len(v)-1] }))
		f.Add(edit(f, good, reseal, func(m map[string]any) { v := m["arrival_s"].([]any); m["arrival_s"] = v[:1] }))
	}
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"content_digest":"sha256:00","summary":{"ttft_ms":{"count":1e300}}}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(data []byte) {
			r, err := ReadPoint(data, "p.json")
			if err != nil {
				return
			}
			s := &r.Summary
			if len(r.ArrivalS) != s.Offered || len(r.TTFTMs) != s.Offered || s.Completed > s.Offered || s.Completed < 0 {
				t.Fatalf("accepted: %d arrivals, %d TTFTs, %d offered, %d completed", len(r.ArrivalS), len(r.TTFTMs), s.Offered, s.Completed)
			}
			for i := range r.TTFTMs {
				if a, v := r.ArrivalS[i], r.TTFTMs[i]; math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("accepted request %d: arrival %g, TTFT %g", i, a, v)
				}
			}
			b, err := EncodePoint(r)
			if err != nil {
				t.Fatalf("an accepted point does not encode: %v", err)
			}
			if _, err := ReadPoint(b, "p.json"); err != nil {
				t.Fatalf("an accepted point, re-encoded, is refused: %v", err)
			}
		}
		check(data)
		var r Result
		if json.Unmarshal(data, &r) != nil {
			return
		}
		if b, err := sealed.Marshal(r); err == nil {
			check(b)
		}
	})
}
