package sim

import (
	"fmt"
	"slices"

	"github.com/routesim/routesim/policy"
)

// Role is what a pool's workers do.
type Role uint8

// Worker roles. RoleAggregated workers prefill and decode their own
// requests (vLLM without disaggregation). RolePrefill and RoleDecode are
// the two halves of disaggregated serving (Dynamo's prefill and decode
// workers): a request's path visits a prefill pool, then a decode pool.
// The engine does not run such a path yet (the KV transfer between them is
// not modelled): a path must be one hop through an aggregated pool.
const (
	RoleAggregated Role = iota
	RolePrefill
	RoleDecode
)

var roleNames = [...]string{"aggregated", "prefill", "decode"}

// String is the role's name.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", r)
}

// Pool is one pool during a run: its workers and the router in front of
// them.
type Pool struct {
	ID   int // its index in Config.Pools
	Role Role
	// Workers are the pool's live, routable worker ids, in increasing
	// order: what its Router's Workers returns. A membership change
	// replaces the slice; it never modifies one handed out.
	Workers []int
	// Router is the pool's router stage: its policy, and the view of the
	// pool's workers the policy is handed.
	Router *Router
}

// Router is a pool's router stage: the pool's policy and the router's
// picture of the pool's workers (its bookkeeping, queue, KV index and busy
// monitor), which is the policy.View the policy sees. Per-worker state is
// indexed by worker id.
type Router struct {
	Policy policy.Policy
	router
}

// Decider decides a request's path through the pools: the ids of the pools
// it visits, in order. Aggregated serving is one hop; disaggregated serving
// is a prefill pool, then a decode pool. Path may read the pools (their
// roles, their routers' views) and must append to dst[:0].
type Decider interface {
	Path(r *policy.Request, pools []Pool, dst []int) []int
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(r *policy.Request, pools []Pool, dst []int) []int

// Path calls f.
func (f DeciderFunc) Path(r *policy.Request, pools []Pool, dst []int) []int { return f(r, pools, dst) }

// Disaggregated is the disaggregated decider: every request visits pool
// Prefill, then pool Decode.
type Disaggregated struct{ Prefill, Decode int }

// Path implements Decider.
func (d Disaggregated) Path(_ *policy.Request, _ []Pool, dst []int) []int {
	return append(dst[:0], d.Prefill, d.Decode)
}

// MemberChange is a membership event: at At, a new worker joins pool Pool
// (it takes the next worker id: the first workers' count plus the joins
// before it, in time order, ties in list order), or, with Leave, worker
// Worker leaves its pool. A change applies after the other events of its
// instant (KindMember fires last).
//
// A leaving worker is deregistered and drained, as Dynamo's graceful
// shutdown does (docs.nvidia.com/dynamo/v1.3.0/user-guides/fault-tolerance/
// graceful-shutdown: endpoints are unregistered from discovery first, the
// worker keeps serving its in-flight requests; v0.9.1's page: endpoints
// invalidated, in-flight requests complete): from At its router no
// longer lists it, so no request is routed to it, and it finishes every
// request it already has (running or waiting in its engine), whose
// bookkeeping the router releases as usual. Dynamo's router also drops the
// worker from its KV index when its generate endpoint is deleted
// (lib/llm/src/kv_router/subscriber.rs @01907396d7d3, remove_worker);
// routesim keeps those entries, which no decision reads once the worker is
// not listed. A joining worker starts empty (cold cache).
type MemberChange struct {
	At     Time
	Pool   int
	Leave  bool
	Worker int
}

// checkMembership reports every problem of the membership changes: each
// must name a pool, a leaving worker must be live then, and a pool keeps
// at least one worker.
func (c *Config) checkMembership() []error {
	var errs []error
	pool := make([]int, 0, c.NumWorkers()) // by id
	live := make([]int, len(c.Pools))
	for p := range c.Pools {
		live[p] = c.Pools[p].N
		for k := 0; k < c.Pools[p].N; k++ {
			pool = append(pool, p)
		}
	}
	gone := map[int]bool{}
	for _, k := range c.membershipOrder() {
		m := c.Membership[k]
		switch {
		case m.At < 0:
			errs = append(errs, fmt.Errorf("membership change %d: time %d < 0", k, m.At))
		case !m.Leave && (m.Pool < 0 || m.Pool >= len(c.Pools)):
			errs = append(errs, fmt.Errorf("membership change %d: no pool %d", k, m.Pool))
		case !m.Leave && len(pool) >= MaxWorkers:
			errs = append(errs, fmt.Errorf("membership change %d: more than %d workers", k, MaxWorkers))
		case !m.Leave:
			pool = append(pool, m.Pool)
			live[m.Pool]++
		case m.Worker < 0 || m.Worker >= len(pool) || gone[m.Worker]:
			errs = append(errs, fmt.Errorf("membership change %d: worker %d is not in the cluster at %d", k, m.Worker, m.At))
		case live[pool[m.Worker]] == 1:
			errs = append(errs, fmt.Errorf("membership change %d: worker %d is pool %d's last", k, m.Worker, pool[m.Worker]))
		default:
			gone[m.Worker] = true
			live[pool[m.Worker]]--
		}
	}
	return errs
}

// membershipOrder is the order the changes happen in: by time, ties in
// list order.
func (c *Config) membershipOrder() []int {
	order := make([]int, len(c.Membership))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ta, tb := c.Membership[a].At, c.Membership[b].At
		switch {
		case ta < tb:
			return -1
		case ta > tb:
			return 1
		}
		return 0
	})
	return order
}

