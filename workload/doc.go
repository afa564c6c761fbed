// Package workload reads request traces and turns them into arrivals.
//
// # Reading guide
//
//   - mooncake.go: the Mooncake JSONL reader (timestamp ms, input_length,
//     output_length, hash_ids of 512-token blocks) with positioned errors.
//   - filter.go: --max-isl, --skip, --first and --rate-scale, applied in that
//     order; arrivals are re-based so the first kept request arrives at 0,
//     as AIPerf's --fixed-schedule-auto-offset does.
//   - embedded.go: the traces shipped inside the binary (see data/SOURCE.md)
//     and Open, which accepts an embedded name or a file path.
//
// workload imports nothing from the rest of routesim; times are int64
// nanoseconds.
package workload
