package workload

import "testing"

// BenchmarkReadTrace: the first 1,000 lines of the embedded conversation
// trace, decompressed, decoded and checked (the fixed cost of a trace
// before any simulation; `run --first 1000` pays it once).
func BenchmarkReadTrace(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Read("conversation", Filter{First: 1000}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamTrace: the same 1,000 requests streamed: the checking
// pass, then every job prepared at block size 64.
func BenchmarkStreamTrace(b *testing.B) {
	for i := 0; i < b.N; i++ {
		wl, err := Stream("conversation", Filter{First: 1000}, 64)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := drain(b, wl); err != nil {
			b.Fatal(err)
		}
	}
}
