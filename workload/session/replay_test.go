package session

import (
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// Two sessions of three turns (each later turn's hash ids extend the
// previous prompt) and one standalone request; session "b" gives explicit
// delays, session 7 (a number) relies on recorded gaps.
const sessionTrace = `{"timestamp": 0, "session_id": "b", "input_length": 600, "output_length": 20, "hash_ids": [1, 2]}
{"timestamp": 0, "session_id": 7, "input_length": 700, "output_length": 20, "hash_ids": [9, 10]}
{"timestamp": 100, "input_length": 300, "output_length": 5, "hash_ids": [50]}
{"timestamp": 1000, "session_id": "b", "delay": 250, "input_length": 1200, "output_length": 20, "hash_ids": [1, 2, 3]}
{"timestamp": 1500, "session_id": 7, "input_length": 1300, "output_length": 20, "hash_ids": [9, 10, 11]}
{"timestamp": 2000, "session_id": "b", "delay": 250, "input_length": 1800, "output_length": 20, "hash_ids": [1, 2, 3, 4]}
{"timestamp": 3500, "session_id": 7, "input_length": 1900, "output_length": 20, "hash_ids": [9, 10, 11, 12]}
`

func replayRun(t *testing.T, maxModelLen int) (*sim.Result, *Replay) {
	t.Helper()
	tr, err := workload.ReadMooncake(strings.NewReader(sessionTrace), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workload.Prepare(tr, 64)
	if err != nil {
		t.Fatal(err)
	}
	rep, open := NewReplay(wl)
	cfg := sim.Config{FollowUp: rep, CheckInvariants: true,
		Pools: sim.Single(1, sim.WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 64, KVBlocks: 500, MaxModelLen: maxModelLen},
			&model.Profile{Name: "t", GPU: "g", Model: "m", TP: 1, Quant: model.BF16, Kind: "roofline", StepBaseNs: 5e6, PrefillNsPerToken: 10e3})}
	p := policy.DefaultParams()
	p.Rand = sim.Stream(0, "router")
	pol, _ := policy.New("round-robin", p)
	res, err := sim.Run(cfg, open, pol)
	if err != nil {
		t.Fatal(err)
	}
	return res, rep
}

func TestReplayTimesLaterTurnsByCompletion(t *testing.T) {
	res, rep := replayRun(t, 4000)
	if len(res.Records) != 7 || rep.Stats() != (ReplayStats{Sessions: 2, Sent: 4}) {
		t.Fatalf("%d requests, stats %+v", len(res.Records), rep.Stats())
	}
	byISL := map[int]sim.Record{}
	for _, r := range res.Records {
		if r.Status != sim.StatusOK {
			t.Fatalf("request %+v", r)
		}
		byISL[r.InputTokens] = r
	}
	for _, c := range []struct {
		prev, next int
		delay      sim.Time
	}{
		{600, 1200, 250 * sim.Millisecond}, {1200, 1800, 250 * sim.Millisecond}, // explicit delays
		{700, 1300, 1500 * sim.Millisecond}, {1300, 1900, 2000 * sim.Millisecond}, // recorded gaps
	} {
		p, n := byISL[c.prev], byISL[c.next]
		if n.Arrival != p.End+c.delay {
			t.Errorf("turn of %d tokens arrived at %d, want its previous turn's end %d + %d", c.next, n.Arrival, p.End, c.delay)
		}
		if n.CachedTokens < p.InputTokens/64*64 {
			t.Errorf("turn of %d tokens: %d cached, want at least the previous prompt's %d", c.next, n.CachedTokens, p.InputTokens/64*64)
		}
	}
	if byISL[300].Arrival != 100*sim.Millisecond {
		t.Errorf("standalone request arrived at %d", byISL[300].Arrival)
	}
}

func TestReplayRefusedTurnEndsItsSession(t *testing.T) {
	res, rep := replayRun(t, 1250) // session 7's second turn (1,320 tokens) is refused: its third is never sent
	st := rep.Stats()
	refused := 0
	for _, r := range res.Records {
		if r.Status != sim.StatusOK {
			refused++
		}
	}
	if refused != 2 || st.NotSent != 1 || len(res.Records)+st.NotSent != 7 {
		t.Errorf("refused %d, stats %+v, %d sent: every line must be sent or counted", refused, st, len(res.Records))
	}
}
