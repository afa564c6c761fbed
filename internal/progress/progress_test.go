package progress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock is a fake time source the test advances.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLineThrottlesAndErases(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	l := newLine(&b, c.now)
	l.Show("early %d", 1) // younger than Delay: nothing
	c.t = c.t.Add(Delay)
	l.Show("a long first text")
	l.Show("dropped") // within Every of the last draw
	c.t = c.t.Add(Every)
	l.Show("short")
	l.Done()
	l.Done() // erasing twice writes nothing more
	want := "\ra long first text" + "\rshort" + strings.Repeat(" ", 12) + strings.Repeat("\b", 12) + "\r" + strings.Repeat(" ", 5) + "\r"
	if b.String() != want {
		t.Errorf("wrote %q\nwant  %q", b.String(), want)
	}
}

func TestNilLineDoesNothing(t *testing.T) {
	var l *Line
	l.Show("x")
	l.Done()
	if l.Elapsed() != 0 {
		t.Error("a nil line has an age")
	}
}

// TestNoLineOffATerminal: buffers, files, pipes and the null device get
// no progress line.
func TestNoLineOffATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "file": f, "pipe": w, "null device": null} {
		if l := New(out); l != nil {
			t.Errorf("%s: got a progress line", name)
		}
	}
}
