package policy

// RoundRobin sends request k to the (k mod N)th live worker, like Dynamo's
// --router-mode round-robin; it never consults the router's load. Admit,
// when its rule is ExcludeBusy (Dynamo v1.3 on, with a threshold set),
// makes it rotate over the workers the busy monitor does not report
// overloaded (push_router.rs's free_ids, #9688), refusing when there are
// none; earlier releases rotate over every worker.
type RoundRobin struct {
	Admit Admission
	next  int
	free  []int
}

// Admission implements Admitter.
func (p *RoundRobin) Admission() Admission { return p.Admit }

// Route picks the next worker in rotation.
func (p *RoundRobin) Route(_ *Request, v View) Decision {
	ws := v.Workers()
	n := len(ws)
	if free, ok := freeWorkers(p.Admit, v, &p.free); ok {
		if len(free) == 0 {
			return Decision{Action: RejectBusy, Reason: p.Admit.OverloadMessage}
		}
		w := free[p.next%len(free)]
		p.next = (p.next + 1) % n
		return Decision{Worker: w, Reason: "rotation over the workers not overloaded"}
	}
	k := p.next % n
	p.next = (k + 1) % n
	return Decision{Worker: ws[k], Reason: "rotation"}
}

// freeWorkers lists, into buf, the workers the busy monitor does not
// report overloaded, when adm excludes them one by one (ok false: it
// does not).
func freeWorkers(adm Admission, v View, buf *[]int) ([]int, bool) {
	ov, isOV := v.(OverloadView)
	if adm.Gate != ExcludeBusy || !adm.Armed() || !isOV {
		return nil, false
	}
	free := (*buf)[:0]
	for _, w := range v.Workers() {
		if !ov.Overloaded(w) {
			free = append(free, w)
		}
	}
	*buf = free
	return free, true
}
