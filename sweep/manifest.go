package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/scenario"
)

// Manifest is everything that determines a sweep's results; it leaves out
// how the work was split (jobs, shards), so any split of the same sweep
// writes the same bytes. A sweep directory's manifest.json holds it
// (sealed), and every point file carries its Digest.
type Manifest struct {
	// Tool, Version and Command say what wrote it (Command is always
	// "sweep"); Base is the base run, Grid the points, Metric,
	// SLOTTFTMs and Bootstrap the crossover question; PerRequest keeps
	// every request record; Profile names the profile and Meta what the
	// figures' titles name.
	Tool       string        `json:"tool"`
	Version    string        `json:"version"`
	Command    string        `json:"command"`
	Base       scenario.Spec `json:"base"`
	Grid       Grid          `json:"grid"`
	Metric     string        `json:"metric"`
	SLOTTFTMs  float64       `json:"slo_ttft_ms"`
	Bootstrap  int           `json:"bootstrap"`
	PerRequest bool          `json:"per_request"`
	// Uncertainty is --uncertainty (coefficient draws per point).
	Uncertainty int    `json:"uncertainty,omitempty"`
	Profile     string `json:"profile"`
	Meta        Meta   `json:"meta"`
}

// Meta names what a sweep simulated, for its figures' titles: the
// workload, the GPU, the model (with its engine) and the profile's kind.
type Meta struct {
	Trace, GPU, Model, ProfileKind string
}

// Command is a sweep manifest's "command": what marks a directory as a
// sweep's.
const Command = "sweep"

// manifestJSON is m as the digest and comparisons read it.
func manifestJSON(m *Manifest) string {
	var b bytes.Buffer
	report.WriteJSON(&b, m)
	return b.String()
}

// Same says whether m and o are the same sweep (everything that
// determines results is equal).
func (m *Manifest) Same(o *Manifest) bool {
	return manifestJSON(m) == manifestJSON(o)
}

// Digest identifies the sweep: the SHA-256 (hex) of its manifest, which
// every point file carries.
func (m *Manifest) Digest() string {
	sum := sha256.Sum256([]byte(manifestJSON(m)))
	return hex.EncodeToString(sum[:])
}

// Diff names the settings in which sweeps m ("there") and o ("here")
// differ, up to six, by their JSON paths.
func (m *Manifest) Diff(o *Manifest) string {
	flat := func(m *Manifest) map[string]string {
		var v any
		json.Unmarshal([]byte(manifestJSON(m)), &v)
		out := map[string]string{}
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			if o, ok := v.(map[string]any); ok {
				for k, x := range o {
					walk(strings.TrimPrefix(prefix+"."+k, "."), x)
				}
				return
			}
			b, _ := json.Marshal(v)
			out[prefix] = string(b)
		}
		walk("", v)
		return out
	}
	fa, fb := flat(m), flat(o)
	var keys []string
	for k := range fa {
		if fa[k] != fb[k] {
			keys = append(keys, k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for i, k := range keys {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-6))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s there, %s here", k, orUnset(fa[k]), orUnset(fb[k])))
	}
	return strings.Join(parts, "; ")
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}
