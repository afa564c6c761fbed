package report

import (
	"strconv"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

// DecisionTrace writes a run's routing decisions (and the busy monitor's
// changes) as JSON lines (run --trace-decisions) to a temporary file that
// replaces the target only when Commit is called: a failed run leaves no
// partial trace. It is a sim.DecisionObserver and a sim.MonitorObserver;
// the first write error stops the writing and is kept (Err).
type DecisionTrace struct {
	path string
	w    *atomicfile.File
	buf  []byte
	err  error
}

// NewDecisionTrace starts a trace that Commit publishes at path.
func NewDecisionTrace(path string) (*DecisionTrace, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	return &DecisionTrace{path: path, w: f}, nil
}

// Decision implements sim.DecisionObserver. Excluded workers' +Inf scores
// are written as null.
func (t *DecisionTrace) Decision(at sim.Time, id, attempt int, d policy.Decision) {
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	b = append(b, `{"t_ns":`...)
	b = strconv.AppendInt(b, int64(at), 10)
	b = append(b, `,"request":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(attempt), 10)
	b = append(b, `,"outcome":`...)
	b = strconv.AppendQuote(b, d.Action.String())
	if d.Action == policy.Dispatch {
		b = append(b, `,"worker":`...)
		b = strconv.AppendInt(b, int64(d.Worker), 10)
	}
	b = append(b, `,"reason":`...)
	b = strconv.AppendQuote(b, d.Reason)
	if d.Scores != nil {
		b = append(b, `,"scores":[`...)
		for i, s := range d.Scores {
			if i > 0 {
				b = append(b, ',')
			}
			b = sim.AppendJSONFloat(b, s)
		}
		b = append(b, ']')
	}
	b = append(b, "}\n"...)
	t.buf = b
	_, t.err = t.w.Write(b)
}

// Err is the first error writing the trace (nil if none).
func (t *DecisionTrace) Err() error { return t.err }

// Commit publishes the trace at its path, or, after a write error,
// discards it and returns that error.
func (t *DecisionTrace) Commit() error {
	if t.err != nil {
		t.w.Abort()
		return t.err
	}
	return t.w.Commit()
}

// Abort discards the trace.
func (t *DecisionTrace) Abort() { t.w.Abort() }

// Busy implements sim.MonitorObserver: a worker entering or leaving the
// busy monitor's busy set, with the values that decided it.
func (t *DecisionTrace) Busy(at sim.Time, worker int, busy bool, decodeBlocks, engineBlocks, prefillTokens, busyWorkers int) {
	if t.err != nil {
		return
	}
	state := "free"
	if busy {
		state = "busy"
	}
	b := t.buf[:0]
	b = append(b, `{"t_ns":`...)
	b = strconv.AppendInt(b, int64(at), 10)
	b = append(b, `,"monitor":`...)
	b = strconv.AppendQuote(b, state)
	b = append(b, `,"worker":`...)
	b = strconv.AppendInt(b, int64(worker), 10)
	b = append(b, `,"decode_blocks":`...)
	b = strconv.AppendInt(b, int64(decodeBlocks), 10)
	b = append(b, `,"engine_blocks":`...)
	b = strconv.AppendInt(b, int64(engineBlocks), 10)
	b = append(b, `,"prefill_tokens":`...)
	b = strconv.AppendInt(b, int64(prefillTokens), 10)
	b = append(b, `,"busy_workers":`...)
	b = strconv.AppendInt(b, int64(busyWorkers), 10)
	b = append(b, "}\n"...)
	t.buf = b
	_, t.err = t.w.Write(b)
}

// Reset implements sim.MonitorObserver: the client's periodic reset of its
// free set that let a request through a fleet the monitor had pushed as
// all busy.
func (t *DecisionTrace) Reset(at sim.Time, busyWorkers int) {
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	b = append(b, `{"t_ns":`...)
	b = strconv.AppendInt(b, int64(at), 10)
	b = append(b, `,"monitor":"reset","busy_workers":`...)
	b = strconv.AppendInt(b, int64(busyWorkers), 10)
	b = append(b, "}\n"...)
	t.buf = b
	_, t.err = t.w.Write(b)
}
