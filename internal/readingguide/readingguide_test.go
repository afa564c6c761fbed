package readingguide

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestUnnamed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("doc.go", "// Package p: a.go does A; fam*.go the family.\npackage p\n")
	for _, f := range []string{"a.go", "b.go", "fam1.go", "famx.go", "a_test.go"} {
		write(f, "package p\n")
	}
	got, err := Unnamed(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b.go"}; !slices.Equal(got, want) {
		t.Errorf("Unnamed = %v, want %v", got, want)
	}
	write("doc.go", "package p\n")
	if _, err := Unnamed(dir); err == nil {
		t.Error("a doc.go without a package comment was accepted")
	}
}
