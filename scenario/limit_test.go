package scenario

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

// TestScenarioFileIsBounded: a scenario file is read to at most
// inputerr.MaxSmallFile bytes; past that the error names the file
// (/dev/zero never ends: an unbounded read would exhaust memory).
func TestScenarioFileIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	_, err := Load("/dev/zero", Defaults())
	var ie *inputerr.Error
	if err == nil || !errors.As(err, &ie) || ie.File != "/dev/zero" || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("Load(/dev/zero) = %v, want an error naming the file and its limit", err)
	}
}