// routerConfig is pool p's router-stage settings.
func (c *Config) routerConfig(p int) RouterConfig {
	if rc := c.Pools[p].Router; rc != nil {
		return *rc
	}
	return c.Router
}

// newPools builds every pool's router over the workers built so far.
func (c *cluster) newPools(pol policy.Policy) {
	c.pools = make([]Pool, len(c.cfg.Pools))
	for p := range c.pools {
		pc := &c.cfg.Pools[p]
		ids := make([]int, 0, pc.N)
		for w, q := range c.poolOf {
			if int(q) == p {
				ids = append(ids, w)
			}
		}
		rt := &Router{Policy: pc.Policy}
		if rt.Policy == nil {
			rt.Policy = pol
		}
		rt.router = *newRouter(c.workers, c.cfg.routerConfig(p), c.eng.Now)
		rt.ids = ids
		c.pools[p] = Pool{ID: p, Role: pc.Role, Workers: ids, Router: rt}
	}
}

// rtOf is the router of worker w's pool.
func (c *cluster) rtOf(w int) *Router { return c.pools[c.poolOf[w]].Router }

// member applies membership change k.
func (c *cluster) member(k int32) {
	m := c.cfg.Membership[k]
	if m.Leave {
		c.leave(m.Worker)
	} else {
		c.join(m.Pool)
	}
}

// join adds a worker to pool p: the next id, empty, routable from now.
func (c *cluster) join(p int) {
	pc := &c.cfg.Pools[p]
	w := c.addWorker(p, pc)
	pool := &c.pools[p]
	rt := pool.Router
	rt.grow(c.workers)
	if rt.mon != nil {
		rt.mon.grow(c.workers)
		rt.mon.setLive(w.id, true)
	}
	c.nvml.grow(w)
	pool.Workers = append(slices.Clip(pool.Workers), w.id)
	rt.ids = pool.Workers
	c.drainDue = true // the router queue may dispatch to it
}

// leave deregisters worker id: its router stops listing it; it drains.
func (c *cluster) leave(id int) {
	pool := &c.pools[c.poolOf[id]]
	k := slices.Index(pool.Workers, id)
	if k < 0 {
		panic(fmt.Sprintf("sim: worker %d left twice", id))
	}
	pool.Workers = slices.Delete(slices.Clone(pool.Workers), k, k+1)
	rt := pool.Router
	rt.ids = pool.Workers
	rt.forgetScans()
	if rt.mon != nil {
		rt.mon.setLive(id, false)
	}
}

// live reports whether worker w is listed by its pool's router.
func (c *cluster) live(w int) bool {
	_, ok := slices.BinarySearch(c.pools[c.poolOf[w]].Workers, w)
	return ok
}

// addWorker builds the next worker (id = the workers so far) of pool p.
func (c *cluster) addWorker(p int, pc *PoolConfig) *worker {
	w := newWorker(len(c.workers), pc.Worker, pc.Profile, &c.reqs)
	w.noise = newStepNoise(c.cfg.Seed, w.id)
	if c.cfg.routerConfig(p).KVAware {
		w.kv.Events = kvSink{c, int32(w.id)}
		if s := c.kvbmSinkFor(w); s != nil {
			w.kv.Events = s
		} else if w.host != nil {
			id := int32(w.id)
			w.host.publish = func(stored bool, h uint64) { c.tierEvent(id, MediumCPU, stored, h) }
		}
	}
	c.workers = append(c.workers, w)
	c.poolOf = append(c.poolOf, int32(p))
	return w
}

