package scenario

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// Source says where a scenario file sets each field: the line of the
// field's key, by the field's dotted name as errors give it ("n",
// "sessions.concurrency", "policy_params.router_queue_threshold"), whatever case the
// file spells the key in.
type Source struct {
	File  string
	lines map[string]int
}

// Line is the line of the file where field is set; 0 if the file does
// not set it (or s is nil).
func (s *Source) Line(field string) int {
	if s == nil {
		return 0
	}
	return s.lines[field]
}

// scan walks the file's tokens, recording the line of every field it
// sets, and refuses what encoding/json would accept silently or report
// without a position: a field given twice in one object (the last would
// win; keys match in any case), a null value (it would leave the default
// in place) and an unknown field. Syntax errors are left to the decoder,
// which positions them.
func scan(path string, b []byte, top reflect.Type) (*Source, error) {
	src := &Source{File: path, lines: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object bool
		path   string       // dotted name of this object ("" at the top)
		typ    reflect.Type // the struct or map it fills; nil if unknown
		keys   map[string]bool
		key    string       // in an object, the current key's dotted name ("" = expecting a key)
		val    reflect.Type // the current key's value type
	}
	// The top value is the one element of a pseudo-array of its type.
	stack := []frame{{typ: reflect.SliceOf(top)}}
	line, seen := 1, int64(0) // the line of byte offset seen
	for {
		tok, err := dec.Token()
		if err != nil {
			return src, nil // the end, or a syntax error the decoder reports, positioned
		}
		off := dec.InputOffset() // where tok ends
		line += bytes.Count(b[seen:off], []byte("\n"))
		seen = off
		f := &stack[len(stack)-1]
		if k, ok := tok.(string); ok && f.object && f.key == "" {
			name, typ, known := fieldOf(f.typ, k)
			full := join(f.path, name)
			switch {
			case !known:
				return nil, &inputerr.Error{File: path, Line: line, Field: join(f.path, k), Msg: "unknown field"}
			case f.keys[name]:
				return nil, &inputerr.Error{File: path, Line: line, Field: join(f.path, k), Msg: "given twice in one object"}
			}
			f.keys[name] = true
			f.key, f.val = full, typ
			src.lines[full] = line
			continue
		}
		// tok is a value (or the end of one): of f's current key, of an
		// array element, or the top value.
		here, typ := f.key, f.val
		if !f.object {
			here, typ = f.path, elem(f.typ)
		}
		if tok == nil {
			return nil, &inputerr.Error{File: path, Line: line, Field: here, Msg: "null is not a value here: leave the field out to keep its default"}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{object: true, path: here, typ: indirect(typ), keys: map[string]bool{}})
				continue
			case '[':
				stack = append(stack, frame{path: here + "[]", typ: indirect(typ)})
				continue
			}
			stack = stack[:len(stack)-1] // '}' or ']' ends the value of the frame below
			f = &stack[len(stack)-1]
		}
		if f.object {
			f.key, f.val = "", nil
		}
	}
}

// join is a dotted field name.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

var unmarshalers = []reflect.Type{reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler]()}

// indirect is the type a JSON value fills in a t: t without pointers;
// nil (anything goes) where a type decodes itself or t is nil.
func indirect(t reflect.Type) reflect.Type {
	for t != nil {
		for _, u := range unmarshalers {
			if reflect.PointerTo(t).Implements(u) {
				return nil
			}
		}
		if t.Kind() != reflect.Pointer {
			return t
		}
		t = t.Elem()
	}
	return nil
}

// elem is the element type of an array or slice t (nil if unknown).
func elem(t reflect.Type) reflect.Type {
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		return t.Elem()
	}
	return nil
}

// fieldOf finds the field key sets in an object of type t as
// encoding/json does (the exact JSON name first, else any case): its
// JSON name and type. Keys of a map, or of an object whose type is not
// known, are their own names.
func fieldOf(t reflect.Type, key string) (name string, typ reflect.Type, known bool) {
	switch {
	case t == nil:
		return key, nil, true
	case t.Kind() == reflect.Map:
		return key, t.Elem(), true
	case t.Kind() != reflect.Struct:
		return key, nil, true // a type mismatch: the decoder reports it
	}
	var fold *reflect.StructField
	var foldName string
	for _, f := range reflect.VisibleFields(t) {
		n, ok := jsonName(f)
		switch {
		case !ok:
		case n == key:
			return n, f.Type, true
		case fold == nil && strings.EqualFold(n, key):
			fold, foldName = &f, n
		}
	}
	if fold != nil {
		return foldName, fold.Type, true
	}
	return key, nil, false
}

// jsonName is the name encoding/json gives field f; false if f is not
// decoded (unexported, "-", or an embedded struct whose fields are
// promoted).
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() && !f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if f.Anonymous && name == "" && indirect(f.Type) != nil && indirect(f.Type).Kind() == reflect.Struct {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, f.IsExported()
}
