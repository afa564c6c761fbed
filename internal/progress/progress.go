// Package progress draws a one-line progress display on a terminal: only
// when the output is a terminal (never into a file or a pipe, never in
// tests, which write to buffers), redrawn at most every Every, shown only
// once a run has taken longer than Delay, and erased when done, so the
// terminal keeps only the command's own output.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Every is the least time between two redraws; Delay is how long a run
// goes before the line first shows (a short run shows none).
const (
	Every = 200 * time.Millisecond
	Delay = time.Second
)

// Line is a progress line on a terminal. A nil *Line does nothing, so
// callers need not check whether the output is a terminal. Its methods
// are safe for concurrent use.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	last  time.Time
	shown int // runes on screen
	now   func() time.Time
}

// New returns a Line on w if w is a terminal, else nil.
func New(w io.Writer) *Line {
	if !IsTerminal(w) {
		return nil
	}
	return newLine(w, time.Now)
}

func newLine(w io.Writer, now func() time.Time) *Line {
	return &Line{w: w, start: now(), now: now}
}

// IsTerminal says whether w is a terminal: an *os.File on a character
// device other than the null device (os.Stat's mode, which needs no
// terminal library; /dev/null is a character device too).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

// Elapsed is the time since the Line was made (0 for nil).
func (l *Line) Elapsed() time.Duration {
	if l == nil {
		return 0
	}
	return l.now().Sub(l.start)
}

// Show redraws the line with the formatted text, unless it was drawn less
// than Every ago or the run is younger than Delay.
func (l *Line) Show(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	if t.Sub(l.start) < Delay || t.Sub(l.last) < Every {
		return
	}
	l.last = t
	text := fmt.Sprintf(format, args...)
	n := utf8.RuneCountInString(text)
	pad := ""
	if n < l.shown {
		pad = strings.Repeat(" ", l.shown-n) + strings.Repeat("\b", l.shown-n)
	}
	fmt.Fprintf(l.w, "\r%s%s", text, pad)
	l.shown = n
}

// Done erases the line (if one was drawn) and returns the cursor to the
// start of it.
func (l *Line) Done() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown > 0 {
		fmt.Fprintf(l.w, "\r%s\r", strings.Repeat(" ", l.shown))
		l.shown = 0
	}
}
