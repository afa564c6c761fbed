package sim

import (
	"errors"
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

// Kind says what an event does. The engine only orders events by it (at
// equal times, lower kinds fire first); the cluster declares the kinds.
type Kind uint8

// Event is one scheduled occurrence. Events at the same time fire by Kind,
// then by Seq (the scheduling order, or the key ScheduleOrdered gave),
// then by Arg, so runs are deterministic.
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

// Engine is a discrete-event loop: one binary heap ordered by (At, Kind,
// Seq, Arg). It is single-goroutine by design. The heap is typed rather than
// container/heap, whose interface boxing cost one allocation per event.
type Engine struct {
	now  Time
	seq  uint64
	q    eventQueue
	done uint64
	err  error // the first event refused; Run stops at it
	// cancel, if set, is polled every cancelEvery events: once it is
	// closed, Run stops with ErrCancelled.
	cancel <-chan struct{}
	// tick, if set, is called every cancelEvery events (a progress
	// display); it must not touch the run.
	tick func()
}

// ErrCancelled is the reason a run stopped when its Config.Cancel closed.
var ErrCancelled = errors.New("sim: run cancelled")

// cancelEvery is how many events Run handles between polls of its cancel
// channel: a poll costs about what an event does, so polling stays out of
// the profile while a cancelled run still stops within a few thousand
// events.
const cancelEvery = 4096

// Horizon is the latest simulated time an event may have: one year. Inputs
// that push an event past it (an absurd rate, think time or duration) stop
// the run with an error instead of overflowing the nanosecond clock.
const Horizon = 365 * 24 * 3600 * Second

// Err is the reason Run stopped early, if it did.
func (e *Engine) Err() error { return e.err }

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Processed is the number of events handled so far.
func (e *Engine) Processed() uint64 { return e.done }

// Schedule adds an event. An event before now or past the Horizon (an
// overflowed or absurd time) is refused: Run stops and Err says why.
func (e *Engine) Schedule(at Time, kind Kind, arg int32) {
	if at < e.now || at > Horizon {
		if e.err == nil {
			e.err = fmt.Errorf("sim: an event (kind %d) fell at %.6g s, outside [now = %.6g s, the one-year horizon]: a rate, think time, duration or timestamp is too extreme",
				kind, at.Seconds(), e.now.Seconds())
		}
		return
	}
	e.seq++
	e.q.push(Event{At: at, Seq: e.seq, Kind: kind, Arg: arg})
}

// ScheduleOrdered adds an event that, among events of its kind at its
// time, fires in the order of key, then of arg, instead of scheduling
// order. A kind should be scheduled one way or the other, never both.
func (e *Engine) ScheduleOrdered(at Time, kind Kind, arg int32, key uint64) {
	if at < e.now || at > Horizon {
		e.Schedule(at, kind, arg) // refused, with the reason
		return
	}
	e.q.push(Event{At: at, Seq: key, Kind: kind, Arg: arg})
}

// Stop ends the run after the event being handled, with err as the
// reason (the first reason given is kept).
func (e *Engine) Stop(err error) {
	if e.err == nil {
		e.err = err
	}
}

// Run handles events until none are left, or until an event is refused.
func (e *Engine) Run(h Handler) {
	for len(e.q) > 0 && e.err == nil {
		if e.done%cancelEvery == 0 && e.poll() {
			break
		}
		ev := e.q.pop()
		if ev.At < e.now {
			panic(fmt.Sprintf("sim: time went back from %d to %d ns", e.now, ev.At))
		}
		e.now = ev.At
		e.done++
		h.Handle(ev)
	}
}

// poll ticks the progress display, if any, and says whether the run was
// cancelled.
func (e *Engine) poll() bool {
	if e.tick != nil {
		e.tick()
	}
	return e.cancel != nil && e.cancelled()
}

// cancelled says whether the cancel channel is closed, and if so makes
// ErrCancelled the reason Run stops.
func (e *Engine) cancelled() bool {
	select {
	case <-e.cancel:
		e.Stop(ErrCancelled)
		return true
	default:
		return false
	}
}

// eventQueue is a binary min-heap of events; push and pop are O(log n).
type eventQueue []Event

func (q eventQueue) less(i, j int) bool { return q[i].before(&q[j]) }

// before reports whether e fires before f: by time, kind, Seq, then Arg.
func (a *Event) before(b *Event) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.Arg < b.Arg
}

func (q *eventQueue) push(e Event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *eventQueue) pop() Event {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
