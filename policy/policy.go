package policy

// Request is what the router knows of a request when it decides.
type Request struct {
	ID           int
	InputTokens  int
	OutputTokens int
	// Blocks are the chained hashes of the prompt's full KV blocks at the
	// workers' block size.
	Blocks []uint64
}

// View is the router's read-only picture of the workers: its own
// bookkeeping, never the engines' true state. Worker indices run from 0 to
// NumWorkers()-1.
type View interface {
	// NumWorkers is the number of workers behind the router.
	NumWorkers() int
	// InFlight is the number of requests the router sent to worker w that
	// have not finished.
	InFlight(w int) int
}

// Decision is a routing outcome. Worker is the chosen index, or Reject when
// the request is refused; Reason explains it and Scores holds per-worker
// scores where the policy computed any (lower is better).
type Decision struct {
	Worker int
	Reason string
	Scores []float64
}

// Reject is the Worker value of a refused request.
const Reject = -1

// Policy routes one request. Implementations may keep state (a rotation
// counter, a random stream) and are used from one goroutine.
type Policy interface {
	Route(r *Request, v View) Decision
}

// Func adapts a function to Policy.
type Func func(r *Request, v View) Decision

// Route calls f.
func (f Func) Route(r *Request, v View) Decision { return f(r, v) }
