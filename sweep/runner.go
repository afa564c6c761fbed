package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// Result is one finished point: its summary and, for plots, every
// request's arrival and TTFT (-1 = not completed). Its file is sealed and
// checked on every read (point.go).
type Result struct {
	// Key and ManifestDigest say which point of which sweep this is; a
	// point file whose key or digest does not match is refused (or rerun
	// with Runner.RecomputeBad).
	Key            string       `json:"key"`
	ManifestDigest string       `json:"manifest_digest"`
	Point          Point        `json:"point"`
	Summary        sim.Summary  `json:"summary"`
	ArrivalS       []float64    `json:"arrival_s"`
	TTFTMs         []float64    `json:"ttft_ms"`
	Records        []sim.Record `json:"records,omitempty"` // with PerRequest
	// Draws are the point's runs with coefficient sets drawn from the
	// profile's posterior (Runner.Uncertainty; per-worker detail dropped).
	Draws []sim.Summary `json:"draws,omitempty"`
	// Eval and DrawEvals are Runner.Evaluate's answers for the point's run
	// and for each draw (only when Evaluate is set).
	Eval      json.RawMessage   `json:"eval,omitempty"`
	DrawEvals []json.RawMessage `json:"draw_evals,omitempty"`
}

// Runner runs a grid on a base scenario.
type Runner struct {
	Base       scenario.Spec
	Grid       Grid
	Dir        string // points go to Dir/points
	Jobs       int    // parallel runs (≥ 1)
	Shard      Shard
	PerRequest bool // keep every request record in the point files
	// Uncertainty is the number of coefficient draws per point (0 = none):
	// each point also runs that many profiles drawn from the posterior,
	// with the point's seed, and its summary carries their 10–90 % bands.
	Uncertainty int
	// Progress, if set, is called after each point (from one goroutine at
	// a time) with the points done and the points this run must do.
	Progress func(done, total int, p Point)
	// Digest identifies the sweep (a hash of its manifest); every point
	// file carries it. RecomputeBad reruns point files that do not belong
	// (wrong key or digest, unreadable) instead of failing on them.
	Digest       string
	RecomputeBad bool
	// Notice, if set, is told each point file RecomputeBad reruns, and
	// why (a command prints it on stderr).
	Notice func(string)
	// BadPointHint ends the error for a point file that fails its checks
	// (without RecomputeBad): what the user can do ("" = delete the file
	// to recompute the point).
	BadPointHint string
	// Evaluate, if set, measures every run (the point's and each draw's)
	// while its records are at hand, e.g. against service-level
	// objectives; the answers are kept in the point file.
	Evaluate func(res *sim.Result) (json.RawMessage, error)

	prepared map[buildKey]*scenario.Built
}

// Prepare builds every configuration the grid needs, so that a sweep that
// cannot run fails before anything is written. Run calls it if needed.
func (r *Runner) Prepare() error {
	if r.prepared != nil {
		return nil
	}
	b, err := r.builds()
	if err != nil {
		return err
	}
	r.prepared = b
	return nil
}

// PointsDir is where a sweep keeps its finished points.
func PointsDir(dir string) string { return filepath.Join(dir, "points") }

// Run runs every point of the shard not already in Dir, then returns all
// of the shard's results in grid order. On cancellation it stops starting
// points, keeps every finished one, and returns ctx's error.
func (r *Runner) Run(ctx context.Context) ([]Result, error) {
	pdir := PointsDir(r.Dir)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", r.Dir, err)
	}
	var todo, mine []Point
	for i, p := range r.Grid.Points() {
		if !r.Shard.Has(i) {
			continue
		}
		mine = append(mine, p)
		path := filepath.Join(pdir, p.Key()+".json")
		if _, err := os.Stat(path); err != nil {
			todo = append(todo, p)
			continue
		}
		if _, err := readPoint(path, p, r.Digest); err != nil {
			if !r.RecomputeBad {
				hint := r.BadPointHint
				if hint == "" {
					hint = "delete the file to recompute the point"
				}
				return nil, fmt.Errorf("%w (%s)", err, hint)
			}
			if r.Notice != nil {
				r.Notice(fmt.Sprintf("recomputing point %s: %v", p.Key(), err))
			}
			os.Remove(path)
			todo = append(todo, p)
		}
	}
	if err := r.Prepare(); err != nil {
		return nil, err
	}
	builds := r.prepared
	jobs := max(r.Jobs, 1)
	work := make(chan Point)
	errs := make(chan error, jobs)
	var mu sync.Mutex
	done := len(mine) - len(todo)
	var wg sync.WaitGroup
	for j := 0; j < jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := crash.Guard(func() error { return r.runPoint(p, builds) }); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				done++
				if r.Progress != nil {
					r.Progress(done, len(mine), p)
				}
				mu.Unlock()
			}
		}()
	}
	var runErr error
