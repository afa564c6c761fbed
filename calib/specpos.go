package calib

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// keyLines maps every key path of the JSON document b to the line where
// it is written: "options.prior_weight", "runs[0]" (the element's
// opening), "runs[0].setup.n". A document that is not valid JSON maps
// what precedes the fault.
func keyLines(b []byte) map[string]int {
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		path   string
		array  bool
		index  int
		expect bool // in an object, the next token is a key
	}
	var stack []frame
	line, at := 1, 0
	lineAt := func(off int64) int {
		for ; at < int(off) && at < len(b); at++ {
			if b[at] == '\n' {
				line++
			}
		}
		return line
	}
	// child is the path of the value about to be read in the top frame.
	child := func(key string) string {
		if len(stack) == 0 {
			return ""
		}
		top := &stack[len(stack)-1]
		if top.array {
			p := top.path + "[" + strconv.Itoa(top.index) + "]"
			top.index++
			return p
		}
		if top.path == "" {
			return key
		}
		return top.path + "." + key
	}
	var key string
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].expect {
			if k, ok := tok.(string); ok {
				key = k
				out[child(key)] = lineAt(dec.InputOffset())
				stack[n-1].expect = false
				continue
			}
			stack = stack[:n-1] // the object's closing brace
			if n := len(stack); n > 0 && !stack[n-1].array {
				stack[n-1].expect = true
			}
			continue
		}
		path := child(key)
		if len(stack) > 0 && stack[len(stack)-1].array {
			// An element starts after the separator the offset may still
			// point at: count to the token's end, then back over it.
			out[path] = lineAt(off + int64(len(b[off:])-len(bytes.TrimLeft(b[off:], ", \t\r\n"))))
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, frame{path: path, array: d == '[', expect: d == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		if n := len(stack); n > 0 && !stack[n-1].array {
			stack[n-1].expect = true
		}
	}
}

// lineOf is the line of path, or of its nearest enclosing key the file
// writes (0 = none: the whole file).
func lineOf(lines map[string]int, path string) int {
	for path != "" {
		if l, ok := lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// positioned turns every problem err lists into a file:line: field:
// problem error, the line being where the file writes the field.
func positioned(file string, lines map[string]int, err error) error {
	var out []error
	for _, e := range flatten(err) {
		var fe *inputerr.FieldError
		if !errors.As(e, &fe) || fe != e {
			out = append(out, &inputerr.Error{File: file, Msg: e.Error()})
			continue
		}
		out = append(out, &inputerr.Error{File: file, Line: lineOf(lines, fe.Field), Field: fe.Field, Msg: message(fe, nil)})
	}
	return errors.Join(out...)
}

// flatten lists the errors of an errors.Join tree.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// message is fe's problem without its field, the settings it mentions
// named by name (nil: as they are).
func message(fe *inputerr.FieldError, name func(string) string) string {
	return strings.TrimPrefix(strings.TrimPrefix(rest(fe, name), ":"), " ")
}

// rest is fe's text after its field's name: ": problem" for a wrapped
// error, " problem" otherwise.
func rest(fe *inputerr.FieldError, name func(string) string) string {
	if name == nil {
		name = func(f string) string { return f }
	}
	return strings.TrimPrefix(inputerr.Render(fe, name), name(fe.Field))
}

// under names every setting err mentions as a field of prefix ("runs[0].
// setup."): a run setup's problems as the spec's.
func under(prefix string, err error) []error {
	var out []error
	name := func(f string) string { return prefix + f }
	for _, e := range flatten(err) {
		var fe *inputerr.FieldError
		if errors.As(e, &fe) && fe == e {
			out = append(out, &inputerr.FieldError{Field: prefix + fe.Field, Msg: strings.TrimPrefix(rest(fe, name), " ")})
			continue
		}
		out = append(out, inputerr.Wrap(strings.TrimSuffix(prefix, "."), e))
	}
	return out
}
