package sim_test

import (
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
)

// chatClients is a toy closed-loop population: each client's next turn
// has as prompt the previous turn's whole conversation (its prompt and
// answer blocks) plus new input, sent a think time after the answer.
type chatClients struct {
	blockSize int
	maxTurns  int
	think     Time
	next      uint64
	turn      map[*Job]int // turn number, 1-based
	client    map[*Job]int
	ended     map[*Job]Time
}

func newChatClients(blockSize, maxTurns int, think Time) *chatClients {
	return &chatClients{blockSize: blockSize, maxTurns: maxTurns, think: think,
		turn: map[*Job]int{}, client: map[*Job]int{}, ended: map[*Job]Time{}}
}

// job builds a turn after prev (nil for a first turn).
func (c *chatClients) job(prev *Job, at Time) *Job {
	newTokens, out := 300, 2*c.blockSize+10
	var blocks []uint64
	isl := newTokens
	if prev != nil {
		blocks = append(blocks, prev.Blocks...) // full blocks of prompt + answer
		isl = prev.InputTokens + prev.OutputTokens + newTokens
	}
	for len(blocks) < isl/c.blockSize {
		c.next++
		blocks = append(blocks, Mix(0xc0ffee, c.next))
	}
	prompt := len(blocks)
	for len(blocks) < (isl+out)/c.blockSize {
		c.next++
		blocks = append(blocks, Mix(0xbeef, c.next))
	}
	return &Job{Arrival: at, InputTokens: isl, OutputTokens: out, Blocks: blocks, PromptBlocks: prompt}
}

func (c *chatClients) Ended(j *Job, s Status, at Time) *Job {
	c.ended[j] = at
	if s != StatusOK || c.turn[j] >= c.maxTurns {
		return nil
	}
	n := c.job(j, at+c.think)
	c.turn[n], c.client[n] = c.turn[j]+1, c.client[j]
	return n
}

func TestClosedLoopTurnsReuseTheWholeConversation(t *testing.T) {
	const clients, turns = 3, 4
	cfg := testConfig(1)
	cfg.Pools[0].Worker.BlockSize, cfg.Pools[0].Worker.MaxModelLen = 16, 16000
	cc := newChatClients(16, turns, 50*Millisecond)
	cfg.FollowUp = cc
	wl := &Workload{Name: "chat", BlockSize: 16}
	for i := 0; i < clients; i++ {
		j := cc.job(nil, Time(i)*Millisecond)
		j.ID = i
		wl.Jobs = append(wl.Jobs, *j)
	}
	for i := range wl.Jobs {
		cc.turn[&wl.Jobs[i]], cc.client[&wl.Jobs[i]] = 1, i
	}
	log := &stepLog{t: t, cfg: cfg}
	cfg.Observer = log
	cfg.CheckInvariants = true
	res, err := Run(cfg, wl, newPolicy(t, "round-robin", policy.DefaultParams()))
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, res)
	if got := len(res.Records); got != clients*turns {
		t.Fatalf("%d requests, want %d clients × %d turns", got, clients, turns)
	}
	// Per client: turns in order, never two in flight, think time kept,
	// and every later turn finds the whole previous conversation cached.
	byJob := map[int]*Job{}
	for j := range cc.turn {
		byJob[j.ID] = j
	}
	lastEnd := map[int]Time{}
	for _, r := range res.Records {
		j := byJob[r.ID]
		cl := cc.client[j]
		if r.Status != StatusOK {
			t.Fatalf("request %d: %v", r.ID, r.Status)
		}
		if cc.turn[j] > 1 {
			if r.Arrival < lastEnd[cl]+cc.think {
				t.Errorf("client %d turn %d arrived at %d, before its previous answer (%d) plus think time", cl, cc.turn[j], r.Arrival, lastEnd[cl])
			}
			prevConversation := (r.InputTokens - 300 - 1) / 16 * 16 // the last answer token's KV is computed with this prompt
			if r.CachedTokens != prevConversation {
				t.Errorf("client %d turn %d: %d cached tokens, want the previous conversation's %d", cl, cc.turn[j], r.CachedTokens, prevConversation)
			}
		}
		lastEnd[cl] = r.End
	}
}
