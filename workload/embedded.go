package workload

import (
	"embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"

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
	r, name, closeFn, err := openTrace(nameOrPath, MaxTraceBytes)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return readMooncake(r, name, sel)
}

// openTrace opens a trace by embedded name or path for reading, through a
// gzip reader if it is compressed; name labels its errors. Reading past
// limit bytes (decompressed) fails with an error naming the trace.
func openTrace(nameOrPath string, limit int64) (r io.Reader, name string, closeFn func() error, err error) {
	var f io.ReadCloser
	gz := strings.HasSuffix(nameOrPath, ".gz")
	name = nameOrPath
	if file, ok := embedded[nameOrPath]; ok {
		if f, err = traceFS.Open(file); err != nil {
			panic("workload: embedded trace missing: " + err.Error())
		}
		name, gz = "embedded:"+nameOrPath, true
	} else if f, err = os.Open(nameOrPath); err != nil {
		return nil, "", nil, fmt.Errorf("trace %q: %w (embedded traces: %s)", nameOrPath, err, strings.Join(EmbeddedNames(), ", "))
	}
	if !gz {
		return inputerr.Reader(f, name, limit), name, f.Close, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, "", nil, &inputerr.Error{File: name, Msg: "not a gzip file: " + err.Error()}
	}
	// The bound counts decompressed bytes: a small gzip file can expand
	// a thousandfold.
	return inputerr.Reader(zr, name, limit), name, func() error {
		zr.Close()
		return f.Close()
	}, nil
}

// IsEmbedded says whether name is one of the embedded traces.
func IsEmbedded(name string) bool {
	_, ok := embedded[name]
	return ok
}
