package model

import (
	"bytes"

	gojson "github.com/goccy/go-json"
)

// readEmbedded decodes one of the package's embedded JSON files (profiles,
// the catalogue) with goccy/go-json, refusing unknown fields if strict
// (as ReadProfile does): a run parses them at every start, and goccy takes
// about a quarter of encoding/json's time. Files users pass go through
// encoding/json, whose errors name the field; the embedded ones are
// checked to decode the same both ways (TestEmbeddedDecodeAgrees).
func readEmbedded[T any](data []byte, strict bool) (*T, error) {
	var v T
	dec := gojson.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return &v, nil
}
