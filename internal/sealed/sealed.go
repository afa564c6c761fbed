// Package sealed writes JSON files that carry a digest of their own
// content, and reads them back only if that content is unchanged: the
// files routesim writes and later trusts (a sweep's points, manifest and
// shard record) cannot be edited, truncated or swapped for another
// version's without the reader noticing.
//
// A sealed file is a JSON object whose first member is
// "content_digest": "sha256:HEX", the SHA-256 of the canonical encoding of
// the rest: encoding/json's compact encoding of the value written. Unmarshal
// decodes the file, encodes what it decoded the same way and compares, so
// the digest covers exactly what the reader uses: whitespace, member order,
// unknown members and the file's indentation do not matter; every value
// that is used does. The digest detects accidents and edits, not an
// adversary (who can recompute it): readers still check what they read.
package sealed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/routesim/routesim/internal/atomicfile"
)

// Field is the member that holds the digest.
const Field = "content_digest"

// Errors Unmarshal wraps (after the file's name).
var (
	// ErrNoDigest: the file has no content_digest: not written by this
	// version of routesim.
	ErrNoDigest = errors.New("no content_digest: not written by this routesim (an older version's, or made by hand)")
	// ErrMismatch: the content differs from what was written.
	ErrMismatch = errors.New("content does not match its content_digest: edited or damaged after routesim wrote it")
)

// Marshal encodes v, which must encode as a JSON object, as one line (with
// a final newline) with its digest first. It fails if v's encoding would
// not decode to a value that encodes the same (such a file could never be
// read back).
func Marshal(v any) ([]byte, error) {
	body, err := canonical(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"` + Field + `":"` + digest(body) + `"`)
	if len(body) > 2 {
		b.WriteByte(',')
	}
	b.Write(body[1:])
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// MarshalIndent is Marshal indented by two spaces, as routesim writes the
// JSON files people read.
func MarshalIndent(v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSuffix(b, []byte("\n")), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// canonical is v's compact encoding, checked to survive a decode and
// re-encode unchanged.
func canonical(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("sealed: %T does not encode as a JSON object", v)
	}
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	back := reflect.New(t)
	if err := json.Unmarshal(body, back.Interface()); err != nil {
		return nil, fmt.Errorf("sealed: %T does not decode its own encoding: %v", v, err)
	}
	again, err := json.Marshal(back.Elem().Interface())
	if err != nil || !bytes.Equal(again, body) {
		return nil, fmt.Errorf("sealed: %T does not survive a JSON round trip, so its digest could never be checked", v)
	}
	return body, nil
}

func digest(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Unmarshal decodes a sealed file's data into v (a pointer to a zero
// value) and checks its digest; errors start with file.
func Unmarshal(data []byte, file string, v any) error {
	var probe struct {
		Digest *string `json:"content_digest"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || len(bytes.TrimSpace(data)) == 0 {
			return fmt.Errorf("%s: not valid JSON (%v): truncated or damaged", file, errMsg(err, data))
		}
		return fmt.Errorf("%s: not valid JSON for routesim (not an object with a string %s): %v", file, Field, err)
	}
	if probe.Digest == nil {
		return fmt.Errorf("%s: %w", file, ErrNoDigest)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if digest(body) != *probe.Digest {
		return fmt.Errorf("%s: %w", file, ErrMismatch)
	}
	return nil
}

// errMsg is a decode error's text ("unexpected end of JSON input" for an
// empty file too).
func errMsg(err error, data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return "empty file"
	}
	return err.Error()
}

// WriteFile writes v to path as an indented sealed file (MarshalIndent),
// atomically: a reader sees the old file or the whole new one.
func WriteFile(path string, v any) error {
	b, err := MarshalIndent(v)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}
