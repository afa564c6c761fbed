package calib

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/routesim/routesim/workload/session"
)

// tzSlack is how far apart two clocks' readings of one instant may be:
// nvidia-smi writes local time without a zone and AIPerf per-request
// times are UTC, so a sample read as UTC may be off by a time zone's
// offset (UTC−12 h to UTC+14 h). A day is beyond it.
const tzSlack = 14 * time.Hour

// checkGPU refuses GPU samples that cannot be the run's: a GPU index past
// the setup's GPUs (n × tp), or a sample more than tzSlack outside the
// AIPerf run's window (a log of another run, or two joined).
func (o *Observed) checkGPU(s *Spec) error {
	g, r := o.GPU, o.Run
	if g == nil {
		return nil
	}
	if tp := max(r.Setup.TP, 1); r.Setup.N >= 1 {
		gpus := r.Setup.N * tp
		for _, d := range g.Devices {
			if d.Index >= gpus {
				return errf(g.file, d.at.line, d.at.field, "GPU %d, but run %s's setup has %d GPUs (n %d × tp %d)", d.Index, r.Name, gpus, r.Setup.N, tp)
			}
		}
	}
	start, end, from := o.runWindow(s)
	if g.first.t.IsZero() || from == "" {
		return nil
	}
	for _, st := range []stamp{g.first, g.last} {
		if st.t.Before(start.Add(-tzSlack)) || st.t.After(end.Add(tzSlack)) {
			const layout = "2006-01-02 15:04:05"
			return errf(g.file, st.line, "timestamp", "%s is more than %.0f h outside the AIPerf run in %s (%s – %s UTC): samples of another run?",
				st.text, tzSlack.Hours(), from, start.Format(layout), end.Format(layout))
		}
	}
	return nil
}

// runWindow is the AIPerf run's wall-clock window and the file it comes
// from: the records' first start and last end, or the summary's
// start_time and end_time ("" when neither says).
func (o *Observed) runWindow(s *Spec) (start, end time.Time, from string) {
	if len(o.Records) > 0 {
		first, last := o.Records[0].StartNs, o.Records[0].EndNs
		for _, r := range o.Records {
			first, last = min(first, r.StartNs), max(last, r.EndNs)
		}
		return time.Unix(0, first).UTC(), time.Unix(0, last).UTC(), s.path(o.Run.AIPerfRecords)
	}
	if m := o.Summary; m != nil && !m.Start.IsZero() && !m.End.IsZero() {
		return m.Start.UTC(), m.End.UTC(), s.path(o.Run.AIPerfSummary)
	}
	return time.Time{}, time.Time{}, ""
}

// checkCounts refuses an export that counts more requests than the run's
// setup offers: per-request records other than one per offered request,
// or a summary whose completed and failed requests, or a latency's
// samples, exceed the offer.
func (o *Observed) checkCounts(s *Spec, offered int) error {
	r := o.Run
	if len(o.Records) > 0 && len(o.Records) != offered {
		return errf(s.path(r.AIPerfRecords), 0, "", "%d records, but run %s's setup offers %d requests: the export and the setup describe different runs", len(o.Records), r.Name, offered)
	}
	m := o.Summary
	if m == nil {
		return nil
	}
	file := s.path(r.AIPerfSummary)
	done, _ := m.Stat("request_count", "avg")
	failed, _ := m.Stat("error_request_count", "avg")
	switch {
	case done > float64(offered):
		return errf(file, 0, "request_count.avg", "%g requests, but run %s's setup offers %d: the export and the setup describe different runs", done, r.Name, offered)
	case done+failed > float64(offered):
		return errf(file, 0, "error_request_count.avg", "%g completed and %g failed requests, but run %s's setup offers %d: the export and the setup describe different runs", done, failed, r.Name, offered)
	}
	for _, k := range latencyMetrics {
		if c := m.Metrics[k].Count; c > offered {
			return errf(file, 0, k+".count", "%d samples, but run %s's setup offers %d requests: the export and the setup describe different runs", c, r.Name, offered)
		}
	}
	return nil
}

// CheckSetups checks every run's exports against the requests its setup
// offers, as a fit does when it builds its arms: for calibrate --derive,
// which builds none but publishes the statistics.
func (s *Spec) CheckSetups(obs []Observed) error {
	for i := range obs {
		o := &obs[i]
		b, err := o.Run.Setup.Build(nil)
		if err != nil {
			return s.setupError(o.Run, err)
		}
		// A load point's requests are its file's, not the setup's.
		if b.Work != nil && !session.HasSessions(b.Work) && o.Bench == nil {
			if err := o.checkCounts(s, len(b.Work.Jobs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// setupError places a problem of run r's setup found when it is built at
// the spec's line for the field: file:line: runs[i].setup.field: problem.
func (s *Spec) setupError(r *Run, err error) error {
	i := slices.IndexFunc(s.Runs, func(x Run) bool { return x.Name == r.Name })
	if s.file == "" || i < 0 {
		return fmt.Errorf("run %s: %w", r.Name, err)
	}
	return positioned(s.file, s.lines, errors.Join(under(fmt.Sprintf("runs[%d].setup.", i), err)...))
}
