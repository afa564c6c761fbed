// Package explore serves routesim explore: a local web page whose
// controls (cluster size, policies and their parameters, Dynamo release,
// load, GPU, model, seeds) re-simulate the trade-off as they move. Every
// configuration is validated and built by the same code as routesim run
// (a Build the command supplies), so the page shows the numbers the
// command prints; points are cached by their run arguments, run on every
// core, and cancelled when a newer request from the page supersedes them.
package explore

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/sim"
)

//go:embed web
var webFS embed.FS

// MaxBody bounds a request body in bytes: a view's settings are a few
// hundred bytes.
const MaxBody = 64 << 10

// Options configure a Server.
type Options struct {
	// Build validates and builds one configuration from routesim run's
	// arguments (required).
	Build Build
	// Base are the arguments every configuration starts with (e.g.
	// --scenario FILE, or the default window's filters).
	Base []string
	// Initial is the view the page opens with.
	Initial Request
	// BaseValues are the base's settings the page may change (gpu,
	// model, tp, dynamo-version, vllm-version), shown as their defaults.
	BaseValues map[string]string
	// Workload is the base scenario's workload (trace, synthetic or
	// sessions): the page offers users for sessions, a rate scale
	// otherwise.
	Workload string
	// CommandLine renders a routesim command as a shell takes it back
	// (nil: the arguments joined by spaces).
	CommandLine func(cmd string, args []string) string
	// Workers is the number of simulations run at once (0 = GOMAXPROCS).
	Workers int
	// CacheSize is the number of finished points kept (0 = 4096).
	CacheSize int
}

// Server is the explorer's HTTP handler and its simulation pool.
type Server struct {
	opt   Options
	slots chan struct{} // one per simulation that may run at once
	cache *cache
	mu    sync.Mutex
	live  map[string]*liveRequest // each client's request in progress
	mux   *http.ServeMux
}

// New returns a server for opt.
func New(opt Options) (*Server, error) {
	if opt.Build == nil {
		return nil, errors.New("explore: no Build")
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.CacheSize <= 0 {
		opt.CacheSize = 4096
	}
	s := &Server{opt: opt, slots: make(chan struct{}, opt.Workers), cache: newCache(opt.CacheSize),
		live: map[string]*liveRequest{}, mux: http.NewServeMux()}
	sub, err := fs.Sub(webFS, "web")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /", http.FileServerFS(sub))
	s.mux.HandleFunc("GET /api/meta", s.meta)
	s.mux.HandleFunc("POST /api/simulate", s.simulate)
	return s, nil
}

// ServeHTTP serves the page, its assets and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
	s.mux.ServeHTTP(w, r)
}

// CheckAddr refuses a listen address off the loopback interface unless
// explicit says the user asked for it (--addr given).
func CheckAddr(addr string, explicit bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if explicit {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q is not a loopback address: pass --addr explicitly to serve beyond this machine", addr)
}

// event is one line of the simulate stream (newline-delimited JSON).
type event struct {
	Type    string  `json:"type"` // plan, point, error, done
	Total   int     `json:"total,omitempty"`
	Cached  int     `json:"cached,omitempty"`
	Done    int     `json:"done,omitempty"`
	Point   *Result `json:"point,omitempty"`
	Error   string  `json:"error,omitempty"`
	Sweep   string  `json:"sweep,omitempty"`
	Elapsed float64 `json:"elapsed_ms,omitempty"`
}

// simulate answers a Request with a stream of events: the plan, each
// point as it finishes (cached ones first), then done. Settings the
// command refuses are a 400 with its error text; a newer request from
// the same client cancels this one.
func (s *Server) simulate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req Request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body over %d bytes", MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	lr := &liveRequest{cancel}
	s.supersede(req.Client, lr)
	defer s.release(req.Client, lr)
	job, err := s.prepare(&req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	s.stream(ctx, job, newStream(w).send, start)
}

// Run answers req as the page's API does, writing the events as JSON
// lines to w; settings the command refuses are returned as the error,
// before anything is written. routesim explore --request runs it (the
// WebAssembly page's simulator, one request per run).
func (s *Server) Run(ctx context.Context, req *Request, w io.Writer) error {
	start := time.Now()
	job, err := s.prepare(req)
	if err != nil {
		return err
	}
	s.stream(ctx, job, (&stream{w: w}).send, start)
	return nil
}

// job is a checked request: its points in order of priority, and the
// detail points it built while checking them.
type job struct {
	req    *Request
	points []point
	pre    map[string]built
}

// prepare checks req and builds its detail points: settings the command
// refuses are refused before anything streams.
func (s *Server) prepare(req *Request) (*job, error) {
	points, err := req.plan(s.opt.Base)
	if err != nil {
		return nil, err
	}
	j := &job{req: req, points: points, pre: map[string]built{}}
	for _, p := range points {
		if !p.Detail {
			break
		}
		if _, ok := s.cache.get(p.key()); ok {
			continue
		}
		b, spec, err := s.opt.Build(p.Args)
		if err != nil {
			return nil, err
		}
		j.pre[p.key()] = built{b, spec}
	}
	return j, nil
}

// stream sends j's events: cached points, the plan, each point as it
// finishes, an error if one failed, and done.
func (s *Server) stream(ctx context.Context, j *job, send func(event), start time.Time) {
	cached := 0
	var todo []point
	for _, p := range j.points {
		if res, ok := s.cache.get(p.key()); ok {
			cached++
			send(event{Type: "point", Point: view(res, p, 0)})
			continue
		}
		todo = append(todo, p)
	}
	send(event{Type: "plan", Total: len(j.points), Cached: cached, Sweep: s.command("sweep", sweepArgs(s.opt.Base, j.req, sizes(j.points)))})
	errText := s.run(ctx, todo, j.pre, func(res *Result, p point) {
		send(event{Type: "point", Point: view(res, p, res.ElapsedMs)})
	})
	if errText != "" {
		send(event{Type: "error", Error: errText})
	}
	send(event{Type: "done", Total: len(j.points), Elapsed: float64(time.Since(start).Microseconds()) / 1e3})
}

// view is res as the page receives it: the per-request series only for
// the detail points.
func view(res *Result, p point, elapsed float64) *Result {
	v := *res
	if !p.Detail {
		v.Series = nil
	}
	v.ElapsedMs = elapsed
	return &v
}

// run computes points on the pool, in order of priority, calling each
// with every result (from one goroutine at a time); it returns the first
// error's text ("" if none, or if ctx was cancelled).
func (s *Server) run(ctx context.Context, points []point, pre map[string]built, each func(*Result, point)) string {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var first string
	report := func(res *Result, p point, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			each(res, p)
		case ctx.Err() == nil && first == "":
			first = fmt.Sprintf("%s: %v", s.command("run", p.Args), err)
		}
	}
feed:
	for _, p := range points {
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			break feed
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-s.slots }()
			res, err := s.point(ctx, p, pre[p.key()])
			report(res, p, err)
		}()
	}
	wg.Wait()
	return first
}

