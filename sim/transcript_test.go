package sim_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
)

var updateTranscripts = flag.Bool("update", false, "rewrite the transcripts in testdata/golden/transcripts")

// transcript records a run's routing decisions and busy-monitor changes,
// one line each, and every request's first decision in order.
type transcript struct {
	lines []string
	first map[int]string // request → its first decision's action
	order []int
	t0    Time
}

func (tr *transcript) at(t Time) string { return fmt.Sprintf("%+9.3f ms", float64(t-tr.t0)/1e6) }

func (tr *transcript) Decision(at Time, id, attempt int, d policy.Decision) {
	what := d.Action.String()
	if d.Action == policy.Dispatch {
		what += fmt.Sprintf(" → worker %d", d.Worker)
	}
	tr.lines = append(tr.lines, fmt.Sprintf("%s  request %2d  %-22s %s", tr.at(at), id, what, d.Reason))
	if _, seen := tr.first[id]; !seen {
		tr.first[id] = d.Action.String()
		tr.order = append(tr.order, id)
	} else if d.Action == policy.RejectBusy && tr.first[id] == "dispatch" {
		tr.first[id] = "503 after booking"
	}
}

func (tr *transcript) Busy(at Time, w int, busy bool, d, u, p, n int) {
	state := "free"
	if busy {
		state = "busy"
	}
	tr.lines = append(tr.lines, fmt.Sprintf("%s  monitor: worker %d %s (booked blocks %d, engine blocks %d, prefill tokens %d); %d of 2 busy, free set pushed",
		tr.at(at), w, state, d, u, p, n))
}

func (tr *transcript) Reset(at Time, n int) {
	tr.lines = append(tr.lines, fmt.Sprintf("%s  client reset its free set to every worker (%d of 2 busy, no change since: not re-pushed)", tr.at(at), n))
}

// TestDynamoV12Transcript: a hand-built arrival sequence on two workers
// under --router-mode kv at Dynamo 1.2.0's defaults, every decision derived
// by hand from the release's semantics (policy/dynamo.go, sim/monitor.go):
// router queue at 4 × 2048 = 8,192 prefill tokens on every worker; busy when
// booked blocks > 1.0 × 100 or prefill tokens > 10 × 2048 = 20,480; refuse
// (after booking) only when the free set the monitor last pushed is empty;
// the client resets that set every 5 s. The engine is slow (100 s per
// step), so no request gets a first token within the sequence: a request
// of 1,024 tokens (16 distinct blocks) books 1,024 prefill tokens and 16
// blocks until then. Requests arrive 1 ms apart, so each booking's
// ActiveLoad reaches the monitor before the next request.
//
// After the reset R₁: a0…a11 alternate between the workers (equal cost:
// a uniform tie; then the other worker is cheaper), 6 each (96 blocks).
// a12 makes one worker 112 > 100 blocks: busy, the other still free. a13
// goes to the cheaper worker: both busy, an empty free set is pushed. a14
// and a15 are booked, refused with 503 and released. After the next reset
// R₂ (no first token yet, no change of the busy set since): the free set is
// every worker again, so b0…b3 are admitted although both workers are busy
// (two each: 8,192 and 9,216 prefill tokens); b4 and b5 find both workers
// over 8,192 prefill tokens and are parked.
func TestDynamoV12Transcript(t *testing.T) {
	const seed = 3
	phase := Time(Stream(seed, "monitor").Int64N(5e9)) // the client's reset timer, as the run draws it
	r1, r2 := phase+5*Second, phase+10*Second
	var reqs []treq
	for k := 1; k <= 16; k++ {
		reqs = append(reqs, treq{at: r1 + Time(k)*Millisecond, isl: 1024, osl: 2})
	}
	for k := 1; k <= 6; k++ {
		reqs = append(reqs, treq{at: r2 + Time(k)*Millisecond, isl: 1024, osl: 2})
	}
	cfg := kvConfig(2)
	cfg.Seed = seed
	cfg.Pools[0].Worker.KVBlocks = 100
	cfg.Pools[0].Worker.MaxModelLen = 6400
	slow := *testProfile()
	slow.StepBaseNs = 100e9
	cfg.Pools[0].Profile = &slow
	tr := &transcript{first: map[int]string{}, t0: r1}
	cfg.Decisions = tr
	p := policy.DefaultParams()
	p.DynamoVersion = "1.2.0"
	p.Rand = Stream(seed, "router")
	pol, err := policy.New("kv", p)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := simulateWith(t, cfg, mkTrace(reqs...), pol)
	want := []string{}
	for range 14 {
		want = append(want, "dispatch")
	}
	want = append(want, "503 after booking", "503 after booking", "dispatch", "dispatch", "dispatch", "dispatch", "park", "park")
	var got []string
	for _, id := range tr.order {
		got = append(got, tr.first[id])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("first decisions:\n got  %v\n want %v", got, want)
	}
	s := Summarize(res)
	if s.Completed+s.Rejected["rejected-busy"] != s.Offered || s.Rejected["rejected-busy"] != 2 {
		t.Errorf("completed %d, rejected %v of %d: want the two refused, the rest served", s.Completed, s.Rejected, s.Offered)
	}
	text := "# Dynamo 1.2.0 --router-mode kv on 2 workers (TestDynamoV12Transcript); times from the client's reset R1\n" + strings.Join(tr.lines, "\n") + "\n"
	path := filepath.Join("..", "testdata", "golden", "transcripts", "dynamo-v1.2-n2.txt")
	if *updateTranscripts {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sim -run TestDynamoV12Transcript -update)", err)
	}
	if string(golden) != text {
		t.Errorf("transcript differs from %s; if intended, run go test ./sim -run TestDynamoV12Transcript -update and read the diff\n%s", path, text)
	}
}
