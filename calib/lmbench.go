package calib

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// LMBench's CSV is the summary its multi-round QA client writes
// (synthetic-multi-round-qa/multi-round-qa.py, UserSession.summary and
// main's summary.to_csv, LMCache/LMBenchmark@26d02bd2): one row per
// completed request, columns prompt_tokens, generation_tokens (written by
// pandas, so as floats: 21073.0), ttft and generation_time (s),
// user_id, question_id, launch_time and finish_time (Unix time, s). A
// failed request raises and writes no row. Each user asks its questions
// in one growing conversation: a question is sent once the user's gap
// (num_users / qps) has passed since its previous one was sent and that
// one has finished.

// lmbenchFields are the columns a summary needs.
var lmbenchFields = []string{"prompt_tokens", "generation_tokens", "ttft", "generation_time", "user_id", "question_id", "launch_time", "finish_time"}

// ReadLMBench reads one LMBench summary CSV (at most inputerr.MaxDataFile
// bytes): one load point. Every problem names the file, the line and the
// column. Requests are re-simulated as its client sent them: each user's
// first question in the file at its recorded time (from the file's first
// launch), each later one when the user's gap has passed since the
// previous was sent and that one has ended; the gap is the shortest
// spacing of one user's launches in the file (num_users / qps: the client
// keeps to it whenever the previous answer is back in time).
func ReadLMBench(r io.Reader, name string) (*BenchPoint, error) {
	b, err := inputerr.ReadAll(r, name, inputerr.MaxDataFile)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(bytes.NewReader(b))
	header, err := cr.Read()
	if err != nil {
		return nil, errf(name, 1, "", "no header: %v", err)
	}
	col, err := headerColumns(name, 1, header, lmbenchFields, "an LMBench summary has")
	if err != nil {
		return nil, err
	}
	var rows []lmbenchRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, errf(name, pe.Line, "", "character %d: %v", pe.Column, pe.Err)
			}
			return nil, errf(name, 0, "", "%v", err)
		}
		row, err := parseLMBench(cr, rec, col, name)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
		if len(rows) > maxBenchRequests {
			return nil, errf(name, row.line, "", "more than %g rows", float64(maxBenchRequests))
		}
	}
	if len(rows) == 0 {
		return nil, errf(name, 1, "", "no rows: the run completed no request")
	}
	return lmbenchPoint(rows, name)
}

// lmbenchRow is one request of a summary.
type lmbenchRow struct {
	line              int
	isl, osl          int
	ttft, gen         float64 // s
	user, question    int
	launch, finish    float64 // Unix s
	launchCol, finCol int
}

// parseLMBench checks one row; problems name the line and column.
func parseLMBench(cr *csv.Reader, rec []string, col map[string]int, name string) (lmbenchRow, error) {
	line, _ := cr.FieldPos(0)
	var row lmbenchRow
	row.line = line
	num := func(f string) (float64, int, error) {
		i := col[f]
		l, _ := cr.FieldPos(min(i, len(rec)-1))
		c := i + 1 // the column's number, as a spreadsheet shows it
		if i >= len(rec) {
			return 0, c, errf(name, l, f, "column %d: missing (the row has %d fields)", i+1, len(rec))
		}
		s := strings.TrimSpace(rec[i])
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, c, errf(name, l, f, "column %d: %q is not a finite number", c, s)
		}
		return v, c, nil
	}
	whole := func(f string, lo, hi float64, dst *int) error {
		v, c, err := num(f)
		if err != nil {
			return err
		}
		if v != math.Trunc(v) || v < lo || v > hi {
			return errf(name, line, f, "column %d: %g is not a whole number in [%g, %g]", c, v, lo, hi)
		}
		*dst = int(v)
		return nil
	}
	for _, f := range []struct {
		key    string
		lo, hi float64
		dst    *int
	}{{"prompt_tokens", 1, maxTokens, &row.isl}, {"generation_tokens", 1, maxTokens, &row.osl}, {"user_id", 0, 1e9, &row.user}, {"question_id", 1, 1e9, &row.question}} {
		if err := whole(f.key, f.lo, f.hi, f.dst); err != nil {
			return row, err
		}
	}
	for _, f := range []struct {
		key string
		dst *float64
		c   *int
	}{{"ttft", &row.ttft, nil}, {"generation_time", &row.gen, nil}, {"launch_time", &row.launch, &row.launchCol}, {"finish_time", &row.finish, &row.finCol}} {
		v, c, err := num(f.key)
		if err != nil {
			return row, err
		}
		if v < 0 || (f.c == nil && v > maxMeasured/1e3) {
			return row, errf(name, line, f.key, "column %d: %g s is outside [0, %g]", c, v, maxMeasured/1e3)
		}
		*f.dst = v
		if f.c != nil {
			*f.c = c
		}
	}
	if row.finish < row.launch {
		return row, errf(name, line, "finish_time", "column %d: %.6f is before launch_time %.6f", row.finCol, row.finish, row.launch)
	}
	return row, nil
}

