// Package report writes a run's results: per-request records and the
// summary as CSV and JSON, an AIPerf-shaped profile_export_aiperf.json, and
// NVML-style GPU samples; callers publish them atomically through
// internal/atomicfile. Package report/parquet writes the same tables as
// Parquet.
//
// # Reading guide
//
//   - requests.go: RequestSchema, the one list of per-request columns
//     every per-request table uses (requests.csv, a sweep's
//     requests.parquet), and NullConvention: a value that does not exist
//     is NULL in Parquet, an empty CSV field, never a marker like -1.
//   - records.go: requests.csv and the summary's flat row (summary.csv).
//   - aiperf.go: the AIPerf 0.8 summary export shape, same metric names,
//     units and percentile keys, so AIPerf tooling reads simulated runs.
//   - nvml.go: the simulated GPU samples as nvml.csv.
//   - servermetrics.go: a run with a KV tier below the GPU also writes
//     server_metrics_export.json, the tiers' traffic under the metric
//     names their servers publish, in AIPerf's server-metrics shape.
//   - rundir.go: a run's output directory (RunDir.Write): every file
//     above plus the manifest, written all at once.
//   - jsonfile.go: WriteJSON, the indented JSON every readable file uses.
//   - decisions.go: DecisionTrace, run's --trace-decisions file (every
//     routing decision, its reason and per-worker scores, as JSON lines).
package report
