// Package inputerr is the one positioned input error of routesim's
// readers (traces, scenario files, calibration specs and exports):
// "file:line: field: problem", so a user can go straight to the mistake.
package inputerr

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a problem with an input file at a line (0 = the whole file)
// and a field ("" = the line as a whole).
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return pos + ": " + e.Msg
	}
	return pos + ": " + e.Field + ": " + e.Msg
}

// Errorf builds an *Error with a formatted message.
func Errorf(file string, line int, field, format string, a ...any) *Error {
	return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// FieldError is a problem with one setting of a run description, named by
// its field (the JSON name, dotted inside a section: "max_num_seqs",
// "synthetic.rate"). Msg follows the name ("0 must be ≥ 1"); a message
// that starts with ':' is joined without a space. Other settings a message
// mentions are written in backquotes (`gpu_memory_utilization`), so a front
// end that names settings differently — the CLI's flags — can rename every
// one (Render).
type FieldError struct {
	Field string
	Msg   string
	Err   error // the cause, when the problem is another error (Wrap)
}

// Wrap names field as the setting whose value caused err: "field: err".
func Wrap(field string, err error) *FieldError {
	return &FieldError{Field: field, Msg: ": " + err.Error(), Err: err}
}

// Unwrap returns the cause, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// Fieldf builds a *FieldError with a formatted message.
func Fieldf(field, format string, a ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

func (e *FieldError) Error() string { return render(e, nil, func(f string) string { return f }) }

// mentions replaces every `field` in msg by name(field).
func mentions(msg string, name func(string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(msg[i+1:], '`')
		if j < 0 {
			break
		}
		b.WriteString(msg[:i])
		b.WriteString(name(msg[i+1 : i+1+j]))
		msg = msg[i+j+2:]
	}
	b.WriteString(msg)
	return b.String()
}

// Render is err's text with every setting named by name(field): through
// errors.Join lists (one line each) and through wrapping whose text ends
// with the wrapped error's; in other errors, the settings they mention in
// backquotes.
func Render(err error, name func(field string) string) string {
	return render(err, nil, name)
}

// Mentions says whether err names a setting Render would rename: a
// FieldError, or a `field` mentioned in backquotes.
func Mentions(err error) bool {
	var fe *FieldError
	return err != nil && (errors.As(err, &fe) || strings.Count(err.Error(), "`") >= 2)
}

// sameJoin says err's text is its parts' texts joined by newlines, as
// errors.Join writes it.
func sameJoin(err error, parts []error) bool {
	var t []string
	for _, p := range parts {
		t = append(t, p.Error())
	}
	return strings.Join(t, "\n") == err.Error()
}
