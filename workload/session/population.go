package session

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// Stats account for every conversation: Started = Completed + Rejected + Cut.
type Stats struct {
	Started   int `json:"started"`
	Completed int `json:"completed"` // every turn answered
	Rejected  int `json:"rejected"`  // ended by a turn not answered (refused: too long, 503; or timed out)
	Cut       int `json:"cut"`       // turns left when the run's duration ended
}

// Population is one run's users (it has per-run state: make one per run).
type Population struct {
	cfg       Config
	blockSize int
	rng       *rand.Rand
	nextID    uint64
	conv      map[*sim.Job]*conversation
	stats     Stats
	sent      int // turns sent (requests)
	limit     int // the most turns a run sends (MaxTurns)
}

type conversation struct {
	user       int
	session    string    // the conversation's session key (production-stack's session header)
	segs       []segment // the conversation so far
	turn       int       // turns answered
	turns      int       // turns it will have
	prompt     []segment // the turn in flight: its prompt
	answer     segment   // and its answer
	firstTurnS float64
}

// New makes a population and its first turns (one conversation per user,
// users starting at exponential think times). cfg must be valid.
func New(cfg Config, blockSize int, seed uint64) (*Population, *sim.Workload) {
	p := &Population{cfg: cfg, blockSize: blockSize, rng: sim.Stream(seed, "workload"), conv: map[*sim.Job]*conversation{}, limit: MaxTurns}
	wl := &sim.Workload{Name: "sessions", BlockSize: blockSize}
	var firsts []*conversation
	var at []sim.Time
	for u := 0; u < cfg.Concurrency; u++ {
		t := p.think(0)
		c := p.open(u, t)
		if c == nil {
			break
		}
		firsts, at = append(firsts, c), append(at, t)
	}
	// The cluster replays initial jobs in arrival order.
	order := make([]int, len(firsts))
	for i := range order {
		order[i] = i
	}
	sortByTime(order, at)
	wl.Jobs = make([]sim.Job, len(order))
	for k, i := range order {
		wl.Jobs[k] = p.job(firsts[i], at[i])
		wl.Jobs[k].ID = k
		p.conv[&wl.Jobs[k]] = firsts[i]
	}
	p.sent = len(wl.Jobs)
	return p, wl
}

// Err reports a run that reached MaxTurns before its duration ended: it
// sent no more turns, so its statistics would describe a shorter run than
// the one asked for.
func (p *Population) Err() error {
	if p.sent <= p.limit {
		return nil
	}
	return inputerr.Fieldf("sessions.duration_s", "%g s of %d users (`sessions.concurrency`) ask for more than %d turns, the most a run holds: lower it or the users, or raise `sessions.think_s`",
		p.cfg.DurationS, p.cfg.Concurrency, p.limit)
}

func sortByTime(order []int, at []sim.Time) {
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && at[order[j]] < at[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}

// Stats reports the conversations so far (complete once the run ended).
func (p *Population) Stats() Stats { return p.stats }

func (p *Population) think(from sim.Time) sim.Time {
	return from + sim.Time(p.rng.ExpFloat64()*p.cfg.ThinkS*1e9)
}

// lognormal draws a positive integer with the given mean and CV.
func (p *Population) lognormal(mean, cv float64) int {
	if cv == 0 {
		return max(1, int(math.Round(mean)))
	}
	s2 := math.Log(1 + cv*cv)
	return max(1, int(math.Round(math.Exp(math.Log(mean)-s2/2+math.Sqrt(s2)*p.rng.NormFloat64()))))
}

func (p *Population) newSegment(tokens int) segment {
	p.nextID++
	return segment{id: mix(0x5e55, p.nextID), tokens: tokens}
}

// open starts a conversation for user u at time t, or returns nil when the
// stopping rule forbids new ones.
func (p *Population) open(u int, t sim.Time) *conversation {
	if (p.cfg.Sessions > 0 && p.stats.Started >= p.cfg.Sessions) || (p.cfg.DurationS > 0 && t.Seconds() > p.cfg.DurationS) {
		return nil
	}
	p.stats.Started++
	sys := segment{id: mix(0x5a5, uint64(p.rng.IntN(p.cfg.SystemPrompts))), tokens: p.cfg.SystemTokens}
	starter := segment{id: mix(0x57a, uint64(p.rng.IntN(p.cfg.Starters))), tokens: p.cfg.StarterTokens}
	c := &conversation{user: u, session: "conversation-" + strconv.Itoa(p.stats.Started), turns: p.cfg.TurnsMin + p.rng.IntN(p.cfg.TurnsMax-p.cfg.TurnsMin+1), firstTurnS: t.Seconds()}
	c.prompt = nil
	for _, s := range []segment{sys, starter} {
		if s.tokens > 0 {
			c.prompt = append(c.prompt, s)
		}
	}
	if len(c.prompt) == 0 { // no shared prefix configured: open with new input
		c.prompt = append(c.prompt, p.newSegment(p.lognormal(p.cfg.NewTokens, p.cfg.NewCV)))
	}
	c.answer = p.newSegment(p.lognormal(p.cfg.OutputTokens, p.cfg.OutputCV))
	return c
}

// job turns a conversation's pending turn into a request.
func (p *Population) job(c *conversation, at sim.Time) sim.Job {
	isl := 0
	for _, s := range c.prompt {
		isl += s.tokens
	}
	all := append(append([]segment{}, c.prompt...), c.answer)
	return sim.Job{Arrival: at, Line: c.user + 1, InputTokens: isl, OutputTokens: c.answer.tokens,
		Blocks: blockHashes(all, p.blockSize), PromptBlocks: isl / p.blockSize, Session: c.session}
}

// Ended implements sim.FollowUp.
func (p *Population) Ended(j *sim.Job, s sim.Status, at sim.Time) *sim.Job {
	c := p.conv[j]
	delete(p.conv, j)
	if c == nil {
		return nil
	}
	next := p.think(at)
	if s != sim.StatusOK {
		p.stats.Rejected++
		c = p.open(c.user, next)
	} else {
		c.segs = append(append(c.segs[:0:0], c.prompt...), c.answer)
		c.turn++
		switch {
		case c.turn >= c.turns:
			p.stats.Completed++
			c = p.open(c.user, next)
		case p.cfg.DurationS > 0 && next.Seconds() > p.cfg.DurationS:
			p.stats.Cut++
			return nil
		default:
			c.prompt = append(append([]segment{}, c.segs...), p.newSegment(p.lognormal(p.cfg.NewTokens, p.cfg.NewCV)))
			c.answer = p.newSegment(p.lognormal(p.cfg.OutputTokens, p.cfg.OutputCV))
		}
	}
	if c == nil {
		return nil
	}
	if p.sent++; p.sent > p.limit {
		return nil // Err reports it
	}
	nj := p.job(c, next)
	p.conv[&nj] = c
	return &nj
}
