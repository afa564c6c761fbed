package main

import (
	"fmt"
	"strconv"

	"github.com/routesim/routesim/internal/atomicfile"

	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

// decisionTrace writes routing decisions as JSON lines to a temporary
// file that replaces the target only when the run succeeded.
type decisionTrace struct {
	path string
	w    *atomicfile.File
	buf  []byte
	err  error
}

func newDecisionTrace(path string) (*decisionTrace, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--trace-decisions: %w", err)
	}
	return &decisionTrace{path: path, w: f}, nil
}

// Decision implements sim.DecisionObserver. Excluded workers' +Inf scores
// are written as null.
func (t *decisionTrace) Decision(at sim.Time, id, attempt int, d policy.Decision) {
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

func (t *decisionTrace) commit() error {
	if t.err != nil {
		t.w.Abort()
		return fmt.Errorf("--trace-decisions %s: %w", t.path, t.err)
	}
	if err := t.w.Commit(); err != nil {
		return fmt.Errorf("--trace-decisions: %w", err)
	}
	return nil
}

func (t *decisionTrace) abort() { t.w.Abort() }

// Busy implements sim.MonitorObserver: a worker entering or leaving the
// busy monitor's busy set, with the values that decided it.
func (t *decisionTrace) Busy(at sim.Time, worker int, busy bool, decodeBlocks, engineBlocks, prefillTokens, busyWorkers int) {
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
func (t *decisionTrace) Reset(at sim.Time, busyWorkers int) {
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