// point returns p's result: cached, computed by another request (waited
// for), or computed here.
func (s *Server) point(ctx context.Context, p point, pre built) (*Result, error) {
	key := p.key()
	for {
		e, mine := s.cache.claim(key)
		if !mine {
			select {
			case <-e.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if e.err != nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, sim.ErrCancelled)) {
				continue // its request was superseded: compute it here
			}
			return e.res, e.err
		}
		var res *Result
		err := crash.Guard(func() error {
			t0 := time.Now()
			run, err := simulate(ctx, s.opt.Build, p, pre)
			if err != nil {
				return err
			}
			res = &Result{N: p.N, Policy: p.Policy, Seed: p.Seed, Summary: sim.Summarize(run), Series: series(run),
				Command: s.command("run", p.Args), ElapsedMs: float64(time.Since(t0).Microseconds()) / 1e3}
			return nil
		})
		s.cache.finish(key, e, res, err)
		return res, err
	}
}

// liveRequest is a client's request in progress.
type liveRequest struct{ cancel context.CancelFunc }

// supersede cancels the client's request in progress, if any, and
// records lr as its current one.
func (s *Server) supersede(client string, lr *liveRequest) {
	if client == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.live[client]; ok {
		old.cancel()
	}
	s.live[client] = lr
}

// release forgets the client's request if lr is still its current one.
func (s *Server) release(client string, lr *liveRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[client] == lr {
		delete(s.live, client)
	}
}

// stream writes events as JSON lines, flushing each.
type stream struct {
	mu sync.Mutex
	w  io.Writer
	f  http.Flusher
}

func newStream(w http.ResponseWriter) *stream {
	f, _ := w.(http.Flusher)
	return &stream{w: w, f: f}
}

func (s *stream) send(e event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(event{Type: "error", Error: err.Error()})
	}
	s.w.Write(append(b, '\n'))
	if s.f != nil {
		s.f.Flush()
	}
}

// command is the routesim command line cmd with args, as a shell takes
// it back (Options.CommandLine, else the arguments joined by spaces).
func (s *Server) command(cmd string, args []string) string {
	if s.opt.CommandLine != nil {
		return s.opt.CommandLine(cmd, args)
	}
	return "routesim " + cmd + " " + strings.Join(args, " ")
}

// sweepArgs are the routesim sweep arguments that compute the request's
// curves.
func sweepArgs(base []string, r *Request, ns []int) []string {
	shared, _ := r.sharedArgs()
	args := slices.Concat(base, shared)
	seen := map[string]bool{}
	for _, pol := range r.Policies {
		kv := r.knobArgs(pol)
		for i := 0; i+1 < len(kv); i += 2 {
			if !seen[kv[i]] {
				seen[kv[i]] = true
				args = append(args, kv[i], kv[i+1])
			}
		}
	}
	sizes := make([]string, len(ns))
	for i, n := range ns {
		sizes[i] = fmt.Sprint(n)
	}
	return append(args, "--n", strings.Join(sizes, ","), "--policy", strings.Join(r.Policies, ","),
		"--seeds", fmt.Sprint(r.Seeds), "--seed", fmt.Sprint(r.Seed))
}

// sizes are the cluster sizes of points, ascending.
func sizes(points []point) []int {
	var ns []int
	for _, p := range points {
		if !slices.Contains(ns, p.N) {
			ns = append(ns, p.N)
		}
	}
	slices.Sort(ns)
	return ns
}
