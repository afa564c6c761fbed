package validate

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

// Entry is what one validation case says about one deployment: how its
// predictions were made and how far they were from the measurements, over
// the statistics its acceptance checks. A trtllm-bench case has one entry
// for its fitted deployment and one for each it transfers to.
type Entry struct {
	Case   string `json:"case"`
	Regime string `json:"regime"`
	GPU    string `json:"gpu"`
	Model  string `json:"model"`
	TP     int    `json:"tp"`
	Quant  string `json:"quant"`
	// Engine is "vllm" or "trtllm".
	Engine string `json:"engine"`
	// How says what the predictions were made with.
	How string `json:"how"`
	// Statistics counts the compared (run, statistic) pairs.
	Statistics int `json:"statistics"`
	// MaxAbsErrPct is the largest |predicted − measured| / measured, in
	// per cent (one decimal), at Worst ("statistic in run ARM").
	MaxAbsErrPct  float64 `json:"max_abs_error_pct"`
	Worst         string  `json:"worst"`
	MeanAbsErrPct float64 `json:"mean_abs_error_pct"`
	// Pass is the case's verdict (all its entries share it).
	Pass bool `json:"pass"`
}

// Summary is the embedded digest of routesim validate's results that runs
// quote to say how far to trust them (Trust). Regenerate it with
// `routesim validate --summary validate/summary.json`.
type Summary struct {
	Command string  `json:"command"`
	Entries []Entry `json:"entries"`
}

// SummaryCommand regenerates the embedded summary, from the repository's
// root.
const SummaryCommand = "go run ./cmd/routesim validate --summary validate/summary.json"

// Summarize collects every result's entries, in case order.
func Summarize(res []Result) Summary {
	s := Summary{Command: SummaryCommand}
	for _, r := range res {
		for _, e := range r.Summary {
			e.Pass = r.Pass
			s.Entries = append(s.Entries, e)
		}
	}
	return s
}

// Marshal is the summary as written: indented JSON, one trailing newline.
func (s Summary) Marshal() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic("validate: summary: " + err.Error())
	}
	return b.Bytes()
}

// entry summarises rows (those of c's checked statistics) of a case's
// predictions for deployment d.
func entry(c Case, d model.Deployment, engine, how string, rows []calib.PredRow) Entry {
	e := Entry{Case: c.Name, Regime: c.Regime, GPU: d.GPU.Name, Model: d.Model.Name, TP: max(d.TP, 1), Quant: string(d.Quant), Engine: engine, How: how}
	checked := map[string]bool{}
	for _, st := range c.Checked {
		checked[st] = true
	}
	sum := 0.0
	for _, r := range rows {
		if !checked[r.Stat] || math.IsNaN(r.ErrPct) || math.IsInf(r.ErrPct, 0) {
			continue
		}
		a := math.Abs(r.ErrPct)
		e.Statistics++
		sum += a
		if a > e.MaxAbsErrPct || e.Worst == "" {
			e.MaxAbsErrPct, e.Worst = a, r.Stat+" in run "+r.Arm
		}
	}
	if e.Statistics > 0 {
		e.MeanAbsErrPct = sum / float64(e.Statistics)
	}
	e.MaxAbsErrPct = math.Round(10*e.MaxAbsErrPct) / 10
	e.MeanAbsErrPct = math.Round(10*e.MeanAbsErrPct) / 10
	return e
}

//go:embed summary.json
var summaryJSON []byte

