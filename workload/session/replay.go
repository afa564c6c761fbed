package session

import (
	"fmt"

	"github.com/routesim/routesim/sim"
)

// Replay sends a trace's sessions closed-loop: first turns (and requests
// without a session) arrive at their timestamps; each later turn is sent
// its Delay after the previous turn of its session ended. A refused turn
// ends its session; the turns it would have sent are counted, not lost.
type Replay struct {
	all   []sim.Job
	turns map[string][]int     // session → indices into all, in file order
	at    map[*sim.Job]turnRef // jobs in flight → their place in a session
	stats ReplayStats
}

type turnRef struct {
	session string
	k       int
}

// ReplayStats account for every line of the trace.
type ReplayStats struct {
	Sessions int `json:"sessions"`
	Sent     int `json:"sent"`     // later turns sent
	NotSent  int `json:"not_sent"` // later turns never sent: an earlier turn was refused
}

// HasSessions reports whether any job belongs to a session.
func HasSessions(wl *sim.Workload) bool {
	for i := range wl.Jobs {
		if wl.Jobs[i].Session != "" {
			return true
		}
	}
	return false
}

// NewReplay splits wl into its open-loop part (returned) and the later
// turns the Replay sends as their sessions progress.
func NewReplay(wl *sim.Workload) (*Replay, *sim.Workload) {
	r := &Replay{all: wl.Jobs, turns: map[string][]int{}, at: map[*sim.Job]turnRef{}}
	open := &sim.Workload{Name: wl.Name, BlockSize: wl.BlockSize}
	var refs []turnRef
	for i := range wl.Jobs {
		j := &wl.Jobs[i]
		if j.Session == "" {
			open.Jobs = append(open.Jobs, *j)
			refs = append(refs, turnRef{})
			continue
		}
		if len(r.turns[j.Session]) == 0 {
			open.Jobs = append(open.Jobs, *j)
			refs = append(refs, turnRef{j.Session, 0})
			r.stats.Sessions++
		}
		r.turns[j.Session] = append(r.turns[j.Session], i)
	}
	for i := range open.Jobs {
		open.Jobs[i].ID = i
		if refs[i].session != "" {
			r.at[&open.Jobs[i]] = refs[i]
		}
	}
	return r, open
}

// Ended implements sim.FollowUp.
func (r *Replay) Ended(j *sim.Job, s sim.Status, at sim.Time) *sim.Job {
	ref, ok := r.at[j]
	if !ok {
		return nil
	}
	delete(r.at, j)
	turns := r.turns[ref.session]
	if ref.k+1 >= len(turns) {
		return nil
	}
	if s != sim.StatusOK {
		r.stats.NotSent += len(turns) - ref.k - 1
		return nil
	}
	nj := r.all[turns[ref.k+1]]
	nj.Arrival = at + nj.Delay
	r.at[&nj] = turnRef{ref.session, ref.k + 1}
	r.stats.Sent++
	return &nj
}

// Stats reports the replay so far (complete once the run ended).
func (r *Replay) Stats() ReplayStats { return r.stats }

// Report is a one-line account for run summaries.
func (r *Replay) Report() string {
	return fmt.Sprintf("trace sessions: %d sessions, %d later turns sent closed-loop, %d never sent after a refused turn",
		r.stats.Sessions, r.stats.Sent, r.stats.NotSent)
}

// Report is a one-line account for run summaries.
func (p *Population) Report() string {
	s := p.stats
	return fmt.Sprintf("sessions: %d started, %d completed, %d ended by a refused turn, %d cut by --duration",
		s.Started, s.Completed, s.Rejected, s.Cut)
}
