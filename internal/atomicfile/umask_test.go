//go:build unix

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModeFollowsUmask: files are created 0666 less the umask (0644 under
// the usual 022), not 0600.
func TestModeFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "a.csv"), func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	d, _ := NewDir(dir)
	w, _ := d.Create("b.csv")
	w.WriteString("y")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.csv", "b.csv"} {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v; want -rw-r--r--", n, st.Mode(), err)
		}
	}
}