// Embedded is the summary shipped with routesim (summary.json).
func Embedded() (Summary, error) {
	var s Summary
	dec := json.NewDecoder(bytes.NewReader(summaryJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Summary{}, fmt.Errorf("validate: embedded summary.json: %w", err)
	}
	return s, nil
}

// Relation says how a validation case's deployment relates to a run's,
// closest first.
type Relation int

// The relations Nearest ranks by.
const (
	SameGPUAndModel Relation = iota
	SameArchitectureAndModel
	SameModel
	SameArchitecture
	Unrelated
)

// String is the relation in the words the trust line prints.
func (r Relation) String() string {
	return [...]string{"same GPU and model", "same model on a GPU of the same architecture", "same model on another architecture",
		"another model on a GPU of the same architecture", "another GPU and model"}[r]
}

// relation is how case entry e's deployment relates to d.
func relation(e Entry, d model.Deployment, cat *model.Catalogue) Relation {
	sameModel := strings.EqualFold(e.Model, d.Model.Name)
	g, err := cat.GPU(e.GPU)
	sameArch := err == nil && model.SameArchitecture(g, d.GPU)
	switch {
	case sameModel && strings.EqualFold(e.GPU, d.GPU.Name):
		return SameGPUAndModel
	case sameModel && sameArch:
		return SameArchitectureAndModel
	case sameModel:
		return SameModel
	case sameArch:
		return SameArchitecture
	}
	return Unrelated
}

// Nearest is the entry of s closest to deployment d run by engine
// ("vllm" or "trtllm"; entries of that engine only, if it has any): the
// same GPU and model, else the same model on the same architecture, else
// the same model, else the same architecture, else any; among equals the
// same GPU, then the nearest TP degree, then the same weights' precision,
// then by case name.
func (s Summary) Nearest(d model.Deployment, engine string) (Entry, Relation, bool) {
	pool := s.Entries
	var same []Entry
	for _, e := range s.Entries {
		if e.Engine == engine {
			same = append(same, e)
		}
	}
	if len(same) > 0 {
		pool = same
	}
	if len(pool) == 0 {
		return Entry{}, 0, false
	}
	cat := model.DefaultCatalogue()
	type ranked struct {
		e    Entry
		rank [4]float64
	}
	var rs []ranked
	for _, e := range pool {
		gpu, q := 1.0, 1.0
		if strings.EqualFold(e.GPU, d.GPU.Name) {
			gpu = 0
		}
		if e.Quant == string(d.Quant) {
			q = 0
		}
		rs = append(rs, ranked{e, [4]float64{float64(relation(e, d, cat)), gpu, math.Abs(math.Log(float64(e.TP) / float64(max(d.TP, 1)))), q}})
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].rank, rs[j].rank
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return rs[i].e.Case < rs[j].e.Case
	})
	return rs[0].e, Relation(rs[0].rank[0]), true
}

// TrustLine is the one line a run on profile p of deployment d (served by
// engine) prints when p was not measured on d: the profile's kind and the
// nearest validation case's measured error (Nearest), with the relation.
// It is empty for a measured profile (kernel or linear fit) of the run's
// engine.
func (s Summary) TrustLine(p *model.Profile, d model.Deployment, engine string) string {
	kind := p.Basis()
	otherEngine := engine == model.EngineTRTLLM && p.Engine != model.EngineTRTLLM
	switch kind {
	case model.BasisMeasured, model.BasisLinearFit:
		if !otherEngine {
			return ""
		}
	}
	what := string(kind)
	if from, ok := model.TransferredFrom(p); ok {
		what = "transfer of " + from
	}
	line := fmt.Sprintf("trust: %s, not measured on this deployment", what)
	if otherEngine {
		line = fmt.Sprintf("trust: %s vLLM profile, not measured on TensorRT-LLM", what)
	}
	e, rel, ok := s.Nearest(d, engine)
	if !ok {
		return line + "; no validation case to compare (routesim validate)"
	}
	verdict := "meets"
	if !e.Pass {
		verdict = "fails"
	}
	return line + fmt.Sprintf("; nearest validation case (%s): %s, %s %s TP%d, %s: max |error| %.1f %% (%s), mean %.1f %% over %d statistics; %s its acceptance",
		rel, e.Case, e.GPU, e.Model, e.TP, e.How, e.MaxAbsErrPct, e.Worst, e.MeanAbsErrPct, e.Statistics, verdict)
}
