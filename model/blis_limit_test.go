package model

import (
	"os"
	"strings"
	"testing"
)

// TestReadBLISFitsIsBounded: the BLIS table is read to at most
// inputerr.MaxSmallFile bytes, with an error naming the file past it.
func TestReadBLISFitsIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	_, err := ReadBLISFits("/dev/zero")
	if err == nil || !strings.HasPrefix(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("ReadBLISFits(/dev/zero) = %v, want an error naming the file and its limit", err)
	}
}
