package session

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

func testCfg() Config {
	return Config{Concurrency: 6, Sessions: 12, TurnsMin: 3, TurnsMax: 5, ThinkS: 0.5, SystemTokens: 700, Starters: 3,
		StarterTokens: 1500, NewTokens: 150, OutputTokens: 200}
}

func runPop(t *testing.T, cfg Config, n int, pol string, seed uint64) (*sim.Result, *Population) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	pop, wl := New(cfg, 32, seed)
	sc := sim.Config{Seed: seed, CheckInvariants: true, FollowUp: pop,
		Pools: sim.Single(n, sim.WorkerConfig{MaxNumSeqs: 64, MaxNumBatchedTokens: 4096, BlockSize: 32, KVBlocks: 4000, MaxModelLen: 64000},
			&model.Profile{Name: "t", GPU: "g", Model: "m", TP: 1, Quant: model.BF16, Kind: "roofline", StepBaseNs: 5e6, PrefillNsPerToken: 20e3, DecodeNsPerSeq: 1e4}),
		Router: sim.RouterConfig{KVAware: pol != "round-robin"}}
	p := policy.DefaultParams()
	p.Rand = sim.Stream(seed, "router")
	pl, err := policy.New(pol, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sc, wl, pl)
	if err != nil {
		t.Fatal(err)
	}
	return res, pop
}

func TestSessionsAreClosedLoopAndAccounted(t *testing.T) {
	cfg := testCfg()
	res, pop := runPop(t, cfg, 1, "round-robin", 1)
	st := pop.Stats()
	if st.Started != cfg.Sessions || st.Completed+st.Rejected+st.Cut != st.Started || st.Completed != cfg.Sessions {
		t.Fatalf("stats %+v, want %d sessions all completed", st, cfg.Sessions)
	}
	// A user never has two turns in flight; each later turn starts after
	// the previous answer and finds the whole previous conversation cached.
	type turn struct{ arrival, end sim.Time }
	last := map[int]sim.Record{}
	turns := 0
	for _, r := range res.Records {
		turns++
		prev, ok := last[r.Line]
		if ok && r.Arrival < prev.End {
			t.Errorf("user %d: a turn arrived at %d before the previous answer at %d", r.Line, r.Arrival, prev.End)
		}
		if ok && r.InputTokens > prev.InputTokens+prev.OutputTokens {
			// Same conversation: the prompt extends the last one. Its final
			// answer token's KV was never computed (vLLM computes it with
			// the next prompt), so the cached prefix is every full block of
			// the first ISL+OSL−1 tokens.
			want := (prev.InputTokens + prev.OutputTokens - 1) / 32 * 32
			if r.CachedTokens != want {
				t.Errorf("user %d: %d cached tokens, want the previous conversation's %d", r.Line, r.CachedTokens, want)
			}
		}
		last[r.Line] = r
	}
	if turns < 3*cfg.Sessions || turns > 5*cfg.Sessions {
		t.Errorf("%d turns for %d sessions of 3–5 turns", turns, cfg.Sessions)
	}
}

func TestSessionsDeterministicAndDurationCut(t *testing.T) {
	cfg := testCfg()
	cfg.Sessions, cfg.DurationS = 0, 8
	a, pa := runPop(t, cfg, 2, "kv", 5)
	b, pb := runPop(t, cfg, 2, "kv", 5)
	if !reflect.DeepEqual(a.Records, b.Records) || pa.Stats() != pb.Stats() {
		t.Fatal("same seed, different closed-loop runs")
	}
	st := pa.Stats()
	if st.Cut == 0 || st.Completed+st.Rejected+st.Cut != st.Started {
		t.Errorf("duration stop: %+v (some conversations must be cut, all accounted)", st)
	}
	for _, r := range a.Records {
		if r.Arrival.Seconds() > cfg.DurationS+1e-9 {
			t.Errorf("request %d arrived at %.2f s, after the %g s duration", r.ID, r.Arrival.Seconds(), cfg.DurationS)
		}
	}
}

