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
//   - synthetic.go: an open-loop stream (Poisson or gamma arrivals,
//     lognormal lengths, shared system prompts) drawn as a trace.
//   - prepare.go: Prepare, a trace's 512-token blocks expanded into the
//     engine's jobs (sim.Workload) at the worker's block size; stream.go
//     the same read from the file as a run reaches each arrival, for
//     traces larger than memory.
//
// workload imports sim (for the jobs it prepares) and internal/inputerr;
// times are int64 nanoseconds.
package workload
