// Package calib fits step-time profiles (package model) to measured runs by
// re-simulating them.
//
// # Reading guide
//
//   - aiperf.go, nvml.go: readers for AIPerf's profile_export_aiperf.json
//     (summary) and profile_export.jsonl (per request), nvidia-smi CSV and
//     inferscope JSON; every error names the file, line and field, and
//     every reader stops at a size limit (internal/inputerr).
//   - units.go: the AIPerf units routesim converts (ns, us, ms, sec;
//     requests/sec; requests; tokens); any other is refused.
//   - spec.go, specpos.go, options.go: a calibration spec: the measured
//     runs, each with its setup (a scenario.Spec) and its files, and the
//     fit's options; every field range-checked and every problem placed
//     at the spec's line (file:line: runs[0].nvml_window_s: …).
//   - runcheck.go: a run's files checked against its setup: requests
//     counted against those offered, GPU indices against n × tp, NVML
//     sample times against the AIPerf run's window.
//   - problem.go, problem_report.go: Problem{Coefficients, Nuisance,
//     Residuals}, what every measurement source is besides its reader: the
//     one MAP fit (Levenberg–Marquardt over the parameters' logarithms,
//     lm.go's lmMinimize), the one Laplace posterior (posterior.go's
//     assembly; the nuisance marginalised, unfitted coefficients at their
//     prior) and the one report (Solution.Report). A new source is a
//     reader and a function building its Problem.
//   - posterior.go, jacobian.go: the priors, the Laplace posterior's
//     assembly (newPosterior, fittedPosterior) and the central-difference
//     Jacobian and Gram matrix the fits and posteriors share.
//   - errors.go: positioned reader errors and CSV header columns.
//   - measured.go: derived-statistics files (a run's figures with their
//     citation, for data that may not be redistributed).
//   - predict.go: held-out runs predicted with posterior bands.
//   - targets.go: the statistics a fit compares, measured and simulated.
//   - fit.go, search.go, lm.go, linear.go, noise.go: Fit, the spec
//     source's estimator: a per-request regression or a bounded
//     Nelder–Mead search (gonum/optimize) over the step-time coefficients,
//     frontend delay and host overhead, the noise σ (from run-to-run
//     spread), then the MAP polish as a Problem, its Laplace posterior and
//     the power line (least squares).
//   - report.go: the fit report: each statistic measured, simulated, % error.
//   - fitpredict.go: a fit on some runs with the others predicted (bands).
//   - mlenergy*.go: ML.ENERGY steady-state rows: reader, re-simulation,
//     their Problem (MLEnergyProblem), the power line, report.json/txt and
//     the leave-one-out folds.
//   - trtbench*.go: NVIDIA's published trtllm-bench throughput rows (a
//     bounded CSV reader), re-simulated as trtllm-bench runs them
//     (BenchSettings is its max_batch_size/max_num_tokens heuristic), their
//     Problem (TRTBenchProblem: TensorRT-LLM's efficiency terms,
//     model.TRTLLMKernelPrior), predictive bands and report.json/txt.
//   - bench.go, vllmbench.go, lmbench.go, guidellm.go: benchmark clients'
//     load points (vllm bench serve result JSONs, LMBench summary CSVs,
//     GuideLLM JSON reports; docs/readings/bench-formats.md): bounded
//     readers with positioned errors, each point's requests re-drawn or
//     replayed as the client sent them (rate, gamma burstiness, concurrency
//     bound, a user's closed loop) and its statistics as a run's targets.
//   - predtable.go: predictions with their bands, as validate prints them.
//
// calib imports model, sim, scenario and workload; the CLI and validate
// import calib.
//
// Fitting a profile from a directory of AIPerf exports:
//
//	spec, _ := calib.LoadSpec("runs/calib.json")
//	res, _ := calib.Fit(spec, calib.Options{})
//	fmt.Print(res.Report)
package calib
