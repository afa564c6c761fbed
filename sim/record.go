package sim

// Status is how a request ended.
type Status uint8

// Request outcomes. Every arrival ends in exactly one of them.
const (
	StatusPending              Status = iota // not ended (only during a run)
	StatusOK                                 // completed
	StatusRejectedTooLong                    // ISL+OSL over --max-model-len (HTTP 400)
	StatusRejectedBusy                       // router: all workers busy (HTTP 503)
	StatusRejectedBackpressure               // router queue over its bound (HTTP 503)
	StatusFailedTimeout                      // the client gave up (--request-timeout); the engine aborted it
)

// EndStatuses lists every way a request can end other than completing, in
// the order outputs show them (one column each).
var EndStatuses = []Status{StatusRejectedTooLong, StatusRejectedBusy, StatusRejectedBackpressure, StatusFailedTimeout}

var statusNames = [...]string{"pending", "ok", "rejected-too-long", "rejected-busy", "rejected-backpressure", "failed-timeout"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Failed says the request was admitted but did not complete (as opposed
// to refused up front).
func (s Status) Failed() bool { return s == StatusFailedTimeout }

// HTTPCode is the status code a client would see from a Dynamo v1.2
// frontend (RouterConfig.OverloadCode changes the overload code); 0 when
// it saw none (it gave up waiting).
func (s Status) HTTPCode() int {
	switch s {
	case StatusOK:
		return 200
	case StatusRejectedTooLong:
		return 400
	case StatusRejectedBusy, StatusRejectedBackpressure:
		return 503
	}
	return 0
}

// Record is one request's outcome. Times are ns since the trace start; a
// time that was never reached is -1.
type Record struct {
	ID           int
	Line         int // line of the trace file
	Arrival      Time
	Routed       Time // when the router first decided (after the frontend delay)
	Dispatched   Time // when the router sent it to its worker, -1 if never
	QueueNs      Time // time parked in the router queue, -1 if never parked
	Worker       int  // -1 if never dispatched
	FirstToken   Time
	SecondToken  Time
	End          Time // last token, or the rejection time
	InputTokens  int
	OutputTokens int
	CachedTokens int // prompt tokens served from the prefix cache
	Preemptions  int
	Status       Status
	HTTPCode     int    // what the client saw: 200, 400, 503 (529 from Dynamo v1.3), 0 after a time-out
	Reason       string // why it was rejected; empty when ok
	// Attempts lists the rejected attempts that the client retried, oldest
	// first; the final attempt's outcome is Status.
	Attempts []Attempt

	// CachedHostTokens and CachedDiskTokens are the part of CachedTokens
	// loaded from the host and disk KV tiers at the request's first
	// admission (the rest were GPU hits); 0 without such tiers (left out
	// of JSON then, so a sweep's point files without a tier keep their
	// bytes).
	CachedHostTokens int `json:",omitempty"`
	CachedDiskTokens int `json:",omitempty"`
}

// Attempt is one rejected try of a request that was re-sent.
type Attempt struct {
	At     Time
	Status Status
	Reason string
}

// TTFT is the time to first token, or -1.
func (r *Record) TTFT() Time {
	if r.FirstToken < 0 {
		return -1
	}
	return r.FirstToken - r.Arrival
}

// E2E is the request latency (arrival to last token), or -1.
func (r *Record) E2E() Time {
	if r.Status != StatusOK {
		return -1
	}
	return r.End - r.Arrival
}

// ITL is AIPerf's inter-token latency, (E2E − TTFT)/(OSL − 1), or -1 when
// undefined (not completed, or a single output token).
func (r *Record) ITL() float64 {
	if r.Status != StatusOK || r.OutputTokens < 2 {
		return -1
	}
	return float64(r.End-r.FirstToken) / float64(r.OutputTokens-1)
}
