package workload

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

//go:embed data/*.jsonl.gz
var traceFS embed.FS

// Embedded names the traces shipped in the binary, with their files.
var embedded = map[string]string{
	"conversation": "data/conversation.jsonl.gz",
	"arxiv-window": "data/arxiv_window.jsonl.gz",
}

// EmbeddedNames lists the names Open accepts besides file paths.
func EmbeddedNames() []string {
	names := make([]string, 0, len(embedded))
	for n := range embedded {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open reads a trace by embedded name ("conversation", "arxiv-window") or
// by path; a path ending in .gz is decompressed.
func Open(nameOrPath string) (*Trace, error) {
	return open(nameOrPath, nil)
}

// Read reads the requests of a trace that f selects, re-timed and
// repeated as f says (Trace.Apply on the whole trace gives the same). It
// stops reading once f's First requests are kept, so a short window of a
// long trace costs what the window costs.
func Read(nameOrPath string, f Filter) (*Trace, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	t, err := open(nameOrPath, f.selector())
	if err != nil {
		return nil, err
	}
	return t.finish(f)
}

func open(nameOrPath string, sel func(Request) (bool, bool)) (*Trace, error) {
	if file, ok := embedded[nameOrPath]; ok {
		f, err := traceFS.Open(file)
		if err != nil {
			panic("workload: embedded trace missing: " + err.Error())
		}
		defer f.Close()
		return readMaybeGzip(f, "embedded:"+nameOrPath, true, sel)
	}
	f, err := os.Open(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("trace %q: %w (embedded traces: %s)", nameOrPath, err, strings.Join(EmbeddedNames(), ", "))
	}
	defer f.Close()
	return readMaybeGzip(f, nameOrPath, strings.HasSuffix(nameOrPath, ".gz"), sel)
}

func readMaybeGzip(r io.Reader, name string, gz bool, sel func(Request) (bool, bool)) (*Trace, error) {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, &inputerr.Error{File: name, Msg: "not a gzip file: " + err.Error()}
		}
		defer zr.Close()
		r = zr
	}
	return readMooncake(r, name, sel)
}

// IsEmbedded says whether name is one of the embedded traces.
func IsEmbedded(name string) bool {
	_, ok := embedded[name]
	return ok
}