// admit sets up pool p's router for an Admitter policy: frozen overlaps
// of parked requests, and the busy monitor when the admission is armed
// (pool 0's reconcile phase from the stream "monitor", pool p's from
// "monitor/p").
func (c *cluster) admit(p int, rt *Router) {
	a, ok := rt.Policy.(policy.Admitter)
	if !ok {
		return
	}
	adm := a.Admission()
	rt.freeze = adm.FreezeParkedOverlap
	if !adm.Armed() {
		return
	}
	phase := Time(0)
	if adm.ReconcileNs > 0 {
		name := "monitor"
		if p > 0 {
			name = fmt.Sprintf("monitor/%d", p)
		}
		phase = Time(Stream(c.cfg.Seed, name).Int64N(adm.ReconcileNs))
	}
	rc := c.cfg.routerConfig(p)
	rt.mon = newMonitor(adm, c.workers, rt.ids, rc.EventPlaneDelay, rc.MetricsLag, phase)
}

// forgetScans drops every router's cached scans (a block buffer was
// recycled).
func (c *cluster) forgetScans() {
	for p := range c.pools {
		c.pools[p].Router.forgetScans()
	}
}

// poolPeak is the most workers pool p has at once over the run.
func (c *Config) poolPeak(p int) int {
	n, peak := c.Pools[p].N, c.Pools[p].N
	pool := make([]int, 0, c.NumWorkers())
	for q := range c.Pools {
		for k := 0; k < c.Pools[q].N; k++ {
			pool = append(pool, q)
		}
	}
	for _, k := range c.membershipOrder() {
		m := c.Membership[k]
		switch {
		case !m.Leave:
			pool = append(pool, m.Pool)
			if m.Pool == p {
				n++
			}
		case m.Worker >= 0 && m.Worker < len(pool) && pool[m.Worker] == p:
			n--
		}
		peak = max(peak, n)
	}
	return peak
}

// path is a request's way through the pools (Decider) and its hop.
type path struct {
	pools []int
	hop   int
}

// poolFor is the pool request i is routed in now: pool 0 without a
// Decider; else its path's current hop, the path decided when the request
// first reaches a router. A path the engine cannot run stops the run
// (ok false).
func (c *cluster) poolFor(i int32) (p int32, ok bool) {
	if c.cfg.Decider == nil {
		return 0, true
	}
	if c.paths == nil {
		c.paths = map[int32]*path{}
	}
	pa := c.paths[i]
	if pa == nil {
		r := c.reqs.at(i)
		c.preq = policy.Request{ID: int(i), InputTokens: r.job.InputTokens, OutputTokens: r.job.OutputTokens, Blocks: r.prompt(), Session: r.job.Session}
		pa = &path{pools: c.cfg.Decider.Path(&c.preq, c.pools, nil)}
		if err := c.checkPath(pa.pools); err != nil {
			c.eng.Stop(fmt.Errorf("sim: request %d: %w", i, err))
			return 0, false
		}
		c.paths[i] = pa
	}
	return int32(pa.pools[pa.hop]), true
}

// routedIn is the pool request i was last routed in (-1: none yet).
func (c *cluster) routedIn(i int32) int32 {
	if c.cfg.Decider == nil {
		return 0
	}
	if pa := c.paths[i]; pa != nil {
		return int32(pa.pools[pa.hop])
	}
	return -1
}

// checkPath says whether the engine can run a request along pools: one
// hop, through an aggregated pool (a prefill→decode path needs the KV
// transfer between the pools, which is not modelled yet).
func (c *cluster) checkPath(pools []int) error {
	if len(pools) == 0 {
		return fmt.Errorf("the decider gave an empty path")
	}
	for _, p := range pools {
		if p < 0 || p >= len(c.pools) {
			return fmt.Errorf("path %v names no pool %d", pools, p)
		}
	}
	if len(pools) > 1 || c.pools[pools[0]].Role != RoleAggregated {
		roles := make([]string, len(pools))
		for k, p := range pools {
			roles[k] = c.pools[p].Role.String()
		}
		return fmt.Errorf("path %v (%v): the engine runs one hop through an aggregated pool; a disaggregated path needs the KV transfer between pools, not modelled yet", pools, roles)
	}
	return nil
}
