package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// Load reads a scenario file (at most inputerr.MaxSmallFile bytes): a
// JSON object with Spec's fields, applied over base. A UTF-8 byte-order
// mark is skipped; unknown fields, null values and duplicate keys (in any
// case: keys match fields as encoding/json matches them) are errors;
// trace, profile, gpu and model paths are relative to the file's folder
// (embedded trace names and catalogue names stay names). Every error names the file, the line of the
// field it is about and the field — engine-level checks too (e.g. a
// block_size that does not divide 512). Checks that need the whole run
// (Build) come later: LoadSource's Source positions their errors.
func Load(path string, base Spec) (Spec, error) {
	s, _, err := LoadSource(path, base)
	return s, err
}

// LoadSource is Load that also says where the file sets each field, so
// that errors found later (building the run) can point at the line of
// the field they are about.
func LoadSource(path string, base Spec) (Spec, *Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return base, nil, err
	}
	b, err := inputerr.ReadAll(f, path, inputerr.MaxSmallFile)
	f.Close()
	if err != nil {
		return base, nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	src, err := scan(path, b, reflect.TypeFor[Spec]())
	if err != nil {
		return base, nil, err
	}
	s := base
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return base, nil, positioned(src, b, dec, err)
	}
	if dec.More() {
		return base, nil, &inputerr.Error{File: path, Line: lineOf(b, dec.InputOffset()), Msg: "more than one JSON value"}
	}
	dir := filepath.Dir(path)
	if src.Line("trace") > 0 && s.Trace != "" && !workload.IsEmbedded(s.Trace) && !filepath.IsAbs(s.Trace) {
		s.Trace = filepath.Join(dir, s.Trace)
	}
	if src.Line("profile") > 0 && s.Profile != "" && !model.IsBuiltinName(s.Profile) && !filepath.IsAbs(s.Profile) {
		s.Profile = filepath.Join(dir, s.Profile)
	}
	if src.Line("gpu") > 0 && model.IsFileArg(s.GPU) && !filepath.IsAbs(s.GPU) {
		s.GPU = filepath.Join(dir, s.GPU)
	}
	if src.Line("model") > 0 && !filepath.IsAbs(s.Model) && !model.DefaultCatalogue().IsCatalogueModel(s.Model) {
		if st, err := os.Stat(filepath.Join(dir, s.Model)); model.IsFileArg(s.Model) || err == nil && st.IsDir() {
			s.Model = filepath.Join(dir, s.Model) // a config.json, or the folder holding one
		}
	}
	if src.Line("engine") > 0 && src.Line("block_size") == 0 {
		s.BlockSize = sim.DefaultBlockSize(s.EngineKind()) // the named engine's own
	}
	err = s.Validate()
	if s.EngineKind() == sim.TRTLLM && src.Line("gpu_memory_utilization") > 0 {
		err = errors.Join(err, inputerr.Fieldf("gpu_memory_utilization", "is vLLM's: TensorRT-LLM sizes its KV cache by `free_gpu_memory_fraction`"))
	}
	if err != nil {
		return base, nil, atFields(src, err)
	}
	return s, src, nil
}

// atFields positions every field error of err (one or a joined list) at
// the line where the file sets that field; other errors are prefixed with
// the file's name.
func atFields(src *Source, err error) error {
	path := src.File
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
			msg := strings.ReplaceAll(strings.TrimPrefix(fe.Error(), fe.Field), "`", "")
			out = append(out, &inputerr.Error{File: path, Line: src.Line(fe.Field), Field: fe.Field, Msg: strings.TrimPrefix(strings.TrimSpace(msg), ": ")})
			continue
		}
		out = append(out, fmt.Errorf("%s: %w", path, e))
	}
	return errors.Join(out...)
}

// positioned positions a decoding error: a syntax error where it is, a
// value of the wrong type at its field's line.
func positioned(src *Source, b []byte, dec *json.Decoder, err error) error {
	path := src.File
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &inputerr.Error{File: path, Line: lineOf(b, se.Offset), Msg: "malformed JSON: " + se.Error()}
	case errors.As(err, &te):
		line := src.Line(te.Field)
		if line == 0 {
			line = lineOf(b, te.Offset)
		}
		return &inputerr.Error{File: path, Line: line, Field: te.Field, Msg: fmt.Sprintf("%s is not a valid %s", te.Value, te.Type)}
	}
	return &inputerr.Error{File: path, Line: lineOf(b, dec.InputOffset()), Msg: err.Error()}
}

// lineOf is the 1-based line of byte offset off.
func lineOf(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return bytes.Count(b[:off], []byte("\n")) + 1
}
