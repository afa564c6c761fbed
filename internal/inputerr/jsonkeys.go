package inputerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// JSONKeys says where a JSON object sets each key: the line of the key by
// its dotted path ("name", "text_config.hidden_size"; keys inside arrays
// are not recorded). Top lists the top-level object's keys in file order.
type JSONKeys struct {
	File  string
	Top   []string
	lines map[string]int
}

// Line is the line of key path p; 0 if the document does not set it.
func (k *JSONKeys) Line(p string) int {
	if k == nil {
		return 0
	}
	return k.lines[p]
}

// ScanJSONKeys walks the JSON object b and records the line of every key
// (outside arrays). It refuses what encoding/json would accept silently
// or report without a line: a key given twice in one object (the last
// would win), a syntax error or a truncated document (positioned at its
// line, "malformed JSON: …"), a document that is not one JSON object.
func ScanJSONKeys(file string, b []byte) (*JSONKeys, error) {
	k := &JSONKeys{File: file, lines: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // a number's range is the reader's to check, at its field
	type frame struct {
		object bool
		path   string // dotted path of this value
		keys   map[string]bool
		key    string // in an object, the current key's path ("" = a key comes next)
	}
	var stack []frame
	inArray := 0
	line, seen := 1, int64(0)
	for {
		tok, err := dec.Token()
		switch {
		case err == io.EOF && len(stack) == 0 && seen > 0:
			return k, nil
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, Errorf(file, lineAt(b, int64(len(b))), "", "malformed JSON: the document ends early (truncated?)")
		case err != nil:
			var se *json.SyntaxError
			if errors.As(err, &se) {
				// The decoder's offset can fall before the separator it
				// had read; a whole-document parse places the fault.
				var v any
				if uerr := json.Unmarshal(b, &v); errors.As(uerr, &se) {
					return nil, Errorf(file, lineAt(b, se.Offset), "", "malformed JSON: %v", se)
				}
				return nil, Errorf(file, lineAt(b, se.Offset), "", "malformed JSON: %v", err)
			}
			return nil, Errorf(file, lineAt(b, dec.InputOffset()), "", "malformed JSON: %v", err)
		}
		off := dec.InputOffset()
		line += bytes.Count(b[seen:off], []byte("\n"))
		seen = off
		if len(stack) == 0 {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return nil, Errorf(file, line, "", "want a JSON object ({ … })")
			}
			stack = append(stack, frame{object: true, keys: map[string]bool{}})
			continue
		}
		top := &stack[len(stack)-1]
		if top.object && top.key == "" {
			if name, ok := tok.(string); ok {
				p := name
				if top.path != "" {
					p = top.path + "." + name
				}
				if top.keys[name] {
					return nil, Errorf(file, line, p, "given twice in one object")
				}
				top.keys[name] = true
				top.key = p
				if inArray == 0 {
					k.lines[p] = line
					if len(stack) == 1 {
						k.Top = append(k.Top, name)
					}
				}
				continue
			}
		}
		here := top.key
		if !top.object {
			here = top.path + "[]"
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{object: true, path: here, keys: map[string]bool{}})
				continue
			case '[':
				inArray++
				stack = append(stack, frame{path: here})
				continue
			case ']':
				inArray--
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				if dec.More() {
					return nil, Errorf(file, line, "", "more than one JSON value")
				}
				continue
			}
			top = &stack[len(stack)-1]
		}
		if top.object {
			top.key = "" // the key's value has ended
		}
	}
}

// lineAt is the 1-based line of byte offset off in b.
func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return bytes.Count(b[:off], []byte("\n")) + 1
}

// JSONDecodeError positions an encoding/json decoding error of document b
// whose keys k holds: a value of the wrong type at its field's line, a
// syntax error at its own.
func JSONDecodeError(k *JSONKeys, b []byte, err error) *Error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		line := k.Line(te.Field)
		if line == 0 {
			line = lineAt(b, te.Offset)
		}
		return Errorf(k.File, line, te.Field, "%s is not a valid %s", te.Value, te.Type)
	case errors.As(err, &se):
		return Errorf(k.File, lineAt(b, se.Offset), "", "malformed JSON: %v", se)
	}
	return Errorf(k.File, 0, "", "%v", err)
}
