package sim_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// sliceStream streams a held workload's jobs (copies, as a file reader
// would make them), failing after fail jobs if fail > 0.
type sliceStream struct {
	jobs   []Job
	next   int
	fail   int
	err    error
	closed *bool
}

func (s *sliceStream) Next() (*Job, bool) {
	if s.fail > 0 && s.next == s.fail {
		s.err = errors.New("trace.jsonl:7: disk went away")
		return nil, false
	}
	if s.next == len(s.jobs) {
		return nil, false
	}
	j := s.jobs[s.next]
	s.next++
	return &j, true
}

func (s *sliceStream) Err() error { return s.err }

func (s *sliceStream) Close() error {
	*s.closed = true
	return nil
}

func streamed(wl *Workload, fail int, closed *bool) *Workload {
	return &Workload{Name: wl.Name, BlockSize: wl.BlockSize, StreamLen: len(wl.Jobs), Stream: func() (JobStream, error) {
		return &sliceStream{jobs: wl.Jobs, fail: fail, closed: closed}, nil
	}}
}

// TestStreamedRunEqualsHeldRun: the same jobs streamed give the same
// records as held ones, with client timeouts and retries making requests
// end in every way (so retirement meets stale timers and re-sends), under
// round-robin and the kv router.
func TestStreamedRunEqualsHeldRun(t *testing.T) {
	tr, err := workload.Read("conversation", workload.Filter{First: 400, RateScale: 3})
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []string{"round-robin", "kv"} {
		cfg := testConfig(2)
		cfg.Router.Timeout, cfg.Router.Retries, cfg.Router.RetryBackoff = 20*Second, 2, Second
		e, _ := policy.Lookup(pol)
		p := policy.DefaultParams()
		p.ActiveDecodeBlocksThreshold = 0.5
		cfg = routerFor(cfg, e, p)
		cfg.CheckInvariants = true
		run := func(w *Workload) *Result {
			p.Rand = Stream(1, "router")
			pl, err := policy.New(pol, p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(cfg, w, pl)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		closed := false
		held, str := run(wl), run(streamed(wl, 0, &closed))
		checkRecords(t, str)
		if !reflect.DeepEqual(held.Records, str.Records) || held.Events != str.Events || held.Makespan != str.Makespan {
			t.Errorf("%s: streamed run differs from the held one (%d vs %d records, %d vs %d events)", pol, len(str.Records), len(held.Records), str.Events, held.Events)
		}
		if !closed {
			t.Errorf("%s: the stream was not closed", pol)
		}
		s := Summarize(str)
		if len(s.Rejected) == 0 {
			t.Errorf("%s: no request was rejected or timed out; the test does not exercise retirement of ended requests", pol)
		}
	}
}

// TestStreamErrorStopsTheRun: a stream that fails mid-run ends the run
// with its error (no result), and closes it.
func TestStreamErrorStopsTheRun(t *testing.T) {
	tr, err := workload.Read("conversation", workload.Filter{First: 50})
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	res, err := Run(testConfig(2), streamed(wl, 20, &closed), &policy.RoundRobin{})
	if err == nil || res != nil || err.Error() != "trace.jsonl:7: disk went away" || !closed {
		t.Errorf("result %v, error %v, closed %v; want the stream's error and a closed stream", res != nil, err, closed)
	}
	cfg := testConfig(2)
	cfg.FollowUp = newChatClients(64, 2, Second)
	if _, err := Run(cfg, streamed(wl, 0, &closed), &policy.RoundRobin{}); err == nil {
		t.Error("closed-loop clients accepted on a streamed workload")
	}
}
