package main

import (
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/validate"
)

// trustLine is the header line of a run (run, sweep, plan) whose profile
// p was not measured on its deployment d: the profile's kind and the
// nearest validation case's measured error, from routesim validate's
// embedded summary (validate.Summary.TrustLine); "" for a measured
// profile.
func trustLine(s *scenario.Spec, p *model.Profile, d model.Deployment) string {
	sum, err := validate.Embedded()
	if err != nil {
		return "trust: " + string(p.Basis()) + ", not measured on this deployment (" + err.Error() + ")"
	}
	engine := "vllm"
	if s.EngineKind() == sim.TRTLLM {
		engine = model.EngineTRTLLM
	}
	return sum.TrustLine(p, d, engine)
}

// specTrustLine is trustLine for the deployment and profile spec s names
// ("" if they do not load: the caller has reported that already).
func specTrustLine(s *scenario.Spec) string {
	d, err := s.Deployment()
	if err != nil {
		return ""
	}
	p, err := s.LoadProfile()
	if err != nil {
		return ""
	}
	return trustLine(s, p, d)
}
