// Package sweep runs many independent simulations — a grid of cluster
// sizes, policies, seeds and rate scales — in parallel, and finds where
// policies cross over.
//
// # Reading guide
//
//   - grid.go: --n ranges ("2..16", "2..16:2", "2,4,8"), the grid's fixed
//     point order, and shards.
//   - runner.go: the worker pool. Each finished point is written atomically
//     to DIR/points/KEY.json; a re-run skips points already there, so an
//     interrupted sweep loses nothing finished, and results are always read
//     back from those files in grid order, so output is identical for any
//     number of jobs or shards.
//   - point.go: a point file is sealed (it carries the SHA-256 of its
//     content) and checked whenever it is read back: by a resumed sweep, a
//     merge or a replot. One that was edited or damaged, or does not hold
//     together, is an error naming the file and the field.
//   - manifest.go, dir.go: a sweep's directory. Manifest is everything that
//     determines the results (its Digest is in every point file);
//     manifest.json and shard.json are sealed like the points.
//   - merge.go: ReadShards gathers a split sweep's shard directories into
//     one, checking that they are one whole sweep, before anything is
//     written.
//   - tables.go: WriteOutputs, the directory's tables (summary.csv and
//     .parquet, requests.parquet, crossover.json, the manifest); every
//     table starts with the point's coordinates (AxisNames).
//   - crossover.go: the smallest N at which one policy stops beating another
//     on a metric, with a bootstrap confidence interval over seeds.
//
// Parallelism lives here, across runs; each run is single-goroutine.
package sweep
