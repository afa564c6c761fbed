package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

// TestProfilesLists: the built-in listing names every embedded profile and
// the fallbacks; --profile lists the given files only, with their implied
// figures; bad files and stray arguments are errors naming them.
func TestProfilesLists(t *testing.T) {
	out, _, err := runCLI("profiles")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range model.BuiltinProfiles() {
		if !strings.Contains(out, p.Name) {
			t.Errorf("built-in profile %s not listed", p.Name)
		}
	}
	if !strings.Contains(out, "runs uncalibrated") {
		t.Error("fallback section missing")
	}
	// The TensorRT-LLM fit serves --engine trtllm only: vLLM on its
	// deployment still falls back, and the listing says so.
	if !strings.Contains(out, "H100-SXM5-80GB/Llama-3.1-70B/tp2/fp8") || !strings.Contains(out, "--engine trtllm") {
		t.Error("the TensorRT-LLM profile hid its deployment's vLLM fallback, or is not explained")
	}

	const noisy = "../../testdata/profiles/noisy.json"
	out, _, err = runCLI("profiles", "--profile", noisy)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "A100") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 1 || !strings.Contains(rows[0], "test.noisy") || !strings.Contains(rows[0], "%") {
		t.Errorf("--profile listing rows %q, want one row for test.noisy with implied percentages", rows)
	}
	if strings.Contains(out, "runs uncalibrated") || strings.Contains(out, model.BuiltinProfiles()[0].Name) {
		t.Error("--profile also listed the built-in profiles or the fallbacks")
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"profiles", "--profile", "/no/such/profile.json"}, 1, "/no/such/profile.json"},
		{[]string{"profiles", "--profile", bad}, 1, "bad.json"},
		{[]string{"profiles", "stray"}, 2, `"stray"`},
		{[]string{"profiles", "--profile"}, 2, "profile"},
	} {
		_, _, err := runCLI(tc.args...)
		if err == nil || exitCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v (exit %d), want exit %d naming %s", tc.args, err, exitCode(err), tc.code, tc.want)
		}
	}
}

// TestProfilesSaysEachDefaultsKind: the listing marks BLIS's linear fits
// as comparisons (--profile blis), never a default; every default among
// the built-in rows is a measured kernel profile; every other deployment
// names its default's kind (transfer, kernel prior or roofline), and those
// with a BLIS fit say it is there for comparison.
func TestProfilesSaysEachDefaultsKind(t *testing.T) {
	out, _, err := runCLI("profiles")
	if err != nil {
		t.Fatal(err)
	}
	blis := 0
	for _, p := range model.BuiltinProfiles() {
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasSuffix(l, " "+p.Name) {
				row = l
			}
		}
		switch {
		case row == "":
			t.Errorf("%s: no row", p.Name)
		case p.IsBLIS():
			blis++
			if !strings.Contains(row, " linear fit ") || !strings.Contains(row, " --profile blis ") {
				t.Errorf("BLIS fit's row does not say it is a linear fit for --profile blis:\n%s", row)
			}
		case strings.Contains(row, " default "):
			if !strings.Contains(row, " measured ") || !strings.Contains(row, " kernel ") {
				t.Errorf("a default that is not a measured kernel profile:\n%s", row)
			}
		}
	}
	if blis != 4 {
		t.Errorf("%d BLIS rows, want 4", blis)
	}
	_, rest, ok := strings.Cut(out, "runs uncalibrated")
	if !ok {
		t.Fatal("fallback section missing")
	}
	kinds := map[string]int{}
	for _, l := range strings.Split(rest, "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		kind := f[1]
		if kind == "kernel" {
			kind += " " + f[2]
		}
		kinds[kind]++
		if kind != "transfer" && kind != "kernel prior" && kind != "roofline" {
			t.Errorf("fallback line of kind %q: %s", kind, l)
		}
	}
	if kinds["transfer"] == 0 || kinds["kernel prior"] == 0 {
		t.Errorf("fallback kinds %v: want transfers and kernel priors", kinds)
	}
	for _, want := range []string{
		"A100-SXM4-80GB/Llama-3.1-8B/tp1/bf16   kernel prior  vidur-A100-SXM4-80GB-Meta-Llama-3-8B; comparison: --profile blis (a100-sxm4-80gb.llama-3.1-8b.tp1.blis)",
		"H100-SXM5-80GB/Llama-3.1-8B/tp2/bf16   transfer      of h100-sxm5-80gb.llama-3.1-8b.tp1.mlenergy; comparison: --profile blis (h100-sxm5-80gb.llama-3.1-8b.tp2.blis)",
	} {
		if !strings.Contains(rest, want) {
			t.Errorf("fallback section lacks %q", want)
		}
	}
}

// TestProfilesListsNames: routesim profiles lists every GPU with its
// aliases and every model with its Hugging Face id, the names --gpu and
// --model take.
func TestProfilesListsNames(t *testing.T) {
	out, _, err := runCLI("profiles")
	if err != nil {
		t.Fatal(err)
	}
	cat := model.DefaultCatalogue()
	for _, g := range cat.GPUs {
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			if !strings.Contains(out, n) {
				t.Errorf("routesim profiles does not list %q", n)
			}
		}
	}
	for _, m := range cat.Models {
		if !strings.Contains(out, m.Name+" ("+m.HFID+")") {
			t.Errorf("routesim profiles does not list %s with its id %s", m.Name, m.HFID)
		}
	}
}
