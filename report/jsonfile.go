package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v to w as routesim writes the JSON files people read
// (summary.json, a run's manifest, plan.json): encoding/json's encoding
// indented by two spaces, with a final newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
