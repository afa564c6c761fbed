package readingguide

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// TestEveryGuideNamesEveryFile: in every package of the module that has a
// doc.go (sim, model, calib, policy, …), its reading guide names every
// source file, so `go doc` tells a reader what each file is for.
func TestEveryGuideNamesEveryFile(t *testing.T) {
	root := filepath.Join("..", "..")
	guides := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n[0] == '.' || n == "testdata" || n == "data" || n == "notebooks") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		guides++
		dir := filepath.Dir(path)
		missing, err := Unnamed(dir)
		if err != nil {
			t.Error(err)
		}
		for _, f := range missing {
			t.Errorf("%s: %s is not named in doc.go's reading guide", dir, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"sim", "model", "calib"} { // the issue 38 set
		if _, err := Unnamed(filepath.Join(root, pkg)); err != nil {
			t.Errorf("%s: %v", pkg, err)
		}
	}
	if guides < 8 {
		t.Errorf("found %d doc.go files: the walk is broken", guides)
	}
}
