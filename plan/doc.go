// Package plan answers the capacity question behind a sweep: the smallest
// cluster, per routing policy (and engine setting, and traffic level),
// that meets a set of service-level objectives over the offered requests,
// with a stated confidence across seeds and, where the profile has a
// posterior, across its coefficient draws.
//
// A rejected or failed request violates every latency objective (it is
// +∞ in the percentiles over offered requests), so a policy cannot meet a
// TTFT objective by refusing work. The search assumes that a larger
// cluster never does worse: it checks the largest N first, then bisects,
// evaluating at most ⌈log₂ range⌉ + 2 sizes; the size below the answer is
// always one it evaluated and found failing.
//
// # Reading guide
//
//   - slo.go: the objectives and a run's figures against them.
//   - search.go: the bisection (Search) and the full scan (Scan).
//   - driver.go: Driver runs every search of a plan, each size a one-point
//     sweep (the sweep package's Runner) in its case's directory, so a
//     plan resumes and reuses its shards' runs.
//   - output.go: plan.json (Output) and plan.csv (WriteCSV).
package plan
