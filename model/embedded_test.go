package model

import (
	"bytes"
	"encoding/json"
	"path"
	"reflect"
	"testing"
)

// TestEmbeddedDecodeAgrees: every embedded profile and the catalogue
// decode to the same values with goccy/go-json (readEmbedded, what runs
// use) and with encoding/json (what user files go through).
func TestEmbeddedDecodeAgrees(t *testing.T) {
	entries, err := profileFS.ReadDir("data/profiles")
	if err != nil || len(entries) == 0 {
		t.Fatalf("embedded profiles: %v (%d files)", err, len(entries))
	}
	for _, e := range entries {
		name := path.Join("data/profiles", e.Name())
		data, err := profileFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := readEmbedded[Profile](data, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		std, err := ReadProfile(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Errorf("%s decodes differently with goccy/go-json and encoding/json", name)
		}
	}
	fast, err := readEmbedded[Catalogue](catalogueJSON, false)
	if err != nil {
		t.Fatal(err)
	}
	var std Catalogue
	if err := json.Unmarshal(catalogueJSON, &std); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, &std) {
		t.Error("the catalogue decodes differently with goccy/go-json and encoding/json")
	}
	if _, err := readEmbedded[Profile]([]byte(`{"name":"x","unknown_field":1}`), true); err == nil {
		t.Error("readEmbedded accepted an unknown field")
	}
}
