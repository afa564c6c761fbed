package sim

import (
	"container/heap"
	"fmt"
)

// Time is a simulated instant or duration in nanoseconds.
type Time int64

// Common durations.
const (
	Microsecond Time = 1_000
	Millisecond Time = 1_000_000
	Second      Time = 1_000_000_000
)

// Seconds converts t to float seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// Ms converts t to float milliseconds.
func (t Time) Ms() float64 { return float64(t) / 1e6 }

// Kind says what an event does.
type Kind uint8

// Event kinds, in the order they fire at equal times: arrivals at one
// instant all land before any worker starts a step, so a burst is batched.
const (
	KindArrival Kind = iota // a request reaches the frontend; Arg = request
	KindRoute               // frontend done, the router decides; Arg = request
	KindStepEnd             // a worker's step finishes; Arg = worker
	KindKick                // an idle worker looks for work; Arg = worker
)

// Event is one scheduled occurrence. Events at the same time fire by Kind,
// then in scheduling order (Seq), so runs are deterministic.
type Event struct {
	At   Time
	Seq  uint64
	Kind Kind
	Arg  int32
}

// Handler reacts to events; it may schedule more through the Engine.
type Handler interface {
	Handle(e Event)
}

// Engine is a discrete-event loop: one heap ordered by (At, Kind, Seq).
// It is single-goroutine by design.
type Engine struct {
	now  Time
	seq  uint64
	q    eventQueue
	done uint64
}

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Processed is the number of events handled so far.
func (e *Engine) Processed() uint64 { return e.done }

// Schedule adds an event. Scheduling in the past is a broken invariant.
func (e *Engine) Schedule(at Time, kind Kind, arg int32) {
	if at < e.now {
		panic(fmt.Sprintf("sim: event kind %d scheduled at %d ns, before now (%d ns)", kind, at, e.now))
	}
	e.seq++
	heap.Push(&e.q, Event{At: at, Seq: e.seq, Kind: kind, Arg: arg})
}

// Run handles events until none are left.
func (e *Engine) Run(h Handler) {
	for e.q.Len() > 0 {
		ev := heap.Pop(&e.q).(Event)
		if ev.At < e.now {
			panic(fmt.Sprintf("sim: time went back from %d to %d ns", e.now, ev.At))
		}
		e.now = ev.At
		e.done++
		h.Handle(ev)
	}
}

type eventQueue []Event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	a, b := &q[i], &q[j]
	if a.At != b.At {
		return a.At < b.At
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Seq < b.Seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(Event)) }
func (q *eventQueue) Pop() any {
	old := *q
	n := len(old) - 1
	ev := old[n]
	*q = old[:n]
	return ev
}