// lmbenchPoint builds the load point of a summary's rows.
func lmbenchPoint(rows []lmbenchRow, name string) (*BenchPoint, error) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].launch < rows[j].launch })
	t0, end := rows[0].launch, rows[0].finish
	p := &BenchPoint{File: name, Format: "lmbench", Requests: len(rows), RatePerS: math.Inf(1), Burstiness: 1}
	last := map[int]*lmbenchRow{}
	gap := math.Inf(1)
	var ttft, itl, e2e []float64
	for i := range rows {
		r := &rows[i]
		if r.launch-t0 > 7*24*3600 {
			return nil, errf(name, r.line, "launch_time", "column %d: %.6f is more than a week after the first launch %.6f", r.launchCol, r.launch, t0)
		}
		if prev, ok := last[r.user]; ok {
			if r.question <= prev.question {
				return nil, errf(name, r.line, "question_id", "user %d asks question %d after question %d (line %d)", r.user, r.question, prev.question, prev.line)
			}
			if r.isl < prev.isl {
				return nil, errf(name, r.line, "prompt_tokens", "user %d's question %d has %d prompt tokens, fewer than its earlier question's %d (line %d): a conversation's prompt only grows", r.user, r.question, r.isl, prev.isl, prev.line)
			}
			if r.launch < prev.finish-1e-3 {
				return nil, errf(name, r.line, "launch_time", "column %d: user %d sent question %d at %.6f, before question %d finished at %.6f (line %d)", r.launchCol, r.user, r.question, r.launch, prev.question, prev.finish, prev.line)
			}
			gap = math.Min(gap, r.launch-prev.launch)
		}
		last[r.user] = r
		end = math.Max(end, r.finish)
		p.InputLens = append(p.InputLens, r.isl)
		p.OutputLens = append(p.OutputLens, r.osl)
		p.SendS = append(p.SendS, r.launch-t0)
		p.Users = append(p.Users, r.user)
		ttft, e2e = append(ttft, r.ttft*1e3), append(e2e, (r.ttft+r.gen)*1e3)
		if r.osl >= 2 {
			itl = append(itl, r.gen/float64(r.osl-1)*1e3)
		}
	}
	if !math.IsInf(gap, 1) {
		p.UserGapS = gap
	}
	s := Stats{}
	addDist(s, "ttft_ms", sim.NewDist(ttft))
	addDist(s, "itl_ms", sim.NewDist(itl))
	addDist(s, "e2e_ms", sim.NewDist(e2e))
	if end > t0 {
		s["requests_per_s"] = float64(len(rows)) / (end - t0)
	}
	p.Stats = keepCompared(s)
	if vol := p.promptVolume(); vol > workload.MaxPromptVolume {
		return nil, errf(name, 0, "prompt_tokens", "%.3g prompt tokens in all: more than %g would not fit in memory", vol, workload.MaxPromptVolume)
	}
	return p, nil
}

// userLoop is LMBench's multi-round client: each user's first question
// in the file is sent at its recorded time; each later one when the gap
// has passed since the user's previous question was sent and that one
// has ended (a user whose question failed asks nothing more).
type userLoop struct {
	all  []sim.Job
	next []int // index in all of the same user's next question, -1 none
	at   map[*sim.Job]int
	gap  sim.Time
}

// newUserLoop splits wl (one job per row, in send order) into each
// user's first question and the questions that follow.
func newUserLoop(wl *sim.Workload, users []int, gap float64) (*userLoop, *sim.Workload) {
	u := &userLoop{all: wl.Jobs, next: make([]int, len(wl.Jobs)), at: map[*sim.Job]int{}, gap: sim.Time(math.Round(gap * 1e9))}
	open := &sim.Workload{Name: wl.Name, BlockSize: wl.BlockSize}
	prev := map[int]int{}
	var firsts []int
	for i := range wl.Jobs {
		u.next[i] = -1
		if k, ok := prev[users[i]]; ok {
			u.next[k] = i
		} else {
			firsts = append(firsts, i)
		}
		prev[users[i]] = i
	}
	for _, i := range firsts {
		open.Jobs = append(open.Jobs, wl.Jobs[i])
	}
	for k, i := range firsts {
		open.Jobs[k].ID = k
		u.at[&open.Jobs[k]] = i
	}
	return u, open
}

// Ended implements sim.FollowUp.
func (u *userLoop) Ended(j *sim.Job, s sim.Status, at sim.Time) *sim.Job {
	i, ok := u.at[j]
	if !ok {
		return nil
	}
	delete(u.at, j)
	k := u.next[i]
	if k < 0 || s != sim.StatusOK {
		return nil
	}
	nj := u.all[k]
	nj.Arrival = max(j.Arrival+u.gap, at)
	u.at[&nj] = k
	return &nj
}
