package calib

import (
	"testing"

	"github.com/routesim/routesim/internal/readingguide"
)

// TestReadingGuideNamesEveryFile: doc.go's reading guide names every
// source file of the package (go doc is where a reader starts).
func TestReadingGuideNamesEveryFile(t *testing.T) {
	missing, err := readingguide.Unnamed(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range missing {
		t.Errorf("%s is not named in doc.go's reading guide", f)
	}
}
