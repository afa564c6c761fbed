// Package export writes a run's results: per-request records and the
// summary as CSV and JSON, an AIPerf-shaped profile_export_aiperf.json, and
// a manifest, all through Dir, which publishes files only when every one of
// them was written.
//
// # Reading guide
//
//   - dir.go: Dir, atomic publication of an output directory's files.
//   - records.go: requests.csv and the summary's flat row (summary.csv).
//   - aiperf.go: the AIPerf 0.8 summary export shape, same metric names,
//     units and percentile keys, so AIPerf tooling reads simulated runs.
package export
