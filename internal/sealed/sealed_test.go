package sealed

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type doc struct {
	Name   string             `json:"name"`
	Values []float64          `json:"values"`
	Map    map[string]float64 `json:"map"`
	Raw    json.RawMessage    `json:"raw,omitempty"`
}

func sample() doc {
	return doc{Name: "a<b>&c", Values: []float64{1, 0.1, -0, 1e-300, 12345678.9}, Map: map[string]float64{"z": 1, "a": 2}, Raw: json.RawMessage(`{"x": [1, 2]}`)}
}

// TestSealedFilesRoundTrip: what Marshal and MarshalIndent write reads back
// equal, with the digest first.
func TestSealedFilesRoundTrip(t *testing.T) {
	for name, marshal := range map[string]func(any) ([]byte, error){"compact": Marshal, "indented": MarshalIndent} {
		b, err := marshal(sample())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(bytes.TrimLeft(b, "{\n "), []byte(`"content_digest":`)) {
			t.Errorf("%s: digest is not the first member:\n%s", name, b)
		}
		var got doc
		if err := Unmarshal(b, "f.json", &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, _ := marshal(got)
		if !bytes.Equal(again, b) {
			t.Errorf("%s: re-sealing what was read gives other bytes:\n%s\n%s", name, b, again)
		}
	}
}

// TestSealedFilesRefuseEdits: any change to the content, a missing digest
// or a damaged file is an error naming the file.
func TestSealedFilesRefuseEdits(t *testing.T) {
	good, _ := MarshalIndent(sample())
	cases := map[string]struct {
		body []byte
		want string
	}{
		"edited value":    {bytes.Replace(good, []byte("12345678.9"), []byte("1.0"), 1), "does not match its content_digest"},
		"dropped member":  {bytes.Replace(good, []byte(`"name": "a\u003cb\u003e\u0026c",`), nil, 1), "does not match its content_digest"},
		"added member":    {bytes.Replace(good, []byte(`"name"`), []byte(`"extra": 1, "name"`), 1), ""},
		"no digest":       {[]byte(`{"name":"x"}`), "no content_digest"},
		"digest not hex":  {[]byte(`{"content_digest":"md5:1","name":"x"}`), "does not match its content_digest"},
		"truncated":       {good[:len(good)/2], "not valid JSON"},
		"empty":           {nil, "not valid JSON"},
		"not an object":   {[]byte(`[1,2]`), "not valid JSON"},
		"wrong type":      {bytes.Replace(good, []byte(`"values": [`), []byte(`"values": "x", "v": [`), 1), "f.json"},
		"duplicated name": {bytes.Replace(good, []byte(`"name"`), []byte(`"name": "other", "name"`), 1), ""},
	}
	for name, c := range cases {
		var got doc
		err := Unmarshal(c.body, "f.json", &got)
		if c.want == "" { // unknown or repeated members change nothing decoded
			if name == "duplicated name" && err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.json") {
			t.Errorf("%s: %v, want an error starting with f.json containing %q", name, err, c.want)
		}
	}
	var got doc
	edited := bytes.Replace(good, []byte(`"name": "a\u003cb\u003e\u0026c"`), []byte(`"name": "other"`), 1)
	if err := Unmarshal(edited, "f.json", &got); !errors.Is(err, ErrMismatch) {
		t.Errorf("an edited name: %v, want ErrMismatch", err)
	}
}

// TestMarshalRefusesWhatCannotReadBack: a value whose JSON does not decode
// to itself could never pass Unmarshal: Marshal says so instead of
// writing it.
func TestMarshalRefusesWhatCannotReadBack(t *testing.T) {
	if _, err := Marshal(map[string]any{"a": 1}); err != nil {
		t.Errorf("a map: %v", err)
	}
	if _, err := Marshal([]int{1}); err == nil {
		t.Error("a JSON array was sealed")
	}
}
