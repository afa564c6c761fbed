package workload

import (
	"fmt"
	"io"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// Stream prepares a trace for replay without holding it: the workload's
// jobs are read from the file as a run reaches their arrivals, so a
// trace larger than memory replays in memory proportional to the
// requests in flight (and the run's records). The jobs are the ones
// Prepare(Read(nameOrPath, f), blockSize) holds, byte for byte.
//
// Stream first reads the selection once, checking every line and
// measuring what re-timing and Repeat need, so a bad line fails before
// any simulation. Sessions are refused: their turns follow each other's
// completions, which needs the whole trace at hand.
func Stream(nameOrPath string, f Filter, blockSize int) (*sim.Workload, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := sim.CheckBlockSize(blockSize); err != nil {
		return nil, err
	}
	return stream(func() (io.Reader, string, func() error, error) { return openTrace(nameOrPath, MaxTraceBytes) }, f, blockSize)
}

// opener opens a trace for one pass: its reader, the name its errors
// carry, and how to close it.
type opener func() (io.Reader, string, func() error, error)

func stream(open opener, f Filter, blockSize int) (*sim.Workload, error) {
	plan, err := planStream(open, f)
	if err != nil {
		return nil, err
	}
	return &sim.Workload{
		Name: plan.name, BlockSize: blockSize, StreamLen: plan.n * plan.copies,
		StreamSpan: sim.Time(plan.last + int64(plan.copies-1)*plan.period),
		Stream: func() (sim.JobStream, error) {
			return &jobStream{plan: plan, blockSize: blockSize}, nil
		},
	}, nil
}

// streamPlan is what one pass over a trace's selection tells: how many
// requests, how to re-time them, and how copies are offset.
type streamPlan struct {
	open   opener
	name   string
	f      Filter
	n      int     // requests selected
	base   int64   // the first one's recorded arrival (ns)
	last   int64   // the last one's re-timed arrival (ns)
	scale  float64 // rate scale
	copies int
	period int64 // arrival offset between copies (ns)
	idStep int64 // hash-id offset between copies
}

func planStream(open opener, f Filter) (*streamPlan, error) {
	r, name, closeFn, err := open()
	if err != nil {
		return nil, err
	}
	defer closeFn()
	p := &streamPlan{open: open, name: name, f: f, scale: f.RateScale, copies: max(f.Repeat, 1)}
	if p.scale == 0 {
		p.scale = 1
	}
	lr := newLineReader(r, name)
	sel := f.selector()
	var maxID int64
	for {
		req, ok, err := lr.nextSelected(sel)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if req.Session != "" {
			return nil, &inputerr.Error{File: name, Line: req.Line, Field: "session_id",
				Msg: "a streamed trace is replayed open-loop, but this line belongs to a session, whose turns wait for each other's answers (replay it without streaming)"}
		}
		if p.n == 0 {
			p.base = req.ArrivalNs
		}
		p.n++
		if p.last, ok = retime(req.ArrivalNs, p.base, p.scale); !ok {
			return nil, inputerr.Fieldf("rate_scale", "%g puts %s's request %d at %.3g s, past the %g s horizon", f.RateScale, name, p.n, float64(req.ArrivalNs-p.base)/p.scale/1e9, float64(HorizonS))
		}
		for _, id := range req.HashIDs {
			maxID = max(maxID, id)
		}
	}
	if lr.parsed == 0 {
		return nil, &inputerr.Error{File: name, Line: 0, Field: "", Msg: "trace has no requests"}
	}
	if p.n == 0 {
		return nil, fmt.Errorf("%s: no requests left after filters (`max_isl` %d, `skip` %d, `first` %d)", name, f.MaxISL, f.Skip, f.First)
	}
	if p.copies > 1 {
		k := p.copies
		if p.period, err = repeatPeriod(name, p.n, k, p.last); err != nil {
			return nil, err
		}
		p.idStep = maxID + 1
		if end := p.last + int64(k-1)*p.period; float64(end) > HorizonS*1e9 {
			return nil, inputerr.Fieldf("repeat", "%d copies at rate scale %g put %s's request %d at %.3g s, past the %g s horizon", k, p.scale, name, p.n*k, float64(end)/1e9, float64(HorizonS))
		}
	}
	return p, nil
}

// jobStream reads a planned selection copy by copy, re-opening the trace
// for each, and prepares its jobs in chunks that the run's request
// pages outlive.
type jobStream struct {
	plan      *streamPlan
	blockSize int
	copy      int // the copy being read
	lr        *lineReader
	sel       func(Request) (bool, bool)
	closeFn   func() error
	next      int // jobs yielded
	jobs      []sim.Job
	backing   []uint64
	err       error
}

// streamChunk is how many jobs one allocation holds; a chain-hash
// allocation holds 16 times as many hashes.
const streamChunk = 1024

func (s *jobStream) Next() (*sim.Job, bool) {
	for s.err == nil && s.copy < s.plan.copies {
		if s.lr == nil {
			r, _, closeFn, err := s.plan.open()
			if err != nil {
				s.err = err
				break
			}
			s.lr, s.closeFn, s.sel = newLineReader(r, s.plan.name), closeFn, s.plan.f.selector()
		}
		req, ok, err := s.lr.nextSelected(s.sel)
		if err != nil {
			s.err = err
			break
		}
		if !ok { // this copy is read: the next one
			s.Close()
			s.copy++
			continue
		}
		j, err := s.job(req)
		if err != nil {
			s.err = err
			break
		}
		return j, true
	}
	s.Close()
	return nil, false
}

// job prepares request req of the current copy.
func (s *jobStream) job(req Request) (*sim.Job, error) {
	c := int64(s.copy)
	a, ok := retime(req.ArrivalNs, s.plan.base, s.plan.scale)
	if !ok { // the plan checked every line: the file changed since
		return nil, &inputerr.Error{File: s.plan.name, Line: req.Line, Field: "timestamp", Msg: "past the horizon at this rate scale; the trace changed after it was checked"}
	}
	req.ArrivalNs = a + c*s.plan.period
	for i := range req.HashIDs { // the line's own ids, parsed for this job
		req.HashIDs[i] += c * s.plan.idStep
	}
	if len(s.jobs) == cap(s.jobs) {
		s.jobs = make([]sim.Job, 0, streamChunk)
	}
	if cap(s.backing)-len(s.backing) < len(req.HashIDs) {
		s.backing = make([]uint64, 0, max(streamChunk*16, len(req.HashIDs)))
	}
	var j sim.Job
	s.backing, j = prepareJob(s.backing, req, s.next, s.blockSize)
	s.next++
	s.jobs = append(s.jobs, j)
	return &s.jobs[len(s.jobs)-1], nil
}

func (s *jobStream) Err() error { return s.err }

func (s *jobStream) Close() error {
	if s.closeFn == nil {
		return nil
	}
	err := s.closeFn()
	s.lr, s.closeFn = nil, nil
	return err
}
