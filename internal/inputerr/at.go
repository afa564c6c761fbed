package inputerr

import (
	"fmt"
	"strings"
)

// RenderAt is Render for settings some of which came from a file: a
// field error whose field at places in a file (line > 0) reads
// "file:line: field: problem"; every other setting, and every setting a
// message mentions, is named by name. A front end reading a settings file
// and flags (the CLI's --scenario) names each setting where the user gave
// it.
func RenderAt(err error, at func(field string) (file string, line int), name func(field string) string) string {
	return render(err, at, name)
}

func render(err error, at func(string) (string, int), name func(string) string) string {
	switch e := err.(type) {
	case nil:
		return ""
	case *FieldError:
		if at != nil {
			if file, line := at(e.Field); line > 0 {
				pos := fmt.Sprintf("%s:%d: %s: ", file, line, e.Field)
				if e.Err != nil {
					return pos + render(e.Err, at, name)
				}
				return pos + strings.TrimSpace(strings.TrimPrefix(mentions(e.Msg, name), ":"))
			}
		}
		if e.Err != nil {
			return name(e.Field) + ": " + render(e.Err, at, name)
		}
		msg := mentions(e.Msg, name)
		if strings.HasPrefix(msg, ":") {
			return name(e.Field) + msg
		}
		return name(e.Field) + " " + msg
	case interface{ Unwrap() []error }:
		var parts []string
		for _, x := range e.Unwrap() {
			parts = append(parts, render(x, at, name))
		}
		if sameJoin(err, e.Unwrap()) {
			return strings.Join(parts, "\n")
		}
		return err.Error()
	case interface{ Unwrap() error }:
		inner := e.Unwrap()
		if inner != nil {
			text, in := err.Error(), inner.Error()
			if strings.HasSuffix(text, in) {
				return text[:len(text)-len(in)] + render(inner, at, name)
			}
		}
	}
	return mentions(err.Error(), name)
}
