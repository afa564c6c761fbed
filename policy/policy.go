package policy

import "slices"

// Request is what the router knows of a request when it decides.
type Request struct {
	ID           int
	InputTokens  int
	OutputTokens int
	// Blocks are the chained hashes of the prompt's full KV blocks at the
	// workers' block size.
	Blocks []uint64
	// Session is the conversation the request belongs to (a trace's
	// session_id, a closed-loop user); "" = none. Session-affinity routers
	// hash it, as production-stack hashes its --session-key header.
	Session string
	// Parked is true when the request is being retried from the router
	// queue rather than arriving.
	Parked bool
}

// View is the router's read-only picture of its pool's workers: its own
// bookkeeping and what the workers published, never the engines' true
// state. Workers are named by stable ids (see Workers); every per-worker
// method takes one.
type View interface {
	// Workers lists the live, routable worker ids behind the router, in
	// increasing order. An id names one worker for the whole run and is
	// never reused, so per-worker state kept in an array indexed by id (of
	// length IDBound) survives other workers joining and leaving; with a
	// fixed membership the ids are 0..N-1. The view never modifies a
	// slice it returned: a membership change returns a new one. A policy
	// must route only to a listed worker.
	Workers() []int
	// BlockSize is the KV block size in tokens.
	BlockSize() int
	// InFlight is the number of requests the router sent to worker w that
	// have not finished.
	InFlight(w int) int
	// PrefillTokens is the router-tracked uncached prompt tokens of
	// requests on w still waiting for their first token.
	PrefillTokens(w int) int
	// ActiveBlocks is the number of distinct prompt blocks of the requests
	// in flight on w (router bookkeeping).
	ActiveBlocks(w int) int
	// NewBlocks counts the blocks not among w's active blocks.
	NewBlocks(w int, blocks []uint64) int
	// Overlap is the number of leading blocks the router believes cached on
	// w, learnt from w's KV events.
	Overlap(w int, blocks []uint64) int
	// KVCapacity is w's published KV capacity in blocks.
	KVCapacity(w int) int
	// EngineKVUsed is the KV usage in blocks w last published (stale by the
	// metrics lag).
	EngineKVUsed(w int) int
	// MaxNumBatchedTokens is w's published per-step token budget.
	MaxNumBatchedTokens(w int) int
	// QueuedISLTokens is the sum of the full input lengths of the requests
	// parked at the router.
	QueuedISLTokens() int
	// EngineWaiting is the waiting-queue length w last published (vLLM's
	// num_requests_waiting, stale by the metrics lag); 0 unless the
	// policy's registry entry asks for engine metrics.
	EngineWaiting(w int) int
	// Now is the router's clock in nanoseconds since the run began: what a
	// policy with timers (periodic eviction, sliding windows) reads.
	Now() int64
}

// WorkerLoad is the router's picture of one worker for one request: the
// View's per-worker figures a load- or cache-aware score reads.
type WorkerLoad struct {
	Prefill    int // PrefillTokens
	Active     int // ActiveBlocks
	New        int // NewBlocks of the request's blocks
	Overlap    int // Overlap of the request's blocks
	Capacity   int // KVCapacity
	MaxBatched int // MaxNumBatchedTokens
}

// LoadsView is a View that also hands over every worker's WorkerLoad for a
// request's blocks in one call, so a policy scoring all N workers reads an
// array instead of making six interface calls per worker. The result is
// indexed by worker id, of length IDBound(Workers()); entries of ids not
// in Workers are unspecified. dst is reused when it is long enough.
type LoadsView interface {
	View
	Loads(blocks []uint64, dst []WorkerLoad) []WorkerLoad
}

// LoadOf reads worker w's WorkerLoad for blocks from any View.
func LoadOf(v View, w int, blocks []uint64) WorkerLoad {
	return WorkerLoad{
		Prefill: v.PrefillTokens(w), Active: v.ActiveBlocks(w), New: v.NewBlocks(w, blocks),
		Overlap: v.Overlap(w, blocks), Capacity: v.KVCapacity(w), MaxBatched: v.MaxNumBatchedTokens(w),
	}
}

// Loads returns every live worker's WorkerLoad for blocks, indexed by id
// (LoadsView): in one call when v is a LoadsView, else worker by worker.
// dst is reused when long enough.
func Loads(v View, blocks []uint64, dst []WorkerLoad) []WorkerLoad {
	if lv, ok := v.(LoadsView); ok {
		return lv.Loads(blocks, dst)
	}
	ws := v.Workers()
	n := IDBound(ws)
	dst = slices.Grow(dst[:0], n)[:n]
	for _, w := range ws {
		dst[w] = LoadOf(v, w, blocks)
	}
	return dst
}

// IDBound is one past the largest id in ws, a list of worker ids in
// increasing order (View.Workers): the length of an array indexed by id
// that covers them (0 for none). O(1).
func IDBound(ws []int) int {
	if len(ws) == 0 {
		return 0
	}
	return ws[len(ws)-1] + 1
}

// Decision is a routing outcome: what to do (Action) and, to dispatch,
// which worker (an id from View.Workers); Reason explains it and Scores
// holds per-worker costs, indexed by id, where the policy computed any
// (lower is better; +Inf marks an excluded worker or an id not in
// Workers). A policy may reuse Scores' array in its next Route: copy it to
// keep it.
type Decision struct {
	Action Action
	Worker int // the chosen worker, when Action is Dispatch
	Reason string
	Scores []float64
}

// Action is what the router does with a request.
type Action uint8

// Router actions. The zero value dispatches, so Decision{Worker: w} sends
// the request to w.
const (
	// Dispatch sends the request to Decision.Worker.
	Dispatch Action = iota
	// Park holds the request in the router queue until capacity frees.
	Park
	// RejectBusy refuses the request because every worker is busy (HTTP
	// 503); Reason is the message.
	RejectBusy
	// RejectBackpressure refuses a request the router queue cannot take
	// (HTTP 503); Reason is the message.
	RejectBackpressure
)

var actionNames = [...]string{"dispatch", "park", "reject-busy", "reject-backpressure"}

// String is the action's name as decision traces print it.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Rejection messages, as Dynamo words them.
const (
	MsgAllBusy = "All workers are busy, please retry later"
)

// Policy routes one request. Implementations may keep state (a rotation
// counter, a random stream) and are used from one goroutine.
type Policy interface {
	Route(r *Request, v View) Decision
}

// Func adapts a function to Policy.
type Func func(r *Request, v View) Decision

// Route calls f.
func (f Func) Route(r *Request, v View) Decision { return f(r, v) }

// Believer is a policy that keeps its own picture of the workers' caches
// (an approximate index of the prompts it routed, as SGLang's, Ray's,
// llm-d's, AIBrix's and production-stack's routers do). Believed is the
// number of leading blocks it thinks worker w holds: what the policy acts
// on, to set against what the engine really had.
type Believer interface {
	Believed(w int, blocks []uint64) int
}
