package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/routesim/routesim/internal/inputerr"
)

// Load reads a scenario file: a JSON object with Spec's fields (unknown
// fields are errors), applied over base. Errors name the file, line and
// field.
func Load(path string, base Spec) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return base, err
	}
	s := base
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return base, positioned(path, b, dec, err)
	}
	if dec.More() {
		return base, &inputerr.Error{File: path, Line: lineOf(b, dec.InputOffset()), Msg: "more than one JSON value"}
	}
	if err := s.Validate(); err != nil {
		return base, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func positioned(path string, b []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &inputerr.Error{File: path, Line: lineOf(b, se.Offset), Msg: "malformed JSON: " + se.Error()}
	case errors.As(err, &te):
		return &inputerr.Error{File: path, Line: lineOf(b, te.Offset), Field: te.Field, Msg: fmt.Sprintf("%s is not a valid %s", te.Value, te.Type)}
	}
	return &inputerr.Error{File: path, Line: lineOf(b, dec.InputOffset()), Msg: err.Error()}
}

// lineOf is the 1-based line of byte offset off.
func lineOf(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return bytes.Count(b[:off], []byte("\n")) + 1
}
