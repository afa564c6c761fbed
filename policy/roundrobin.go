package policy

// RoundRobin sends request k to worker k mod N; it never rejects and never
// consults load, like Dynamo's --router-mode round-robin.
type RoundRobin struct {
	next int
}

// Route picks the next worker in rotation.
func (p *RoundRobin) Route(_ *Request, v View) Decision {
	n := v.NumWorkers()
	w := p.next % n
	p.next = (w + 1) % n
	return Decision{Worker: w, Reason: "rotation"}
}
