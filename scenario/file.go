package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/workload"
)

// Load reads a scenario file: a JSON object with Spec's fields, applied
// over base. A UTF-8 byte-order mark is skipped; unknown fields, null
// values and duplicate keys are errors; trace and profile paths are
// relative to the file's folder (embedded trace names stay names). Every
// error names the file, the line and the field — engine-level checks too
// (e.g. a block_size that does not divide 512).
func Load(path string, base Spec) (Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return base, err
	}
	b, err := inputerr.ReadAll(f, path, inputerr.MaxSmallFile)
	f.Close()
	if err != nil {
		return base, err
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if err := strictJSON(path, b); err != nil {
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
	var keys map[string]json.RawMessage
	json.Unmarshal(b, &keys)
	dir := filepath.Dir(path)
	if _, ok := keys["trace"]; ok && s.Trace != "" && !workload.IsEmbedded(s.Trace) && !filepath.IsAbs(s.Trace) {
		s.Trace = filepath.Join(dir, s.Trace)
	}
	if _, ok := keys["profile"]; ok && s.Profile != "" && s.Profile != "kernel-prior" && !filepath.IsAbs(s.Profile) {
		s.Profile = filepath.Join(dir, s.Profile)
	}
	if err := s.Validate(); err != nil {
		return base, atFields(path, b, err)
	}
	if err := s.checkEngine(); err != nil {
		return base, atFields(path, b, err)
	}
	return s, nil
}

// atFields positions every field error of err (one or a joined list) at
// the line where the file sets that field; other errors are prefixed with
// the file's name.
func atFields(path string, b []byte, err error) error {
	var list []error
	var flatten func(error)
	flatten = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				flatten(x)
			}
			return
		}
		list = append(list, e)
	}
	flatten(err)
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *inputerr.FieldError
		if errors.As(e, &fe) && fe == e {
			key := fe.Field[strings.LastIndexByte(fe.Field, '.')+1:]
			line := 0
			if k := bytes.Index(b, []byte(`"`+key+`"`)); k >= 0 {
				line = lineOf(b, int64(k))
			}
			msg := strings.ReplaceAll(strings.TrimPrefix(fe.Error(), fe.Field), "`", "")
			out = append(out, &inputerr.Error{File: path, Line: line, Field: fe.Field, Msg: strings.TrimPrefix(strings.TrimSpace(msg), ": ")})
			continue
		}
		out = append(out, fmt.Errorf("%s: %w", path, e))
	}
	return errors.Join(out...)
}

// strictJSON refuses what encoding/json would accept silently: a key
// given twice in one object (the last would win) and null values (which
// would leave the default in place).
func strictJSON(path string, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		expect bool // in an object, the next token is a key
	}
	var stack []frame
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // syntax errors are reported, positioned, by the decoder
		}
		top := len(stack) - 1
		k, isKey := tok.(string)
		if isKey && top >= 0 && stack[top].object && stack[top].expect {
			if stack[top].keys[k] {
				return &inputerr.Error{File: path, Line: lineOf(b, dec.InputOffset()), Field: k, Msg: "given twice in one object"}
			}
			stack[top].keys[k] = true
			stack[top].expect = false
			continue
		}
		if tok == nil {
			return &inputerr.Error{File: path, Line: lineOf(b, off+1), Msg: "null is not a value here: leave the field out to keep its default"}
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{':
				stack = append(stack, frame{keys: map[string]bool{}, object: true, expect: true})
				continue
			case '[':
				stack = append(stack, frame{})
				continue
			default:
				stack = stack[:top]
			}
		}
		if n := len(stack) - 1; n >= 0 && stack[n].object {
			stack[n].expect = true
		}
	}
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
