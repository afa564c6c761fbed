package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirPublishesOnlyOnCommit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "new", "out")
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := d.Create("a.txt")
	w.WriteString("hello")
	if _, err := os.Stat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Fatal("a.txt visible before Commit")
	}
	d.Abort()
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("Abort left the directory it created")
	}

	d, _ = NewDir(root)
	w, _ = d.Create("a.txt")
	w.WriteString("hello")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "a.txt" {
		t.Fatalf("after Commit: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "hello" {
		t.Errorf("content %q", b)
	}
}
