package inputerr

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAllLimit(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int64
		ok    bool
	}{
		{"", 4, true},
		{"abcd", 4, true},
		{"abcde", 4, false},
		{strings.Repeat("x", 100), 99, false},
	} {
		b, err := ReadAll(strings.NewReader(tc.in), "f.json", tc.limit)
		if tc.ok != (err == nil) {
			t.Fatalf("ReadAll(%d bytes, limit %d): err %v, want ok %v", len(tc.in), tc.limit, err, tc.ok)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "f.json" || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("error %q does not name the file and the limit", err)
			}
			continue
		}
		if string(b) != tc.in {
			t.Fatalf("ReadAll = %q, want %q", b, tc.in)
		}
	}
}

func TestReaderLimit(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int64
		ok    bool
	}{
		{"abcd", 4, true},
		{"abcde", 4, false},
		{"", 0, true},
		{"a", 0, false},
	} {
		// One byte at a time, and all at once: the limit holds either way.
		for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
			b, err := io.ReadAll(Reader(r, "f.jsonl", tc.limit))
			if tc.ok != (err == nil) {
				t.Fatalf("Reader(%q, %d): err %v, want ok %v", tc.in, tc.limit, err, tc.ok)
			}
			if int64(len(b)) > tc.limit {
				t.Fatalf("Reader(%q, %d) handed over %d bytes", tc.in, tc.limit, len(b))
			}
		}
	}
}