feed:
	for _, p := range todo {
		select {
		case work <- p:
		case <-ctx.Done():
			runErr = ctx.Err()
			break feed
		case runErr = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if runErr == nil {
		select {
		case runErr = <-errs:
		default:
		}
	}
	if runErr != nil {
		return nil, runErr
	}
	return Load(r.Dir, mine, r.Digest)
}

type buildKey struct {
	rate    float64
	policy  string
	slice   int
	arrival int // synthetic req/s (0 = the base's)
}

// builds prepares the workload and config once per (rate scale, policy,
// trace slice).
func (r *Runner) builds() (map[buildKey]*scenario.Built, error) {
	skips := []int{r.Base.Skip}
	if r.Grid.Slices {
		var err error
		if skips, err = SliceSkips(r.Base, r.Grid.Seeds); err != nil {
			return nil, err
		}
	}
	arrivals := r.Grid.Rates
	if len(arrivals) == 0 {
		arrivals = []int{0}
	}
	out := map[buildKey]*scenario.Built{}
	for _, rate := range r.Grid.RateScales {
		for _, pol := range r.Grid.Policies {
			for k, skip := range skips {
				for _, arr := range arrivals {
					s := r.Base
					s.RateScale, s.Policy, s.Skip = rate, pol, skip
					if arr > 0 {
						s.Synthetic.RatePerS = float64(arr)
					}
					b, err := s.Build(nil)
					if err != nil {
						return nil, err
					}
					if len(r.Grid.Ns) > 0 { // the policy at the grid's largest cluster
						if err := b.Entry.CheckWorkers(s.Policies, slices.Max(r.Grid.Ns)); err != nil {
							return nil, err
						}
					}
					for seed := 0; r.Uncertainty > 0 && seed < r.Grid.Seeds; seed++ { // every point's coefficient draws, validated
						if _, _, err := b.Draws(r.Grid.BaseSeed+uint64(seed), r.Uncertainty); err != nil {
							return nil, fmt.Errorf("--uncertainty: %w", err)
						}
					}
					out[buildKey{rate, pol, k, arr}] = b
				}
			}
		}
	}
	return out, nil
}

// SliceSkips spreads the seeds' --first windows evenly over the requests
// the trace has after --max-isl: seed k skips SliceSkips[k] of them.
func SliceSkips(base scenario.Spec, seeds int) ([]int, error) {
	if base.First <= 0 {
		return nil, fmt.Errorf("--slices needs --first (the window each seed replays)")
	}
	tr, err := workload.Open(base.Trace)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, q := range tr.Requests {
		if base.MaxISL == 0 || q.InputTokens <= base.MaxISL {
			total++
		}
	}
	room := total - base.First
	if room < 0 {
		return nil, fmt.Errorf("--slices: %s has %d requests after --max-isl, fewer than --first %d", base.Trace, total, base.First)
	}
	skips := make([]int, seeds)
	for k := range skips {
		if seeds > 1 {
			skips[k] = k * room / (seeds - 1)
		}
	}
	return skips, nil
}

func (r *Runner) runPoint(p Point, builds map[buildKey]*scenario.Built) error {
	slice := 0
	if r.Grid.Slices {
		slice = int(p.Seed - r.Grid.BaseSeed)
	}
	b := builds[buildKey{p.RateScale, p.Policy, slice, p.Rate}]
	run := b.Run(p.Seed)
	run.Config = run.Config.WithN(p.N)
	run.Concurrency = p.Concurrency
	res, _, err := run.Exec()
	if err != nil {
		return fmt.Errorf("point %s: %w", p.Key(), err)
	}
	out := Result{Key: p.Key(), ManifestDigest: r.Digest, Point: p, Summary: sim.Summarize(res)}
	for i := range res.Records {
		rec := &res.Records[i]
		out.ArrivalS = append(out.ArrivalS, rec.Arrival.Seconds())
		t := -1.0
		if rec.Status == sim.StatusOK {
			t = rec.TTFT().Ms()
		}
		out.TTFTMs = append(out.TTFTMs, t)
	}
	if r.PerRequest {
		out.Records = res.Records
	}
	if r.Evaluate != nil {
		if out.Eval, err = r.Evaluate(res); err != nil {
			return fmt.Errorf("point %s: %w", p.Key(), err)
		}
	}
	if r.Uncertainty > 0 {
		var each func(int, *sim.Result)
		var evalErr error
		if r.Evaluate != nil {
			out.DrawEvals = make([]json.RawMessage, r.Uncertainty)
			each = func(i int, res *sim.Result) { // draws run one at a time (jobs = 1)
				e, err := r.Evaluate(res)
				out.DrawEvals[i] = e
				if err != nil && evalErr == nil {
					evalErr = err
				}
			}
		}
		bands, draws, err := run.Bands(r.Uncertainty, 1, each)
		if err == nil {
			err = evalErr
		}
		if err != nil {
			return fmt.Errorf("point %s: --uncertainty: %w", p.Key(), err)
		}
		out.Summary.Uncertainty = bands
		out.Summary.Uncertainty.Place(b.Estimate(), &out.Summary)
		for i := range draws {
			draws[i].Workers, draws[i].GPU.GPUs = nil, nil
		}
		out.Draws = draws
	}
	return writePoint(filepath.Join(PointsDir(r.Dir), p.Key()+".json"), &out)
}

// Load reads the given points' results from dir, in the given order; each
// file must be the point it is named for, of the sweep whose manifest
// digest is digest.
func Load(dir string, points []Point, digest string) ([]Result, error) {
	out := make([]Result, 0, len(points))
	for _, p := range points {
		path := filepath.Join(PointsDir(dir), p.Key()+".json")
		r, err := readPoint(path, p, digest)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("point %s is missing from %s (run its shard, or merge)", p.Key(), dir)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}
