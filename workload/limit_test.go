package workload

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

// writeGzip writes n copies of line, gzipped, to dir/name.
func writeGzip(t *testing.T, dir, name, line string, n int) string {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	chunk := []byte(strings.Repeat(line, max(1, (1<<20)/len(line))))
	per := len(chunk) / len(line)
	for left := n; left > 0; left -= per {
		zw.Write(chunk[:min(left, per)*len(line)])
	}
	zw.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantBound checks that err is an *inputerr.Error naming file and
// saying what bound it hit.
func wantBound(t *testing.T, what string, err error, file, bound string) {
	t.Helper()
	var ie *inputerr.Error
	if err == nil || !errors.As(err, &ie) || ie.File != file || !strings.Contains(err.Error(), bound) {
		t.Errorf("%s: %v, want an error naming %s and %q", what, err, file, bound)
	}
}

// TestTraceLinesAreBounded: a gzip bomb of blank lines stops at
// MaxRequests lines with an error naming the file, in both Read and
// Stream (this one is 50 MB from 50 KB; unbounded, a larger one would
// run for minutes and end as "no requests").
func TestTraceLinesAreBounded(t *testing.T) {
	p := writeGzip(t, t.TempDir(), "blank.jsonl.gz", "\n", MaxRequests+1)
	_, err := Read(p, Filter{})
	wantBound(t, "Read", err, p, "more than 50000000 lines")
	_, err = Stream(p, Filter{}, 64)
	wantBound(t, "Stream", err, p, "more than 50000000 lines")
}

// TestTraceBytesAreBounded: what a trace yields, decompressed, is
// bounded: past the limit the read fails naming the file, whether the
// bytes are blank lines, padding inside lines or valid requests.
func TestTraceBytesAreBounded(t *testing.T) {
	dir := t.TempDir()
	req := `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}` + "\n"
	for _, tc := range []struct {
		name, line string
		requests   bool
	}{
		{"spaces.jsonl.gz", strings.Repeat(" ", 1000) + "\n", false},
		{"requests.jsonl.gz", req, true},
		{"padded.jsonl.gz", strings.TrimSuffix(req, "}\n") + `, "pad": "` + strings.Repeat("x", 4000) + `"}` + "\n", true},
	} {
		p := writeGzip(t, dir, tc.name, tc.line, 1000)
		r, name, closeFn, err := openTrace(p, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readMooncake(r, name, nil)
		closeFn()
		wantBound(t, tc.name, err, p, "larger than 65536 bytes")
		if _, err := Read(p, Filter{}); tc.requests && err != nil { // the real limit lets it through
			t.Errorf("%s under MaxTraceBytes: %v", tc.name, err)
		}
	}
}
