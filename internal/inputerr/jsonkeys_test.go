package inputerr

import (
	"strings"
	"testing"
)

func TestScanJSONKeys(t *testing.T) {
	doc := "{\n \"a\": 1,\n \"list\": [{\"x\": 1}, 2],\n \"obj\": {\n  \"b\": {\"c\": true}\n },\n \"d\": \"s\"\n}\n"
	k, err := ScanJSONKeys("f.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]int{"a": 2, "list": 3, "obj": 4, "obj.b": 5, "obj.b.c": 5, "d": 7, "list[].x": 0, "x": 0} {
		if got := k.Line(p); got != want {
			t.Errorf("Line(%q) = %d, want %d", p, got, want)
		}
	}
	if strings.Join(k.Top, ",") != "a,list,obj,d" {
		t.Errorf("Top = %v", k.Top)
	}
	for _, tc := range []struct{ doc, want string }{
		{"{\n \"a\": 1,\n \"a\": 2\n}", "f.json:3: a: given twice in one object"},
		{"{\n \"o\": {\"b\": 1, \"b\": 2}\n}", "f.json:2: o.b: given twice"},
		{"{\n \"a\": 1,\n", "f.json:3: malformed JSON: the document ends early"},
		{"{\n \"a\": 1,\n \"b\": NaN\n}", "f.json:3: malformed JSON: invalid character 'N'"},
		{"", "f.json:1: malformed JSON: the document ends early"},
		{"[1]", "f.json:1: want a JSON object"},
		{"{} {}", "f.json:1: more than one JSON value"},
	} {
		if _, err := ScanJSONKeys("f.json", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.want)
		}
	}
}
