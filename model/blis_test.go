package model

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateBLIS = flag.Bool("update", false, "rewrite the shipped *.blis profiles from data/blis/fits.json")

// TestBLISProfilesReproduce: every shipped *.blis profile is, byte for
// byte, what BLISProfile makes of the copied BLIS table
// (go test ./model -run TestBLISProfilesReproduce -update rewrites them).
func TestBLISProfilesReproduce(t *testing.T) {
	fits, err := ReadBLISFits(filepath.Join("data", "blis", "fits.json"))
	if err != nil {
		t.Fatal(err)
	}
	shipped, _ := filepath.Glob(filepath.Join("data", "profiles", "*-blis.json"))
	if len(fits.Fits) != len(shipped) || len(shipped) == 0 {
		t.Fatalf("%d fits for %d shipped BLIS profiles", len(fits.Fits), len(shipped))
	}
	for _, f := range fits.Fits {
		p, err := BLISProfile(f, fits.Source, DefaultCatalogue())
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("data", "profiles", profileFile(p.Name))
		if *updateBLIS {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (a fit without its shipped profile)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s does not reproduce from data/blis/fits.json:\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
		}
	}
}

// profileFile is a profile's file name: its name with '.' as '-'.
func profileFile(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c == '.' && !(i > 0 && b[i-1] >= '0' && b[i-1] <= '9' && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9') {
			b[i] = '-'
		}
	}
	return string(b) + ".json"
}
