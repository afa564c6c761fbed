package inputerr

import (
	"fmt"
	"io"
)

// Limits on the inputs routesim reads whole. A file over its limit is an
// error naming the file, never silently truncated.
const (
	// MaxSmallFile bounds a settings file: a scenario, a profile, a GPU or
	// model description, a calibration spec, a manifest or a point file.
	MaxSmallFile = 64 << 20
	// MaxDataFile bounds a measurement file read whole: an AIPerf or
	// ML.ENERGY export, an NVML sample log.
	MaxDataFile = 256 << 20
)

// ReadAll reads r to its end, at most limit bytes. Past the limit it
// returns an *Error naming file: "file: larger than N MiB …". Use it for
// every input read whole (os.ReadFile has no bound: /dev/zero never ends).
func ReadAll(r io.Reader, file string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, Errorf(file, 0, "", "%v", err)
	}
	if int64(len(b)) > limit {
		return nil, Errorf(file, 0, "", "larger than %s, the most routesim reads of such a file (is it the right file?)", size(limit))
	}
	return b, nil
}

// Reader wraps r so that reading past limit bytes fails with an *Error
// naming file instead of ending early: a streaming decoder over it sees an
// error, never a silently truncated file.
func Reader(r io.Reader, file string, limit int64) io.Reader {
	return &limited{r: r, file: file, left: limit, limit: limit}
}

type limited struct {
	r     io.Reader
	file  string
	left  int64
	limit int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, Errorf(l.file, 0, "", "larger than %s, the most routesim reads of such a file (is it the right file?)", size(l.limit))
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		n += int(l.left) // hand over only the bytes within the limit
		return n, Errorf(l.file, 0, "", "larger than %s, the most routesim reads of such a file (is it the right file?)", size(l.limit))
	}
	return n, err
}

// size is a byte count for a message: "64 MiB".
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
