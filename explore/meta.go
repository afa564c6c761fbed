package explore

import (
	"encoding/json"
	"net/http"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

// Meta is what the page needs to draw its controls: the registry's
// policies and their parameters, the catalogue's names, the releases,
// and the view it opens with.
type Meta struct {
	Policies       []PolicyInfo      `json:"policies"`
	GPUs           []string          `json:"gpus"`
	Models         []string          `json:"models"`
	DynamoVersions []string          `json:"dynamo_versions"`
	VLLMVersions   []string          `json:"vllm_versions"`
	DefaultVLLM    string            `json:"default_vllm_version"`
	MaxN           int               `json:"max_n"`
	MaxSeeds       int               `json:"max_seeds"`
	Workload       string            `json:"workload"`
	Base           []string          `json:"base"`
	BaseValues     map[string]string `json:"base_values"`
	Initial        Request           `json:"initial"`
	Workers        int               `json:"workers"`
}

// PolicyInfo is one registered policy and the parameters it reads.
type PolicyInfo struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Knobs   []Knob `json:"knobs"`
}

// Knob is one policy parameter: its flag, default (as routesim policies
// prints it), help, and choices if it has a fixed set.
type Knob struct {
	Flag    string   `json:"flag"`
	Default string   `json:"default"`
	Help    string   `json:"help"`
	Choices []string `json:"choices,omitempty"`
}

// MetaFor describes the registry, the catalogue and opt's view.
func MetaFor(opt Options) Meta {
	m := Meta{MaxN: sim.MaxWorkers, MaxSeeds: MaxSeeds, Workload: opt.Workload, Base: opt.Base, BaseValues: opt.BaseValues, Initial: opt.Initial,
		DefaultVLLM: model.DefaultVLLMVersion, VLLMVersions: model.VLLMReleases(), Workers: opt.Workers}
	for _, name := range policy.Names() {
		e, _ := policy.Lookup(name)
		info := PolicyInfo{Name: name, Summary: e.Summary, Knobs: []Knob{}}
		for _, flag := range e.Uses {
			if d, ok := param(flag); ok {
				info.Knobs = append(info.Knobs, Knob{Flag: d.Flag, Default: d.DefaultText(), Help: d.Help, Choices: d.Choices})
			}
		}
		m.Policies = append(m.Policies, info)
	}
	cat := model.DefaultCatalogue()
	for _, g := range cat.GPUs {
		m.GPUs = append(m.GPUs, g.Name)
	}
	for _, l := range cat.Models {
		m.Models = append(m.Models, l.Name)
	}
	for _, r := range policy.Releases() {
		m.DynamoVersions = append(m.DynamoVersions, r.Version)
	}
	return m
}

func (s *Server) meta(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(MetaFor(s.opt))
}
