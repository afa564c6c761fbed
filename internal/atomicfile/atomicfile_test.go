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

// TestTemporariesNeverOutliveTheCommand: AbortAll (what an interrupt
// runs) removes every unpublished temporary; NewDir removes those a dead
// process left and keeps a live one's.
func TestTemporariesNeverOutliveTheCommand(t *testing.T) {
	dir := t.TempDir()
	d, _ := NewDir(dir)
	w, _ := d.Create("summary.csv")
	w.WriteString("partial")
	f, _ := Create(filepath.Join(dir, "decisions.jsonl"))
	f.WriteString("partial")
	AbortAll()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("after AbortAll: %v", entries)
	}
	if _, err := Create(filepath.Join(dir, "late.csv")); err == nil {
		t.Error("a temporary was created after AbortAll")
	}
	live.Lock()
	live.aborting = false // the rest of this test binary writes again
	live.Unlock()
	// A dead process's leftover (pid 1<<22 + 1 is above Linux's pid limit)
	// and this process's own, still being written.
	dead := filepath.Join(dir, ".summary.csv.tmp-4194305-0")
	os.WriteFile(dead, []byte("x"), 0o644)
	g, _ := Create(filepath.Join(dir, "mine.csv"))
	RemoveStale(dir)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Error("a dead process's temporary survived NewDir")
	}
	if err := g.Commit(); err != nil {
		t.Errorf("a live temporary was removed: %v", err)
	}
}
