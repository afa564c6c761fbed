package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBuildCarriesNoRPC: the CLI's build graph has no gRPC, protobuf or
// Arrow Flight (arrow-go's pqarrow pulled them in, and a cold first build
// compiled them for minutes; report/parquet writes with parquet/file).
func TestBuildCarriesNoRPC(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 50 {
		t.Fatalf("go list -deps listed %d packages: the listing is broken", len(pkgs))
	}
	for _, p := range pkgs {
		for _, banned := range []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/apache/arrow-go/v18/arrow/flight", "github.com/apache/arrow-go/v18/parquet/pqarrow"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("the CLI's build depends on %s", p)
			}
		}
	}
}