func TestKVRoutingKeepsConversationsTogether(t *testing.T) {
	cfg := testCfg()
	cfg.Concurrency, cfg.Sessions = 8, 24
	rr, _ := runPop(t, cfg, 4, "round-robin", 2)
	kv, _ := runPop(t, cfg, 4, "kv", 2)
	hr, hk := sim.Summarize(rr).PrefixHitRate, sim.Summarize(kv).PrefixHitRate
	if !(hk > hr) || math.IsNaN(hk) {
		t.Errorf("hit rate kv %.3f, round-robin %.3f: KV routing should keep turns with their conversation", hk, hr)
	}
	t.Logf("prefix-cache hit rate: kv %.1f%%, round-robin %.1f%%", 100*hk, 100*hr)
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{{}, {Concurrency: 1}, {Concurrency: 1, Sessions: 1, TurnsMin: 4, TurnsMax: 2}, {Concurrency: 1, Sessions: 1, ThinkS: -1}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestBlockHashesArePrefixStable(t *testing.T) {
	a := blockHashes([]segment{{1, 100}, {2, 50}}, 32)
	b := blockHashes([]segment{{1, 100}, {2, 50}, {3, 40}}, 32)
	c := blockHashes([]segment{{1, 90}, {2, 60}}, 32)
	if len(a) != 4 || len(b) != 5 {
		t.Fatalf("%d and %d blocks", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("extending a conversation changed block %d", i)
		}
	}
	if c[2] == a[2] || c[0] != a[0] {
		t.Error("block identity must follow content: equal first 90 tokens, different block 2")
	}
}

// TestConfigErrorsNameTheField: each out-of-range setting is reported under
// its own field, never as a group ("pools need …") or under another one.
func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		field string
		set   func(c *Config)
	}{
		{"sessions.system_prompts", func(c *Config) { c.SystemPrompts = -1 }},
		{"sessions.starters", func(c *Config) { c.Starters = -1 }},
		{"sessions.system_tokens", func(c *Config) { c.SystemTokens = -1 }},
		{"sessions.starter_tokens", func(c *Config) { c.StarterTokens = -1 }},
		{"sessions.sessions", func(c *Config) { c.Sessions = -1 }},
		{"sessions.duration_s", func(c *Config) { c.Sessions, c.DurationS = 5, -1 }},
		{"sessions.duration_s", func(c *Config) { c.Sessions, c.DurationS = 5, math.NaN() }},
		// 10^7 conversations of 1,000 turns: 10^10 requests, a runaway.
		{"sessions.sessions", func(c *Config) { c.Sessions, c.TurnsMin, c.TurnsMax = 10_000_000, 1000, 1000 }},
	} {
		c := DefaultConfig()
		c.Concurrency, c.Sessions = 2, 4
		tc.set(&c)
		err := c.Validate()
		var fe *inputerr.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: %v, want one error naming it", tc.field, err)
		}
	}
}

// TestDurationRunStopsAtTheTurnBound: a run stopped by its duration that
// would send more turns than a run holds stops sending at the bound and
// reports it (Err), naming the duration; under the bound, no error.
func TestDurationRunStopsAtTheTurnBound(t *testing.T) {
	cfg := Config{Concurrency: 4, DurationS: 600, SystemTokens: 100, StarterTokens: 100, NewTokens: 20, OutputTokens: 5}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{30, 1 << 30} {
		pop, wl := New(cfg, 32, 1)
		pop.limit = limit
		sc := sim.Config{Seed: 1, FollowUp: pop,
			Pools: sim.Single(2, sim.WorkerConfig{MaxNumSeqs: 64, MaxNumBatchedTokens: 4096, BlockSize: 32, KVBlocks: 4000, MaxModelLen: 64000},
				&model.Profile{Name: "t", GPU: "g", Model: "m", TP: 1, Quant: model.BF16, Kind: "roofline", StepBaseNs: 5e6, PrefillNsPerToken: 20e3, DecodeNsPerSeq: 1e4})}
		p := policy.DefaultParams()
		p.Rand = sim.Stream(1, "router")
		pl, _ := policy.New("round-robin", p)
		res, err := sim.Run(sc, wl, pl)
		if err != nil {
			t.Fatal(err)
		}
		var fe *inputerr.FieldError
		switch err := pop.Err(); {
		case limit == 30 && (len(res.Records) != 30 || !errors.As(err, &fe) || fe.Field != "sessions.duration_s"):
			t.Errorf("limit 30: %d requests, %v; want 30 and an error naming sessions.duration_s", len(res.Records), err)
		case limit > 30 && (err != nil || len(res.Records) <= 30):
			t.Errorf("no limit: %d requests, %v", len(res.Records), err)
		}
	}
}
